"""A learner's own macOS or Windows, as the stand-ins for them show it on this Linux machine (tests/standin.py).

Under each stand-in, the learner's loop: the reference at full marks, a
catalogued mistake with its verdict and its hint, a loop stopped at its time
limit (and the exercises that import it saying so), ``--cases``, plain
pytest, a notebook's ``check_here`` and its widget in a real kernel, and
``--watch``; each with the same points and verdicts, case by case, as the
same command on Linux, one line saying the code ran unconfined, and no
traceback. The warm server serves where the system makes it safe (macOS)
and is skipped without a word where it cannot be (Windows). The
instructor's roads refuse in a sentence.

On macOS or Windows itself (the repository's CI workflow) the same tests
run natively for that system, and the other is skipped; Linux's results are
then this machine's own, so the comparison with Linux is the Linux jobs'.
"""

from __future__ import annotations

import json
import locale
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from helpers import ENV, SOLUTIONS, make_submission, solved_folder, with_ctrl_c
from mistakes import MISTAKES
from grader.cli import PLAIN_MARKS
from grader.engine import registry

STANDIN = Path(__file__).resolve().parents[1] / "standin.py"
SYSTEMS = {"macos": "macOS", "windows": "Windows"}
PLATFORMS = {"macos": "darwin", "windows": "win32"}
ENCODINGS = {"windows": "cp1252"}  # what Windows writes into a pipe
NUMPY = ("softmax", "lookup", "attention")
MISTAKE = next(m for m in MISTAKES if m.id == "softmax:no max subtraction")
LOOPING_SOFTMAX = "import numpy as np\n\n\ndef softmax(x, axis=-1):\n    while True:\n        pass\n"

pytestmark = [pytest.mark.slow, pytest.mark.parametrize("system", list(SYSTEMS))]


def interpreter(system: str) -> list[str]:
    """Python on ``system`` ("linux": this machine natively): itself, or through the stand-in for it."""
    if system == "linux" or sys.platform == PLATFORMS[system]:
        return [sys.executable]
    if not sys.platform.startswith("linux"):
        pytest.skip(f"the stand-in for {SYSTEMS[system]} runs on Linux")
    return [sys.executable, str(STANDIN), "--system", system, "--"]


def encoding(system: str) -> str:
    """What ``system``'s Python writes into a pipe: as the stand-in has it, or as this machine does natively."""
    if interpreter(system) != [sys.executable]:
        return ENCODINGS.get(system, "utf-8")
    return locale.getpreferredencoding(False) if sys.platform == "win32" else "utf-8"


def python(system: str, *args, cwd=None, **env) -> subprocess.CompletedProcess:
    """``args`` as Python's command line on ``system``, with what it printed as text."""
    return subprocess.run([*interpreter(system), *map(str, args)], capture_output=True, timeout=600, cwd=cwd,
                          env={**ENV, **env}, encoding=encoding(system), errors="replace")


def as_printed_on(system: str, text: str) -> str:
    """``text`` as ``system`` prints it into a pipe: Windows's code page has no ✓, and the kit writes + instead."""
    if system not in ENCODINGS:
        return text
    return "".join(c if c.encode(ENCODINGS[system], "ignore") else PLAIN_MARKS.get(c, "?") for c in text)


def softlookup(system: str, *args, **env) -> subprocess.CompletedProcess:
    return python(system, "-m", "grader.cli", *args, cwd=registry.KIT_ROOT, **env)


def unconfined_line(system: str) -> str:
    return (f"Learner code ran without: the confinement used for grading, which {SYSTEMS[system]} does not offer "
            "(fine for checking your own work).")


def verdicts(output: str) -> list[str]:
    """The lines of a check's output that carry a verdict: each failed check's, each case's (its tables' borders
    are drawn in whatever the terminal can show)."""
    marks = tuple(f"{mark} " for mark in ("✓", "✗", "○", *PLAIN_MARKS.values()))
    return [line for line in output.splitlines() if line.lstrip().startswith(marks)]


