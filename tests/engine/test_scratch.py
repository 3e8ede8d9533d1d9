"""What workers leave on disk (grader/engine/confinement/scratch.py): the judge's bound on a scratch folder, and its removal."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader.engine.confinement import scratch, system
from grader.engine.confinement.scratch import ScratchBound, remove_tree

NOBODY = 65534


def closed_tree(root: Path) -> Path:
    """What a hostile worker leaves: read-only files, in folders with every right taken off, nested."""
    inner = root / "closed" / "deeper"
    inner.mkdir(parents=True)
    for folder in (root, root / "closed", inner):
        (folder / "file").write_bytes(b"x" * 4096)
        os.chmod(folder / "file", 0)
    os.chmod(inner, 0)
    os.chmod(root / "closed", 0)
    os.chmod(root, 0)
    return root


@pytest.fixture
def open_parent():
    """A folder every user may pass through, for a tree that an unprivileged user owns."""
    parent = Path(tempfile.mkdtemp(prefix="scratch-test-", dir="/tmp"))
    os.chmod(parent, 0o777)
    yield parent
    remove_tree(parent)


def removed_by(uid: int, path: Path) -> bool:
    """Whether ``remove_tree(path)``, run by ``uid`` (a forked child), says it removed it and did."""
    child = os.fork()
    if child == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            os._exit(0 if remove_tree(path) and not os.path.lexists(path) else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to stand in for an unprivileged grader")
def test_an_unprivileged_grader_removes_what_its_worker_closed(open_parent):
    """As a user (Ubuntu 24.04, a pod), the grader owns its worker's files but has no right it did not keep."""
    tree = closed_tree(open_parent / "scratch-x")
    for path in [tree, *[Path(root) / name for root, folders, files in os.walk(tree) for name in folders + files]]:
        os.lchown(path, NOBODY, NOBODY)
    os.chmod(tree, 0)
    assert removed_by(NOBODY, tree)


def test_removing_what_is_gone_or_cannot_go_never_raises(tmp_path):
    assert remove_tree(tmp_path / "never-made")
    if os.geteuid() == 0:
        return  # root may remove anything
    stuck = tmp_path / "stuck"
    stuck.mkdir()
    (stuck / "file").write_text("x")
    os.chmod(tmp_path, 0o500)  # the parent is not ours to change: it stays, and says so
    try:
        assert remove_tree(stuck) is False
    finally:
        os.chmod(tmp_path, 0o700)


def finished_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", ""])
    process.wait()
    return process.pid


def test_a_later_run_removes_dead_runs_folders_and_never_a_live_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    me, started = os.getpid(), system.start_time(os.getpid())
    folders = {
        "dead": tmp_path / f"softlookup-{finished_pid()}-123-abc",
        "pid given to another process since": tmp_path / f"softlookup-{me}-{started - 1}-abc",
        "a dead run named the old way": tmp_path / f"softlookup-{finished_pid()}-servers-abc",
        "live": tmp_path / f"softlookup-{me}-{started}-abc",
        "live, named the old way": tmp_path / f"softlookup-{me}-abc",
        "not a run's": tmp_path / "softlookup-test-abc",
    }
    for folder in folders.values():
        folder.mkdir()
        closed_tree(folder / "scratch-1")
    scratch.remove_abandoned()
    left = {name for name, folder in folders.items() if folder.exists()}
    assert left == {"live", "live, named the old way", "not a run's"}
    assert (folders["live"] / "scratch-1").exists()  # nothing of a live run's is touched


def test_a_run_folder_names_its_process_and_start():
    folder = scratch.run_folder("servers")
    try:
        _, pid, started, kind, _ = folder.name.split("-", 4)
        assert (int(pid), int(started), kind) == (os.getpid(), system.start_time(os.getpid()), "servers")
    finally:
        remove_tree(folder)


# -- the judge's bound, where no tmpfs holds one ------------------------------------------------


def test_a_scratch_within_its_bound_passes(tmp_path):
    (tmp_path / "small").write_bytes(b"x" * 2**20)
    assert ScratchBound(tmp_path, None, max_bytes=4 * 2**20, max_files=10).exceeded() == ""


def test_bytes_past_the_bound_are_found_in_every_folder(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "large").write_bytes(b"x" * 5 * 2**20)
    said = ScratchBound(tmp_path, None, max_bytes=4 * 2**20, max_files=10).exceeded()
    assert "more than 4 MB" in said and "scratch folder" in said


def test_files_past_the_bound_are_counted(tmp_path):
    for number in range(20):
        (tmp_path / f"empty-{number}").touch()
    assert ScratchBound(tmp_path, None, max_bytes=2**30, max_files=10).exceeded()


