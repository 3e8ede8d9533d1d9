"""The warm server of ``softlookup check``: started by the first check, reused by the next, private, and optional.

Each test gets a private runtime folder of its own (``XDG_RUNTIME_DIR``), so
its server is its own; the server is told to exit at the end.
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from helpers import SOLUTIONS, make_submission, most, partly
from grader.warm import client, place, server

SOFTLOOKUP = [sys.executable, "-m", "grader.cli"]
BROKEN_SOFTMAX = "def softmax(x, axis=-1):\n    import numpy as np\n    e = np.exp(x)\n    return e / e.sum(axis=axis, keepdims=True)\n"


@pytest.fixture
def runtime():
    """A private runtime folder with a short name: a socket's path has at most 107 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="softlookup-test-"))
    yield folder
    shutil.rmtree(folder)


@pytest.fixture
def warm(runtime, monkeypatch):
    """An environment in which checks use a server of their own; yields a function that runs one."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("SOFTLOOKUP_SERVER_IDLE", "120")  # gone by itself even if the stop below fails
    monkeypatch.delenv("SOFTLOOKUP_NO_SERVER", raising=False)
    monkeypatch.setenv("COLUMNS", "100")

    def softlookup(*args, python=False, **env):
        """``softlookup ARGS`` (``python ARGS`` with ``python``), in this environment and ``env``."""
        command = [sys.executable] if python else SOFTLOOKUP
        return subprocess.run([*command, *map(str, args)], capture_output=True, text=True, timeout=600,
                              env={**os.environ, **env})

    yield softlookup
    try:
        client.request({"stop": True}, start=False)
    except (client.Unavailable, OSError, ValueError):
        pass


def served() -> dict:
    """The running server's pid and how many checks it has served."""
    return client.request({"status": True}, start=False)


def socket_file() -> list:
    return list(place.private_folder().glob("check-*.sock"))


def comparable(output: str) -> str:
    """A check's output without what changes from run to run: its time, and the note on results kept."""
    lines = [line for line in output.splitlines() if not line.startswith("Unchanged since your last check")]
    return re.sub(r"\(\d+\.\d s\)", "(time)", "\n".join(lines))


def test_the_first_check_starts_the_server_and_the_next_reuse_it(warm, tmp_path):
    folder = make_submission(tmp_path / "submission", {"softmax": BROKEN_SOFTMAX})
    args = ("check", folder, "--exercise", "softmax", "--exercise", "lookup")
    first = warm(*args)
    status = served()
    assert status["served"] == 1 and len(socket_file()) == 1
    second = warm(*args)
    assert served() == {"pid": status["pid"], "served": 2}
    assert "Unchanged since your last check, so not graded again: softmax.py, lookup.py" in second.stdout
    alone = warm(*args, SOFTLOOKUP_NO_SERVER="1")
    assert served()["served"] == 2  # that one did not ask the server
    assert first.returncode == second.returncode == alone.returncode == 1
    assert comparable(first.stdout) == comparable(second.stdout) == comparable(alone.stdout)
    assert re.search(partly("softmax"), alone.stdout) and "NaN" in alone.stdout  # the broken softmax is graded

    (folder / "softmax.py").write_text((SOLUTIONS / "softmax.py").read_text())
    fixed = warm(*args)
    assert fixed.returncode == 0 and "Unchanged" not in fixed.stdout  # lookup imports softmax: both graded again
    assert comparable(fixed.stdout) == comparable(warm(*args, SOFTLOOKUP_NO_SERVER="1").stdout)


def test_a_check_the_server_answers_imports_only_what_asking_takes(warm, tmp_path):
    """The learner's process of a served check is a Python start-up and a socket: it imports nothing that grading,
    parsing a command line (argparse) or starting a server (subprocess) would need."""
    folder = make_submission(tmp_path / "submission")
    warm("check", folder, "--exercise", "softmax")  # starts the server
    probe = ("import sys\nfrom grader.cli import main\ncode = main()\n"
             "print('heavy:', sorted(set(sys.modules) & {'numpy', 'pytest', 'torch', 'argparse', 'subprocess'}))")
    done = warm("-c", probe, "check", folder, "--exercise", "softmax", python=True)
    assert done.returncode == 0 and "heavy: []" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    assert served()["served"] == 2


