"""Helpers for the kit's own tests: build a submission folder, grade it, read the result."""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.engine import registry
from grader.engine.classes.runner import run_checks
from grader.engine.options import Options

SOLUTIONS = registry.SOLUTIONS_DIR
# Seconds of CPU time to import a module, where a test's learner loops at import on purpose: a grading's 30 s
# would be paid by every such test, and a module that loops costs the same verdict at 5 s.
IMPORT_TIME_LIMIT = 5.0


def fresh_stubs() -> Path:
    """``assignments/`` as ``softlookup release`` makes it from solutions/, in a temporary folder of its own.

    The repository's own ``assignments/`` is the learner's to edit: a test that
    read it would fail once they had solved an exercise there. (CI's
    ``softlookup release --check`` keeps it up to date.)
    """
    from grader.releases.assignments import planned

    folder = Path(tempfile.mkdtemp(prefix="softlookup-stubs-")) / "assignments"
    atexit.register(shutil.rmtree, folder.parent, True)
    folder.mkdir()
    for path, text in planned(SOLUTIONS, folder).items():
        path.write_text(text)
    return folder


ASSIGNMENTS = fresh_stubs()
SOFTLOOKUP = [sys.executable, "-m", "grader.cli"]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "120"}
NBGRADER = [sys.executable, "-m", "nbgrader"]
# nbgrader runs `alembic` by name, so the venv's scripts folder goes first on PATH; in a venv that borrows the
# system's packages, nbconvert's templates (generate_feedback's HTML) lie under the base interpreter's prefix.
NBGRADER_ENV = {**ENV, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{ENV.get('PATH', '')}",
                "JUPYTER_PATH": os.pathsep.join(filter(None, [ENV.get("JUPYTER_PATH"),
                                                              str(Path(sys.base_prefix) / "share" / "jupyter")]))}
SECONDS = {}  # nbgrader's steps, how long each took: printed by the nbgrader test


def load_solution(module: str):
    """A reference solution, imported from solutions/ (on sys.path only meanwhile, for the modules it imports).

    Nothing it loads stays in sys.modules, where a later `import softmax` would find it.
    """
    before = set(sys.modules)
    sys.path.insert(0, str(SOLUTIONS))
    try:
        return importlib.import_module(module)
    finally:
        sys.path.remove(str(SOLUTIONS))
        for name in set(sys.modules) - before:
            if str(getattr(sys.modules[name], "__file__", "")).startswith(str(SOLUTIONS)):
                del sys.modules[name]


def make_submission(folder: Path, files: dict[str, str] | None = None, append: dict[str, str] | None = None) -> Path:
    """A copy of the reference solutions, with whole files replaced or code appended.

    Appended code redefines a function, so a wrong implementation is written
    as just the function it changes.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for source in SOLUTIONS.glob("*.py"):
        shutil.copy(source, folder / source.name)
    for name, text in (files or {}).items():
        (folder / f"{name}.py").write_text(text)
    for name, code in (append or {}).items():
        with open(folder / f"{name}.py", "a") as handle:
            handle.write("\n\n" + code.strip() + "\n")
    return folder


def solved_folder(folder: Path) -> Path:
    """Every exercise's notebook with the reference solutions filled in, and no .py file beside them."""
    from grader.releases.exercise_notebooks import learner_notebook

    folder.mkdir(parents=True, exist_ok=True)
    for exercise in registry.EXERCISES:
        source = (SOLUTIONS / f"{exercise.module}.py").read_text()
        (folder / f"{exercise.module}.ipynb").write_text(learner_notebook(exercise, source, stub=False))
    return folder


def learners_clone(root: Path) -> Path:
    """The kit as `git clone` gives it, then a learner's work in its assignments/: ``softmax`` solved, the
    lesson's sign mistake in ``soft_lookup``, the rest not started."""
    from grader.releases.distribution import CACHES
    from mistakes import MISTAKES

    for part in ("grader", "solutions", "tests"):
        shutil.copytree(registry.KIT_ROOT / part, root / part, ignore=CACHES)
    for name in ("pyproject.toml", "softlookup.py", "README.md"):
        shutil.copy(registry.KIT_ROOT / name, root / name)
    work = shutil.copytree(ASSIGNMENTS, root / "assignments")
    shutil.copy(SOLUTIONS / "softmax.py", work)
    shutil.copy(SOLUTIONS / "lookup.py", work)
    next(mistake for mistake in MISTAKES if mistake.name == "soft score sign flipped").apply(work)
    return root


