"""``softlookup check [DIR]``: grade one folder of modules and report it.

Runs the checks with pytest in this process (the learner's code runs in
workers, never here), prints a table per exercise and optionally writes
Gradescope's results.json. Exit status: 0 at full marks, 1 otherwise, 2 for
bad usage. In a student bundle (:mod:`grader.engine.edition`) there are only public
checks: the total is out of their points, and a line says what the hidden
ones add.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from grader.engine import edition, notebooks, plugin, registry, sandbox, stubs, views
from grader.cli import Parser
from grader.commands import hint
from grader.engine.results import SubmissionResult, render, write_gradescope

# pytest's own plugins that the judge has no use for (several cost time on every check).
UNUSED_PLUGINS = ("cacheprovider", "logging", "warnings", "faulthandler", "unraisableexception", "threadexception",
                  "doctest", "junitxml", "pastebin", "stepwise")
# How the judge runs pytest: its own configuration file, no conftest.py from anywhere, no plugin it did not
# name, no folder put on sys.path, no assertion rewriting (the checks report through grader.engine.judge).
PYTEST_ARGS = ["-c", str(registry.CHECKS_DIR / "pytest.ini"), f"--rootdir={registry.CHECKS_DIR}", "--noconftest",
               "-p", "grader.engine.plugin", "--import-mode=importlib", "--assert=plain", "-o", "addopts=",
               *[arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")]]


class _Capture:
    """A pytest plugin object that keeps the session's result for the caller."""

    result: SubmissionResult | None = None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session):
        from grader.engine.plugin import RESULT

        self.result = session.config.stash.get(RESULT, None)


# -- what check and grade share ------------------------------------------------------------------


def add_grading_options(p: Parser):
    """The options of ``softlookup check`` and ``softlookup grade`` that reach the checks."""
    p.add_argument("--exercise", action="append", choices=list(registry.BY_MODULE), metavar="NAME",
                   help=f"grade only this exercise (repeatable): {', '.join(registry.BY_MODULE)}")
    p.add_argument("--solutions", type=Path, metavar="DIR", help="reference solutions for the hidden checks")
    p.add_argument("--time-limit", type=float, metavar="SECONDS",
                   help="per call into the code (default 5; 30 for GPT-2)")
    p.add_argument("--memory-limit", type=float, metavar="MB", help="memory the code may use (default 2048)")
    p.add_argument("--time-budget", type=float, metavar="SECONDS",
                   help=f"all calls into one submission's code together (default {sandbox.TIME_BUDGET:g}); once "
                        "it is spent, the remaining checks fail at once")


def grading_problem(args) -> str | None:
    """What is wrong with the options :func:`add_grading_options` adds, in one line (None if nothing)."""
    for option in ("time_limit", "memory_limit", "time_budget"):
        value = getattr(args, option)
        if value is not None and not value > 0:
            return f"--{option.replace('_', '-')} must be a positive number, not {value:g}"
    if args.solutions and not args.solutions.is_dir():
        return f"--solutions {args.solutions} is not a folder"
    return None


def chosen_exercises(args) -> list[registry.Exercise]:
    if args.exercise:
        return [registry.exercise(name) for name in args.exercise]
    if getattr(args, "cases", None):  # only the exercises that have that check need grading
        return [exercise for exercise in registry.EXERCISES if args.cases in exercise.points]
    return list(registry.EXERCISES)


def plugin_options(args) -> list[str]:
    """The command line's options, as the pytest plugin takes them."""
    gpt2_model = getattr(args, "gpt2_model", None)
    values = {"solutions": args.solutions and args.solutions.resolve(), "time-limit": args.time_limit,
              "time-budget": args.time_budget, "memory-limit": args.memory_limit,
              "gpt2-model": gpt2_model and gpt2_model.resolve()}
    options = [f"--{name}={value}" for name, value in values.items() if value is not None]
    return options + (["--require-isolation"] if getattr(args, "require_isolation", False) else [])


def _interrupt(signum, frame):
    raise KeyboardInterrupt  # pytest then finishes its session: workers stopped, temporary folders removed


