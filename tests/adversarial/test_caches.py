"""A kept result is always the one a fresh check gives (issue 25): the warm server's checks and a --watch session.

Both keep results between gradings and grade again only when the folder
changed. Whatever the graded code depends on must count as a change: a
package of the learner's own (a folder with ``__init__.py``, imported
absolutely or through a relative import), a helper module, an exercise
imported through another one. Each case saves one of
those, then compares what the warm or watched check says with a fresh
in-process check (``--no-server``) of the same folder, exercise by exercise.
"""

from __future__ import annotations

import contextlib
import json
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from grader.engine import registry
from grader.reports.verdicts import points
from grader.warm import client
from helpers import ENV, SOLUTIONS, softlookup, with_ctrl_c

NAIVE = ("import numpy as np\n\n\ndef softmax(x, axis=-1):\n    e = np.exp(np.asarray(x, dtype=float))  # no max taken\n"
         "    return e / e.sum(axis=axis, keepdims=True)\n")
STABLE = (SOLUTIONS / "softmax.py").read_text()
FULL = {name: f"{registry.exercise(name).max_points}/{registry.exercise(name).max_points}"
        for name in ("softmax", "lookup", "attention")}


def per_exercise(results: dict) -> dict[str, str]:
    """``{exercise: "earned/possible"}`` from Gradescope's results.json, whose tests are named "<exercise>: ..."."""
    totals: dict[str, list[float]] = {}
    for test in results["tests"]:
        earned = totals.setdefault(test["name"].split(":")[0], [0.0, 0.0])
        earned[0] += test["score"]
        earned[1] += test["max_score"]
    return {name: f"{points(earned)}/{points(possible)}" for name, (earned, possible) in totals.items()}  # as tables do


KEPT = "Unchanged since your last check"  # the warm server's line where it answered from what it kept


def checked(folder: Path, exercises: tuple[str, ...], kept: list | None = None, **env) -> tuple[dict[str, str], str]:
    """``softlookup check`` of ``exercises``: each one's points, and what it printed, times and the server's
    "unchanged" line left out (that line is appended to ``kept``, or "" where there was none)."""
    results = folder.parent / "results.json"
    done = softlookup("check", folder, *(f"--exercise={name}" for name in exercises), "--json", results, **env)
    assert done.returncode in (0, 1), done.stderr
    assert client.FALLBACK not in done.stderr, done.stderr  # a server that failed is never passed off as served
    lines = [line for line in done.stdout.splitlines() if not line.startswith(KEPT)]
    if kept is not None:
        kept.append(next((line for line in done.stdout.splitlines() if line.startswith(KEPT)), ""))
    return per_exercise(json.loads(results.read_text())), re.sub(r"\(\d+\.\d s\)", "(time)", "\n".join(lines))


def fresh(folder: Path, *exercises: str) -> tuple[dict[str, str], str]:
    """What a check in the process says, with no server and nothing kept."""
    return checked(folder, exercises, SOFTLOOKUP_NO_SERVER="1")


def save(path: Path, text: str):
    """Write ``text`` as an editor saves it, a moment after the last write."""
    time.sleep(0.05)
    path.write_text(text)


# -- the warm server: two successive checks --------------------------------------------------------