def fresh_venv(folder: Path) -> Path:
    """A new venv for a release to be installed into; returns its python.

    It sees this venv's packages through a .pth line, so installing a
    release resolves its dependencies without downloading torch again. It
    does not see the kit installed here in editable mode: Python reads .pth
    files only in a venv's own site-packages, and one of those installs the
    kit's editable finder.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    (folder / "lib" / version / "site-packages" / "inherited.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return folder / "bin" / "python"


def run(folder: Path, modules: list[str] | None = None, hidden: bool = True, time_limit: float | None = None,
        import_time_limit: float | None = None):
    """Grade ``folder`` in this process, the way ``softlookup check`` does."""
    exercises = [registry.exercise(m) for m in modules] if modules else list(registry.EXERCISES)
    return run_checks(folder, exercises, Options(time_limit=time_limit, import_time_limit=import_time_limit,
                                                 public=not hidden))


def run_batch(folders: dict[str, Path], modules: list[str], workdir: Path, jobs: int = 1) -> dict:
    """Grade many folders the way ``softlookup grade`` does, in the engine's batch: student id -> result.

    A judge collects the checks and answers the reference once, then grades
    folder after folder: for a catalogue of a hundred wrong implementations,
    a fraction of the time of one :func:`run` each.
    """
    from grader.engine import options
    from grader.engine.classes import batch
    from grader.engine.submissions.intake import Student

    exercises = [registry.exercise(m) for m in modules]
    results = {}
    stopped = batch.grade_class([Student(student, str(folder)) for student, folder in folders.items()], jobs,
                                exercises, options.pytest_command(exercises, Options()),
                                lambda student, result: results.__setitem__(student.id, result), workdir)
    assert not stopped, stopped
    return results


def failures(result, check: str) -> list[str]:
    """The messages of every failed case of one check."""
    return [c.message for e in result.exercises for c in e.checks if c.check == check and c.outcome == "failed"]


def full_marks_problems(result, modules: list[str] | None = None, hidden: bool = True) -> list[str]:
    """Why ``result`` is not full marks, one line each; [] where it is.

    Full marks is more than score equal to max score: a check that stopped
    running (skipped, left out, collected under another name) counts 0 of 0
    and would leave that equality standing. So every check of each
    exercise's check files (public ones, and hidden ones with ``hidden``)
    must have run and passed, and each exercise's score must be its points
    as the registry counts them: the README's table.
    """
    modules = modules or [exercise.module for exercise in registry.EXERCISES]
    graded = {exercise.name: exercise for exercise in result.exercises}
    problems = [f"{module}: not graded" for module in modules if module not in graded]
    for module in modules:
        if module not in graded:
            continue
        exercise, expected = graded[module], registry.exercise(module)
        checks = {check.name: check.points for check in expected.checks if hidden or not check.hidden}
        ran = {check.check for check in exercise.checks}
        problems += [f"{module}: {name} did not run" for name in checks if name not in ran]
        problems += [f"{module}: {check.check}[{check.case}] {check.outcome}: {check.message}"
                     for check in exercise.checks if check.outcome != "passed" and not _waits_for_gpt2(check, checks)]
        if abs(exercise.score - sum(checks.values())) > 1e-9:
            problems.append(f"{module}: {exercise.score:g} points, where its checks are worth {sum(checks.values()):g}")
    return problems


def _waits_for_gpt2(check, points: dict) -> bool:
    """The one skip full marks allows: a 0-point claim about GPT-2 small, which runs only where its real weights
    are on disk (never on the kit's machines, which cannot download them)."""
    from grader.checks.fixtures import SKIPPED

    return check.outcome == "skipped" and points.get(check.check) == 0 and check.message == SKIPPED


def exercise_score(result, module: str) -> tuple[float, float]:
    for exercise in result.exercises:
        if exercise.name == module:
            return exercise.score, exercise.max_score
    raise KeyError(module)


@contextlib.contextmanager
def cpu_hog(loops: int = 4):
    """A busy core for the duration: this process, whatever it starts, and ``loops`` busy loops share one core.

    Each loop needs its own process session: Linux's scheduler shares the processor out
    per session (autogroups) where that is on, and loops started in one session
    would together take no more than one worker does. All of them on one core
    starve a learner's code as ``loops`` loops per core would, while the
    machine's other cores go on with the rest of the suite; where processes
    cannot be pinned (not Linux) there are ``loops`` loops per core instead.
    """
    pinned = _pin_to_one_core()
    count = loops if pinned else loops * (os.cpu_count() or 1)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
            for _ in range(count)]
    try:
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()
        if pinned:
            _pin_tree(pinned)