def stop_cleanly_on_sigterm():
    signal.signal(signal.SIGTERM, _interrupt)


# -- softlookup check -------------------------------------------------------------------------------


def parser() -> Parser:
    p = Parser(prog="softlookup check", description="Grade a folder of exercise modules.")
    p.add_argument("directory", nargs="?", type=Path,
                   help="folder with softmax.py, lookup.py, ... or softmax.ipynb, ... (default: this folder if it "
                        "holds them, else ./assignments)")
    p.add_argument("--notebooks", action="store_true",
                   help="grade <module>.ipynb where both it and <module>.py are there (as in assignments/)")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write Gradescope's results.json to FILE")
    add_grading_options(p)
    p.add_argument("--public", action="store_true", help="run the public checks only, not the hidden ones")
    p.add_argument("--gpt2-model", type=Path, metavar="DIR",
                   help="GPT-2 small, for the lesson's claims (default: $SOFTLOOKUP_GPT2, then the HF cache)")
    p.add_argument("--require-isolation", action="store_true",
                   help="refuse to grade unless learner code can be fully confined on this machine")
    p.add_argument("--cases", metavar="CHECK",
                   help="also show every case of CHECK (as named after ✗, e.g. test_axis) with its own message")
    p.add_argument("--watch", action="store_true",
                   help="keep running: grade again whenever you save an exercise's file (Ctrl-C stops)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show pytest's own output too, and everything your code printed")
    p.add_argument("--no-server", action="store_true",
                   help="grade in this process only, without the warm server that later checks reuse "
                        "(also SOFTLOOKUP_NO_SERVER=1)")
    return p


def usage_problem(args) -> str | None:
    """What is wrong with the command line, in one line, before anything is graded (None if nothing)."""
    if args.directory is None:
        here = Path.cwd()
        has_modules = any((here / f"{exercise.module}.py").is_file() for exercise in registry.EXERCISES)
        args.directory = here if has_modules else Path("assignments")
    if not args.directory.is_dir():
        return (f"{args.directory} is not a folder; give the folder that holds your exercise modules "
                "(default: this folder if it holds them, else ./assignments)")
    if not notebooks.chosen_sources(args.directory, prefer_notebooks=True):
        modules = ", ".join(f"{exercise.module}.py" for exercise in registry.EXERCISES)
        return (f"{args.directory} holds none of the exercise modules ({modules}) or their notebooks: "
                "is it the right folder?")
    if problem := grading_problem(args):
        return problem
    if args.cases and not any(args.cases in exercise.points for exercise in registry.EXERCISES):
        return f"--cases {args.cases}: there is no such check; give its name as the table's ✗ lines show it"
    if args.json and args.json.is_dir():
        return f"--json {args.json} is a folder; give the name of the file to write, e.g. {args.json / 'results.json'}"
    if args.json and not args.json.parent.is_dir():
        return f"cannot write {args.json}: folder {args.json.parent} does not exist"
    return None


def grade(directory: Path, exercises: list[registry.Exercise], hidden: bool = True,
          extra: list[str] = (), verbose: bool = False, plugins=()) -> SubmissionResult:
    """Run the checks of ``exercises`` on ``directory`` and return the result (``plugins``: more pytest plugins)."""
    # The fork servers start now, so that their imports (seconds, for torch) overlap pytest's start-up.
    sandbox.preload(plugin.servers_needed(Path(directory), exercises))
    files = [str(path) for exercise in exercises for path in exercise.check_files(hidden)]
    args = [*files, f"--submission={directory}", *PYTEST_ARGS, "-o", "softlookup_table=false", *extra]
    if not hidden:
        args.append("--public")
    capture, output = _Capture(), io.StringIO()
    with plugins_named_only():
        if verbose:
            code = pytest.main([*args, "-v"], plugins=[capture, *plugins])
        else:
            with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
                code = pytest.main([*args, "-q"], plugins=[capture, *plugins])
    if code == pytest.ExitCode.INTERRUPTED:
        raise KeyboardInterrupt
    if capture.result is None or code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        lines = output.getvalue().strip().splitlines()
        errors = [line.removeprefix("ERROR: ") for line in lines if line.startswith("ERROR: ")]
        raise RuntimeError(errors[0] if errors else f"the checks could not run (pytest exit {int(code)}): "
                           f"{' '.join(lines[-1:])}")
    return capture.result