def graded(system: str, folder: Path, out: Path, *options, **env) -> tuple[subprocess.CompletedProcess, dict]:
    """``softlookup check`` of the numpy exercises of ``folder`` on ``system``: what it printed, and its results."""
    results = out / f"{system}-{folder.name}.json"
    done = softlookup(system, "check", folder, *(f"--exercise={name}" for name in NUMPY), "--json", results,
                      *options, **env)
    assert "Traceback" not in done.stdout + done.stderr, done.stdout[-3000:] + done.stderr[-3000:]
    return done, json.loads(results.read_text(encoding="utf-8"))


def cases(results: dict) -> list:
    return [(case["name"], case["score"], case["output"]) for case in results["tests"]]


@pytest.fixture(scope="module")
def learners(tmp_path_factory):
    """The learners' folders every system grades: the reference, a catalogued mistake, a loop that never ends."""
    root = tmp_path_factory.mktemp("learners")
    mistaken = make_submission(root / "mistake")
    MISTAKE.apply(mistaken)
    return {"reference": make_submission(root / "reference"), "mistake": mistaken,
            "loop": make_submission(root / "loop", {"softmax": LOOPING_SOFTMAX})}


# The loop is stopped at a 1 s limit, not the default 5 s: it computes for at most the limit under each system,
# and the verdict is the same sentence.
LIMITS = {"loop": ("--time-limit=1",)}


@pytest.fixture(scope="module")
def on_linux(learners, tmp_path_factory):
    """What this machine natively gives each learner's folder: on Linux, the standard the stand-ins are held to."""
    out = tmp_path_factory.mktemp("linux")
    found = {name: graded("linux", folder, out, "--no-server", *LIMITS.get(name, ()))
             for name, folder in learners.items()}
    state = out / "state"
    found["cases"] = softlookup("linux", "check", learners["mistake"], "--exercise", "softmax", "--cases",
                                MISTAKE.caught_by, XDG_STATE_HOME=state)
    found["hint"] = softlookup("linux", "hint", "softmax", XDG_STATE_HOME=state)
    return found


def test_the_reference_earns_full_marks(system, learners, on_linux, tmp_path):
    done, results = graded(system, learners["reference"], tmp_path, "--no-server")
    assert done.returncode == 0, done.stdout[-3000:]
    assert results["score"] == sum(registry.exercise(name).max_points for name in NUMPY)
    assert cases(results) == cases(on_linux["reference"][1])
    assert done.stdout.splitlines().count(unconfined_line(system)) == 1, done.stdout[:2000]


def test_a_mistake_gets_the_same_verdicts_and_hint(system, learners, on_linux, tmp_path):
    done, results = graded(system, learners["mistake"], tmp_path, "--no-server")
    assert done.returncode == 1
    assert cases(results) == cases(on_linux["mistake"][1])
    assert MISTAKE.hint in done.stdout
    state = tmp_path / "state"
    listed = softlookup(system, "check", learners["mistake"], "--exercise", "softmax", "--cases", MISTAKE.caught_by,
                        XDG_STATE_HOME=state)
    assert verdicts(listed.stdout) == verdicts(as_printed_on(system, on_linux["cases"].stdout)) != []
    hint = softlookup(system, "hint", "softmax", XDG_STATE_HOME=state)
    assert hint.returncode == 0 and hint.stdout == as_printed_on(system, on_linux["hint"].stdout)
    assert "Hint 1 of" in hint.stdout


def test_every_hint_reads_as_on_linux(system, tmp_path):
    """The hints are read from the registry as UTF-8 whatever the system's code page ('Ġcat' stays itself)."""
    for exercise in registry.EXERCISES:
        here, there = (softlookup(name, "hint", exercise.module, "--all", XDG_STATE_HOME=tmp_path / name)
                       for name in ("linux", system))
        assert there.returncode == here.returncode == 0
        assert there.stdout == as_printed_on(system, here.stdout), exercise.module