def _pin_to_one_core() -> set[int] | None:
    """Pin this process's tree to the first core it may use; the cores it had, or None where it cannot be pinned."""
    if not hasattr(os, "sched_setaffinity") or not Path("/proc/self/task").is_dir():
        return None
    cores = os.sched_getaffinity(0)
    _pin_tree({min(cores)})
    return cores


def _pin_tree(cores: set[int]):
    """Every thread of this process and of its descendants (as they are now) onto ``cores``; a child started
    afterwards inherits them from its parent."""
    for pid in [os.getpid(), *descendants(os.getpid())]:
        for task in Path(f"/proc/{pid}/task").glob("[0-9]*"):
            with contextlib.suppress(OSError):
                os.sched_setaffinity(int(task.name), cores)


def descendants(pid: int) -> dict[int, tuple[int, str]]:
    """The live descendants of process ``pid`` (Linux), each with its parent's pid and its command line."""
    found: dict[int, tuple[int, str]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            parent = int(stat.read_text().rpartition(")")[2].split()[1])
            found[int(stat.parent.name)] = (parent, (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ")
                                            .decode(errors="replace"))
    tree, index = [pid], 0
    while index < len(tree):
        tree.extend(child for child, (parent, _) in found.items() if parent == tree[index])
        index += 1
    return {child: found[child] for child in tree[1:]}


# -- the commands, as a learner or an instructor runs them ---------------------------------------------


def with_ctrl_c():
    """In a child: Ctrl-C (SIGINT) works, even when this run was started where it is ignored (nohup, `&`)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def softlookup(*args, cwd=None, **env):
    return subprocess.run([*SOFTLOOKUP, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env={**ENV, **env}, timeout=600)


def nbgrader(course, *args):
    started = time.monotonic()
    done = subprocess.run([*NBGRADER, *args], cwd=course, capture_output=True, text=True, env=NBGRADER_ENV,
                          timeout=900)
    SECONDS[" ".join(args[:1] + args[2:])] = time.monotonic() - started
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


_COURSES: dict[tuple[str, ...], Path] = {}  # release options -> the course made with them, in this test process


def released_course(folder: Path, *options: str) -> Path:
    """``folder`` holding an nbgrader course as an instructor starts one: ``softlookup release nbgrader`` (with
    ``options``), then nbgrader's ``generate_assignment``.

    The two steps cost about 7 s of CPU and depend on the kit alone, so each set of options is made once per test
    process and copied; a test then changes its own copy (the configuration, the submissions).
    """
    from grader.releases.nbgrader_course import ASSIGNMENT

    if options not in _COURSES:
        made = Path(tempfile.mkdtemp(prefix="softlookup-course-")) / "course"
        atexit.register(shutil.rmtree, made.parent, True)
        released = softlookup("release", "nbgrader", made, *options)
        assert released.returncode == 0, released.stdout[-3000:] + released.stderr[-3000:]
        nbgrader(made, "generate_assignment", ASSIGNMENT)
        _COURSES[options] = made
    shutil.copytree(_COURSES[options], folder, dirs_exist_ok=True)
    return folder


def notebook_scores(course, student):
    from nbgrader.api import Gradebook

    from grader.releases.nbgrader_course import ASSIGNMENT

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "softlookup") as gradebook:
        submission = gradebook.find_submission(ASSIGNMENT, student)
        return {notebook.name: notebook.score for notebook in submission.notebooks}


def most(module: str) -> str:
    """An exercise's points, hidden checks included, as the tables write them ("18"): never typed into a test,
    so that a check added to an exercise moves them everywhere at once."""
    from grader.reports.verdicts import points

    return points(registry.exercise(module).max_points)


def partly(module: str) -> str:
    """A pattern for "N/MOST points" with N below the exercise's ``most``: a part of its points."""
    return rf"(?:\d+(?:\.\d+)?)/{most(module)} points"