@contextlib.contextmanager
def plugins_named_only():
    """No pytest plugin loads by entry point while the judge runs: only those PYTEST_ARGS names."""
    before = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"]
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = before


def main(argv=None, grading=None) -> int:
    """``softlookup check``; ``grading`` stands in for :func:`grade` (the warm server's, which keeps results)."""
    args = parser().parse_args(argv)
    if problem := usage_problem(args):
        print(f"softlookup check: {problem}", file=sys.stderr)
        return 2
    exercises, extra = chosen_exercises(args), plugin_options(args)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    stop_cleanly_on_sigterm()
    if args.watch:
        return watch(args.directory.resolve(), exercises, hidden=not args.public, extra=extra)
    try:
        with notebooks.module_folder(args.directory.resolve(), args.notebooks) as folder:
            result = (grading or grade)(folder, exercises, hidden=not args.public, extra=extra, verbose=args.verbose)
    except (RuntimeError, notebooks.NotebookError) as error:
        print(f"softlookup check: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("softlookup check: interrupted; nothing was written", file=sys.stderr)
        return 130
    result.submission = str(args.directory)
    hint.record_failures(result)
    console = Console(highlight=False)
    render(result, console)
    if args.cases and not views.cases(result, args.cases, console):
        console.print(f"No check {args.cases} was graded here (see --exercise).")
    if (student := edition.student()) is not None:
        console.print(student.note([exercise.module for exercise in exercises], result.max_score), soft_wrap=True)
    if args.json:
        try:
            write_gradescope(result, args.json)
        except OSError as error:  # the grades are printed above; say why the file is not there
            print(f"softlookup check: could not write {args.json}: {error.strerror}", file=sys.stderr)
            return 2
    return 0 if result.full_marks else 1


# -- watch mode ---------------------------------------------------------------------------------

POLL_SECONDS = 0.3


def watch(directory: Path, exercises: list[registry.Exercise], hidden: bool, extra: list[str]) -> int:
    """Grade, then grade again each exercise whose file (or a file it imports) is saved, until Ctrl-C.

    The screen is redrawn each time, made to fit the terminal with the failure
    just caused on it (:func:`views.watch_screen`); the fork servers stay warm
    between runs, so a change to one exercise is graded in a fraction of a second.
    """
    console = Console(highlight=False)
    shown = SubmissionResult(str(directory))
    stamps: dict[str, float | None] = {}
    pending, changed = list(exercises), set()
    try:
        while True:
            if pending:
                stamps = {e.module: _stamp(directory / f"{e.module}.py") for e in exercises}
                try:
                    shown = _updated(shown, grade(directory, pending, hidden=hidden, extra=extra), exercises)
                    hint.record_failures(shown)
                    console.clear()  # after grading, so the last screen stays up meanwhile
                    views.watch_screen(shown, console, changed)
                except RuntimeError as error:
                    console.clear()
                    console.print(f"softlookup check: {error}")
                console.print(f"[dim]Watching {directory} for changes (Ctrl-C to stop)...[/]", no_wrap=True,
                              overflow="ellipsis")
            time.sleep(POLL_SECONDS)
            changed = {module for module, stamp in stamps.items()
                       if _stamp(directory / f"{module}.py") != stamp}
            pending = [e for e in exercises if e.module in changed or stubs.imported_names(directory / f"{e.module}.py") & changed]
    except KeyboardInterrupt:
        console.print("Stopped watching.")
        return 0


def _updated(shown: SubmissionResult, fresh: SubmissionResult, order) -> SubmissionResult:
    """The shown result with the exercises graded just now replaced, in the registry's order."""
    by_name = {e.name: e for e in shown.exercises} | {e.name: e for e in fresh.exercises}
    return SubmissionResult(fresh.submission, [by_name[e.module] for e in order if e.module in by_name],
                            fresh.seconds, fresh.unprotected)


def _stamp(path: Path) -> float | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None