def test_a_loop_is_stopped_at_its_time_limit(system, learners, on_linux, tmp_path):
    done, results = graded(system, learners["loop"], tmp_path, "--no-server", *LIMITS["loop"])
    assert done.returncode == 1
    assert cases(results) == cases(on_linux["loop"][1])
    assert "softmax.softmax() computed for more than its 1 s time limit" in done.stdout
    assert "which ran past its time limit earlier in this grading" in done.stdout  # lookup.py, which imports it


def test_plain_pytest_gives_the_same_verdicts(system, learners):
    args = ("-m", "pytest", "grader/checks/public/test_softmax.py", "grader/checks/public/test_lookup.py",
            f"--submission={learners['mistake']}", "-q", "-p", "no:cacheprovider")
    here, there = (python(name, *args, cwd=registry.KIT_ROOT) for name in ("linux", system))
    assert there.returncode == here.returncode == 1, there.stdout[-3000:] + there.stderr[-3000:]
    summary = re.compile(r"^\d+ failed, \d+ passed")
    assert [line.split(" in ")[0] for line in there.stdout.splitlines() if summary.match(line)] == \
           [line.split(" in ")[0] for line in here.stdout.splitlines() if summary.match(line)] != []
    assert "Traceback" not in there.stdout + there.stderr