@pytest.mark.parametrize("way", [("--no-server",), ()], ids=["option", "variable"])
def test_the_server_can_be_turned_off(warm, tmp_path, way):
    folder = make_submission(tmp_path / "submission")
    done = warm("check", folder, "--exercise", "softmax", *way, **({} if way else {"SOFTLOOKUP_NO_SERVER": "1"}))
    assert done.returncode == 0 and f"{most('softmax')}/{most('softmax')}" in done.stdout
    assert not socket_file()


def _open_to_others(folder):
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)


def _a_link(folder):
    real = folder.parent / "elsewhere"
    real.mkdir(mode=0o700)
    folder.symlink_to(real)


def _someone_elses(folder):
    folder.mkdir(mode=0o700)
    os.chown(folder, 65534, 65534)


@pytest.mark.parametrize("make", [_open_to_others, _a_link, _someone_elses], ids=["mode 755", "a link", "another uid"])
def test_a_folder_that_is_not_private_is_refused(warm, runtime, tmp_path, make):
    if make is _someone_elses and os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    folder = runtime / "softlookup"
    make(folder)
    assert place.private_folder() is None
    done = warm("check", make_submission(tmp_path / "submission"), "--exercise", "softmax")
    assert done.returncode == 0 and f"{most('softmax')}/{most('softmax')}" in done.stdout  # graded in-process instead
    assert not list(runtime.rglob("check-*"))


def test_a_peer_of_another_uid_is_refused_by_both_ends(monkeypatch):
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, theirs:
        assert place.same_user(ours)
        monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)
        assert not place.same_user(ours)
        assert server.WarmServer().serve(ours) is True  # nothing answered, not even the server's pid
        ours.close()
        assert theirs.recv(100) == b""


def test_an_idle_server_exits(warm, tmp_path):
    folder = make_submission(tmp_path / "submission")
    assert warm("check", folder, "--exercise", "softmax", SOFTLOOKUP_SERVER_IDLE="1").returncode == 0
    path = place.socket_path(place.private_folder(), place.kit_key())
    deadline = time.monotonic() + 120
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not path.exists()


def test_grade_never_uses_the_server(warm, runtime, tmp_path):
    make_submission(tmp_path / "class" / "ada")
    done = warm("grade", tmp_path / "class", "--out", tmp_path / "graded", "--exercise", "softmax")
    assert done.returncode == 0, done.stderr
    assert not (runtime / "softlookup").exists()


def test_a_changed_kit_has_another_key(tmp_path, monkeypatch):
    kit = tmp_path / "grader"
    (kit / "engine").mkdir(parents=True)
    (kit / "engine" / "verify.py").write_text("# a check\n")
    monkeypatch.setattr(place, "PACKAGE_DIR", kit)
    before = place.kit_key()
    (kit / "__pycache__").mkdir()
    (kit / "__pycache__" / "verify.cpython-311.pyc").write_bytes(b"compiled")
    assert place.kit_key() == before  # Python's caches are not the kit
    (kit / "engine" / "verify.py").write_text("# a check, edited\n")
    assert place.kit_key() != before


@pytest.mark.parametrize("argv", [["--watch"], ["--wat"], ["--no-server"], ["--no-se"]])
def test_watch_and_no_server_are_not_served(argv):
    assert server._declined(argv)


@pytest.mark.parametrize("failure", ["unreachable", "error"])
def test_a_server_that_fails_says_so_in_one_line(monkeypatch, capsys, failure):
    """The check then runs in this process (the same verdicts, slower): one line on stderr says so, so that
    neither a learner nor a test of the warm road takes it for a served check. A declined command line is the
    design, not a failure, and says nothing."""
    def failing(message, start=True):
        if failure == "unreachable":
            raise client.Unavailable("no server listens")
        return {"error": "RuntimeError: broken"}

    monkeypatch.delenv("SOFTLOOKUP_NO_SERVER", raising=False)
    monkeypatch.setattr(client, "request", failing)
    assert client.check(["assignments"]) is None
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(client.FALLBACK) and ("no server listens" in line or "RuntimeError: broken" in line)
    monkeypatch.setattr(client, "request", lambda message, start=True: {"declined": "its own process"})
    assert client.check(["assignments"]) is None and capsys.readouterr().err == ""