def to_server(message: dict, env: dict):
    """``message``'s answer from the warm server that checks run with ``env`` reach (None where none listens).

    Asked from a process with the checks' own environment: the server's name
    is a digest of it (grader.warm.place.kit_key), so this test's process,
    whose environment differs, would be talking to no server at all.
    """
    asking = ("import json, sys; from grader.warm import client\n"
              "try:\n    print(json.dumps(client.request(json.loads(sys.argv[1]), start=False)))\n"
              "except (client.Unavailable, OSError, ValueError):\n    print('null')\n")
    done = subprocess.run([sys.executable, "-c", asking, json.dumps(message)], capture_output=True, text=True,
                          env={**ENV, **env}, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def warm():
    """``softlookup check`` served by a server of this test's own, stopped at the end."""
    runtime = Path(tempfile.mkdtemp(prefix="softlookup-test-"))  # a socket's path has at most 107 bytes
    env = {"XDG_RUNTIME_DIR": str(runtime), "SOFTLOOKUP_NO_SERVER": "0", "SOFTLOOKUP_SERVER_IDLE": "120"}

    def served() -> int:
        status = to_server({"status": True}, env)
        return status["served"] if status else 0

    def check(folder: Path, *exercises: str) -> tuple[dict[str, str], str]:
        """A check that the server must have answered: its count of checks served goes up by one."""
        before = served()
        answer = checked(folder, exercises, check.kept, **env)
        assert served() == before + 1, "the warm server did not answer this check"
        return answer

    check.kept = []  # per check, the server's "unchanged" line, or "" where it graded again
    yield check
    to_server({"stop": True}, env)
    shutil.rmtree(runtime)


def test_a_fix_in_the_learners_own_package_is_graded(warm, tmp_path):
    """softmax.py takes its function from a package of the learner's (a folder with __init__.py); the fix is there."""
    folder = tmp_path / "work"
    (folder / "mymaths").mkdir(parents=True)
    (folder / "mymaths" / "__init__.py").write_text("")
    (folder / "mymaths" / "weights.py").write_text(NAIVE)
    (folder / "softmax.py").write_text("from mymaths.weights import softmax\n")
    first = warm(folder, "softmax")
    assert first == fresh(folder, "softmax") and first[0]["softmax"] != FULL["softmax"]
    save(folder / "mymaths" / "weights.py", STABLE)
    second = warm(folder, "softmax")
    assert second == fresh(folder, "softmax"), second[1]
    assert second[0] == {"softmax": FULL["softmax"]}
    assert warm.kept == ["", ""]  # graded both times: the package's change counted


def test_a_helper_broken_after_a_passing_check_loses_its_points(warm, tmp_path):
    """The helper is a module of the learner's package, reached through its __init__.py's relative import."""
    folder = tmp_path / "work"
    (folder / "tools").mkdir(parents=True)
    (folder / "tools" / "__init__.py").write_text("from .weights import softmax\n")
    (folder / "tools" / "weights.py").write_text(STABLE)
    (folder / "softmax.py").write_text("from tools import softmax\n")
    shutil.copy(SOLUTIONS / "lookup.py", folder)
    first = warm(folder, "softmax", "lookup")
    assert first == fresh(folder, "softmax", "lookup") and first[0] == {name: FULL[name] for name in ("softmax", "lookup")}
    save(folder / "tools" / "weights.py", NAIVE)
    second = warm(folder, "softmax", "lookup")
    assert second == fresh(folder, "softmax", "lookup"), second[1]
    assert second[0]["softmax"] != FULL["softmax"]
    assert warm(folder, "softmax", "lookup") == second  # nothing changed since: kept, and still the same
    assert warm.kept[:2] == ["", ""] and "softmax.py" in warm.kept[2], warm.kept


# -- a --watch session --------------------------------------------------------------------------

EXERCISES = ("softmax", "lookup", "attention")
WATCHED_LINE = re.compile(r"\b(softmax|lookup|attention)\.py\s+(\d+(?:\.\d+)?/\d+)\b")


class Watch:
    """``softlookup check --watch`` on a folder, read screen by screen (each ends with watch's "Watching" line)."""

    def __init__(self, folder: Path):
        command = [sys.executable, "-m", "grader.cli", "check", str(folder), "--watch",
                   *(f"--exercise={name}" for name in EXERCISES)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        env=ENV, preexec_fn=with_ctrl_c)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.process.stdout], daemon=True).start()

    def next_screen(self, timeout: float = 90) -> dict[str, str]:
        """Each exercise's points on the next screen drawn; fails if none comes within ``timeout``."""
        lines, deadline = [], time.monotonic() + timeout
        while not lines or not lines[-1].startswith("Watching"):
            try:
                lines.append(self.lines.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                pytest.fail(f"no new screen within {timeout:g} s after:\n{''.join(lines)[-2000:]}")
        return {match[1]: match[2] for line in lines if (match := WATCHED_LINE.search(line))}

    def stop(self):
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(30)
        finally:
            self.process.kill()


@pytest.fixture
def watched(tmp_path):
    """A learner at exercise 3: softmax.py takes its function from a helper module, attention.py takes softmax
    through lookup.py."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "helper.py").write_text(NAIVE)
    (folder / "softmax.py").write_text("from helper import softmax\n")
    shutil.copy(SOLUTIONS / "lookup.py", folder)
    attention = (SOLUTIONS / "attention.py").read_text()
    assert "from softmax import softmax\n" in attention
    (folder / "attention.py").write_text(attention.replace("from softmax import softmax", "from lookup import softmax"))
    watch = Watch(folder)
    yield folder, watch
    watch.stop()


def test_a_watch_grades_again_what_a_helper_reaches(watched):
    folder, watch = watched
    first = watch.next_screen()
    assert first == fresh(folder, *EXERCISES)[0] and first["attention"] != FULL["attention"]
    save(folder / "helper.py", STABLE)  # no exercise's own file: softmax.py imports it
    assert watch.next_screen() == fresh(folder, *EXERCISES)[0] == FULL


def test_a_watch_grades_again_an_exercise_that_imports_the_saved_one_through_another(watched):
    folder, watch = watched
    assert watch.next_screen()["attention"] != FULL["attention"]
    save(folder / "softmax.py", STABLE)  # attention reaches softmax.py through lookup.py only
    assert watch.next_screen() == fresh(folder, *EXERCISES)[0] == FULL