def test_check_here_and_the_widget_in_a_notebook(system, tmp_path, monkeypatch):
    """The lookup notebook, solved, run top to bottom in a kernel that itself runs under the stand-in."""
    kernels = tmp_path / "jupyter" / "kernels" / f"standin-{system}"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [*interpreter(system), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"Python on {SYSTEMS[system]}", "language": "python"}))
    path = solved_folder(tmp_path / "notebooks") / "lookup.ipynb"
    notebook = nbformat.read(path, as_version=4)
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    NotebookClient(notebook, timeout=300, kernel_name=f"standin-{system}", shutdown_kernel="immediate",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in notebook.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, errors[0].get("evalue")
    shown = {cell.get("id"): cell.outputs for cell in notebook.cells if cell.cell_type == "code"}
    report = shown["check"][-1]["data"]
    points = registry.exercise("lookup").max_points
    assert f"{points:g}/{points:g} points, done" in report["text/plain"]
    assert unconfined_line(system) in report["text/plain"]
    assert "the confinement used for grading" in report["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in shown["widget"][-1]["data"]


def test_watch_grades_again_on_save_and_stops_on_ctrl_c(system, tmp_path):
    if sys.platform == "win32":
        pytest.skip("a test cannot press Ctrl-C for a program of its own on Windows")
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "softmax.py").write_text((registry.KIT_ROOT / "assignments" / "softmax.py").read_text())
    watcher = subprocess.Popen([*interpreter(system), "-m", "grader.cli", "check", str(folder), "--watch"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=ENV, cwd=registry.KIT_ROOT,
                               preexec_fn=with_ctrl_c, encoding=encoding(system), errors="replace")
    seen = []

    def wait_for(fragment):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            seen.append(watcher.stdout.readline())
            if fragment in seen[-1]:
                return
        pytest.fail(f"never saw {fragment!r} in:\n{''.join(seen)}")

    try:
        wait_for("Watching")
        (folder / "softmax.py").write_text((SOLUTIONS / "softmax.py").read_text())  # the learner saves exercise 1
        full = registry.exercise("softmax").max_points
        wait_for(f"{full:g}/{full:g} done")
        wait_for("Watching")
        watcher.send_signal(signal.SIGINT)
        assert watcher.wait(30) == 0
        rest = watcher.stdout.read()
        assert "Stopped watching." in rest and "Traceback" not in "".join(seen) + rest
    finally:
        watcher.kill()
        watcher.wait()


def test_the_warm_server_serves_only_where_it_is_safe(system, learners, tmp_path):
    """macOS tells a Unix socket's peer (LOCAL_PEERCRED): served. Windows's Python has no Unix sockets: in-process."""
    # A short folder: a socket's path has at most 104 bytes on macOS, whose temporary folder is long already.
    runtime = Path(tempfile.mkdtemp(prefix="sl-", dir=None if sys.platform == "win32" else "/tmp"))
    env = {"XDG_RUNTIME_DIR": str(runtime), "SOFTLOOKUP_NO_SERVER": "", "SOFTLOOKUP_SERVER_IDLE": "120"}
    try:
        first, _ = graded(system, learners["reference"], tmp_path, **env)
        again, _ = graded(system, learners["reference"], tmp_path, **env)
        assert first.returncode == again.returncode == 0
        kept = "Unchanged since your last check" in again.stdout
        sockets = list(runtime.rglob("check-*.sock"))
        assert (kept, len(sockets)) == ((True, 1) if system == "macos" else (False, 0)), again.stdout[-2000:]
        assert again.stderr == ""
    finally:
        python(system, "-c", "from grader.warm import client\ntry:\n    client.request({'stop': True}, start=False)\n"
               "except Exception:\n    pass", **env)
    deadline = time.monotonic() + 30
    while list(runtime.rglob("check-*.sock")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not list(runtime.rglob("check-*.sock"))  # the server is gone: it removes its socket as it exits
    shutil.rmtree(runtime)


def test_the_instructors_roads_refuse_in_a_sentence(system, learners, tmp_path):
    refusal = f"learner code cannot be confined on {SYSTEMS[system]}"
    (tmp_path / "class" / "alice").mkdir(parents=True)
    (tmp_path / "class" / "alice" / "softmax.py").write_text((SOLUTIONS / "softmax.py").read_text())
    grade = softlookup(system, "grade", tmp_path / "class", "--out", tmp_path / "graded")
    assert grade.returncode == 2 and grade.stderr.count("\n") == 1 and refusal in grade.stderr, grade.stderr
    root = tmp_path / "autograder"
    (root / "source" / "kit").mkdir(parents=True)
    shutil.copytree(SOLUTIONS, root / "source" / "kit" / "solutions")
    selftest = python(system, "-m", "grader.commands.autograder", "selftest", root, cwd=registry.KIT_ROOT)
    assert selftest.returncode == 1 and refusal in selftest.stderr and "Traceback" not in selftest.stderr
    nbgrader_step = python(system, "-c", "import sys\nfrom pathlib import Path\n"
                           "from grader.releases.nbgrader_step import GradeInConfinement\n"
                           "try:\n    GradeInConfinement().graded(Path(sys.argv[1]))\n"
                           "except RuntimeError as error:\n    print('refused:', error)",
                           solved_folder(tmp_path / "notebooks"), cwd=registry.KIT_ROOT)
    assert nbgrader_step.stdout.startswith(f"refused: {refusal}"), nbgrader_step.stdout + nbgrader_step.stderr[-2000:]


def test_nothing_of_linuxs_confinement_is_imported(system, learners):
    """The CLI, the plugin, the checks, the kernel helpers and the widgets, and a whole check, import none of it."""
    done = python(system, "-c", "import sys, io, contextlib\n"
                  "import grader.cli, grader.engine.plugin, grader.lesson.kernel, grader.lesson.widgets, softlookup\n"
                  "from grader.commands import check\n"
                  "with contextlib.redirect_stdout(io.StringIO()):\n"
                  "    check.main([sys.argv[1], '--exercise', 'softmax', '--no-server'])\n"
                  "print(sorted(name for name in sys.modules if name.startswith('grader.engine.') and\n"
                  "      name.rsplit('.', 1)[1] in ('confine', 'seccomp', 'landlock')))",
                  learners["reference"], cwd=registry.KIT_ROOT)
    assert done.stdout.strip() == "[]", done.stdout[-2000:] + done.stderr[-2000:]