def test_a_sparse_file_counts_what_it_takes_on_disk(tmp_path):
    with open(tmp_path / "sparse", "wb") as handle:
        handle.truncate(2**30)
    assert ScratchBound(tmp_path, None, max_bytes=2**20, max_files=10).exceeded() == ""


def test_a_closed_folder_is_measured_all_the_same(tmp_path):
    inner = tmp_path / "closed"
    inner.mkdir()
    (inner / "large").write_bytes(b"x" * 5 * 2**20)
    os.chmod(inner, 0)
    assert ScratchBound(tmp_path, None, max_bytes=4 * 2**20, max_files=10).exceeded()


HIDER = """
import os, sys
fd = os.open("hidden", os.O_CREAT | os.O_RDWR)
os.write(fd, b"x" * 5 * 2**20)
os.unlink("hidden")
print("held", flush=True)
sys.stdin.read()
"""


def test_files_held_open_with_their_names_removed_count(tmp_path):
    """Out of every listing, still on the disk: the judge reads them from the worker's descriptors."""
    hider = subprocess.Popen([sys.executable, "-c", HIDER], cwd=tmp_path, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert hider.stdout.readline().strip() == "held" and not list(tmp_path.iterdir())
        assert ScratchBound(tmp_path, hider.pid, max_bytes=4 * 2**20, max_files=10).exceeded()
        assert ScratchBound(tmp_path, None, max_bytes=4 * 2**20, max_files=10).exceeded() == ""  # the listing alone
    finally:
        hider.communicate("")


UNDUMPABLE = """
import ctypes, os, sys
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: /proc/PID/fd is root's alone to read
fd = os.open("hidden", os.O_CREAT | os.O_RDWR)
os.write(fd, b"x" * 5 * 2**20)
os.unlink("hidden")
print("held", flush=True)
sys.stdin.read()
"""


def _as_nobody():
    os.setgid(NOBODY)
    os.setuid(NOBODY)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to stand in for an unprivileged grader and its worker")
def test_a_worker_that_hides_its_descriptors_from_an_unprivileged_grader_is_stopped(open_parent):
    emulate = Path(__file__).parents[1] / "emulate.py"  # a Python that user may run, as in a container's image
    hider = subprocess.Popen([sys.executable, str(emulate), "--readable-python", "--uid", str(NOBODY), "--",
                              sys.executable, "-c", UNDUMPABLE], cwd=open_parent, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert hider.stdout.readline().strip() == "held"
        child = os.fork()
        if child == 0:
            try:
                _as_nobody()
                said = ScratchBound(open_parent, hider.pid, max_bytes=2**30, max_files=10).exceeded()
                os._exit(0 if "hid the files it holds open" in said else 1)
            finally:
                os._exit(2)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        hider.communicate("")


# -- the judge's bound at work: a worker with no mount namespace (Docker's default profile) --------------

FILLER = """
def small():
    open("small", "wb").write(b"x" * 2**20)
    return 1

def fill():
    block = b"x" * 2**20
    for number in range(8):
        with open(f"fill-{number}", "wb") as handle:
            for _ in range(40):
                handle.write(block)
    return 8 * 40
"""
JUDGE = """
import sys
from grader.engine.errors import SubmissionError
from grader.engine.proxies import Namespace
from grader.engine.sandbox import Sandbox
from grader.engine.slot import Limits

sandbox = Sandbox()
try:
    learner = Namespace(sandbox, sys.argv[1], lambda module: Limits(time=5.0))
    print("small", learner.filler.small(), sandbox.protections.scratch_capped)
    try:
        print("fill", learner.filler.fill())
    except SubmissionError as error:
        print("fill", error.kind, error.message)
finally:
    sandbox.close()
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the launcher needs root to stand in for Docker")
def test_a_worker_past_its_scratch_bound_is_stopped_where_no_tmpfs_holds_it(tmp_path):
    """Under Docker's default profile the scratch folder is on the grader's disk: 320 MB written there stop the
    worker with the status disk, where 1 MB passes."""
    folder = tmp_path / "learner"
    folder.mkdir()
    (folder / "filler.py").write_text(FILLER)
    emulate = Path(__file__).parents[1] / "emulate.py"
    done = subprocess.run([sys.executable, str(emulate), "--docker", "--landlock", "2", "--", sys.executable, "-c",
                           JUDGE, str(folder)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    lines = done.stdout.splitlines()
    assert lines[0] == "small 1 False", done.stdout + done.stderr[-3000:]
    assert lines[1].startswith("fill disk wrote more than 64 MB"), done.stdout
    assert [path.name for path in tmp_path.iterdir()] == ["learner"]  # the sandbox and its scratch are gone
