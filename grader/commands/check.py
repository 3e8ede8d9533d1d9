"""``softlookup check [DIR]``: grade one folder of modules and report it.

Runs the checks with pytest in this process (the learner's code runs in
workers, never here), prints a table per exercise and optionally writes
Gradescope's results.json. Exit status: 0 at full marks, 1 otherwise, 2 for
bad usage. In a student bundle (:mod:`grader.engine.edition`) there are only public
checks: the total is out of their points, and a line says what the hidden
ones add.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from grader.engine import edition, hint_record, options, registry
from grader.engine.classes.keeper import Keeper
from grader.engine.classes.runner import run_checks, stop_cleanly_on_sigterm
from grader.engine.confinement import system
from grader.engine.options import Options
from grader.engine.results import SubmissionResult
from grader.engine.submissions import notebooks
from grader.engine.submissions.digests import fingerprint
from grader.engine.submissions.intake import exercise_folder, link_on_the_way
from grader.reports import terminal
from grader.reports.gradescope import write_gradescope
from grader.usage import Parser, UsageError


def parser() -> Parser:
    p = Parser(prog="softlookup check", description="Grade a folder of exercise modules.")
    p.add_argument("directory", nargs="?", type=Path,
                   help="folder with softmax.py, lookup.py, ... or softmax.ipynb, ... (default: this folder if it "
                        "holds them, else ./assignments)")
    p.add_argument("--notebooks", action="store_true",
                   help="grade <module>.ipynb where both it and <module>.py are there (as in assignments/)")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write Gradescope's results.json to FILE")
    options.add_exercise_option(p)
    options.declare(p.add_argument)
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
        top, args.directory = here, (here if has_modules else Path("assignments"))
    else:  # a clone of the student bundle, say, holds the exercises in its assignments/, as the default finds them
        top, args.directory = args.directory, exercise_folder(args.directory) or args.directory
    # The folder named is read as it is; a link below it (assignments/ to someone else's work) is not followed.
    args.refused = link_on_the_way(top.absolute(), args.directory.absolute()) if args.directory.is_dir() else ""
    if not args.directory.is_dir():
        return (f"{args.directory} is not a folder; give the folder that holds your exercise modules "
                "(default: this folder if it holds them, else ./assignments)")
    if not notebooks.chosen_sources(args.directory, prefer_notebooks=True):
        modules = ", ".join(f"{exercise.module}.py" for exercise in registry.EXERCISES)
        return (f"{args.directory} holds none of the exercise modules ({modules}) or their notebooks: "
                "is it the right folder?")
    if problem := Options.of(args).problem():
        return problem
    if args.cases and not any(args.cases in exercise.points for exercise in registry.EXERCISES):
        return f"--cases {args.cases}: there is no such check; give its name as the table's ✗ lines show it"
    if args.json and args.json.is_dir():
        return f"--json {args.json} is a folder; give the name of the file to write, e.g. {args.json / 'results.json'}"
    if args.json and not args.json.parent.is_dir():
        return f"cannot write {args.json}: folder {args.json.parent} does not exist"
    if args.json and args.json.exists() and not earlier_results(args.json):
        return (f"--json {args.json} exists and is not a results.json this command wrote (an exercise, a notebook?); "
                "nothing was written: give the name of a new file, e.g. results.json")
    return None


def earlier_results(path: Path) -> bool:
    """Whether ``path`` holds Gradescope's results.json, as ``--json`` writes it: the one file it may replace."""
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(results, dict) and isinstance(results.get("tests"), list)


def main(argv=None, grading=None) -> int:
    """``softlookup check``; ``grading`` stands in for :func:`grade` (the warm server's, which keeps results)."""
    args = parser().parse_args(argv)
    if problem := usage_problem(args):
        raise UsageError(problem)
    exercises, chosen = options.chosen_exercises(args), Options.of(args)
    stop_cleanly_on_sigterm()
    if args.watch:
        return watch(args.directory.resolve(), args.notebooks, args.refused, exercises, chosen)
    try:
        result = graded(args.directory.resolve(), args.notebooks, args.refused, exercises, chosen,
                        verbose=args.verbose, grading=grading)
    except (RuntimeError, notebooks.NotebookError) as error:
        raise UsageError(str(error)) from None
    except KeyboardInterrupt:
        print("softlookup check: interrupted; nothing was written", file=sys.stderr)
        return 130
    result.submission = str(args.directory)
    hint_record.record_failures(result)
    console = Console(highlight=False)
    student = edition.student()
    note = student.note([exercise.module for exercise in exercises], result.max_score) if student else ""
    # Below the report: the note, and the prompt. With --cases the learner asked for more than a screen.
    reserve = None if args.cases else 1 + -(-len(note) // max(console.width, 1))
    terminal.render(result, console, reserve=reserve)
    if args.cases and not terminal.cases(result, args.cases, console):
        console.print(f"No check {args.cases} was graded here (see --exercise).")
    if note:
        console.print(note, soft_wrap=True)
    if args.json:
        try:
            write_gradescope(result, args.json)
            system.close_to_workers([args.json])  # every check's name and verdict, hidden ones too: no later worker's
        except OSError as error:  # the grades are printed above; say why the file is not there
            raise UsageError(f"could not write {args.json}: {error.strerror}") from None
    return 0 if result.full_marks else 1


def graded(directory: Path, prefer_notebooks: bool, refused: str, exercises: list[registry.Exercise],
           chosen: Options, verbose: bool = False, grading=None) -> SubmissionResult:
    """``directory`` graded as ``check`` grades it: its notebooks made into modules, by ``grading`` (by default
    :func:`run_checks`); or, where it is ``refused`` (a link on the way to it), every check failed with why,
    without reading a file of it."""
    if refused:
        with tempfile.TemporaryDirectory(prefix="softlookup-refused-") as nothing:
            return run_checks(Path(nothing), exercises, chosen, verbose=verbose, problem=refused)
    with notebooks.module_folder(directory, prefer_notebooks) as folder:
        return (grading or run_checks)(folder, exercises, chosen, verbose=verbose)


# -- watch mode ---------------------------------------------------------------------------------

POLL_SECONDS = 0.3


def watch(directory: Path, prefer_notebooks: bool, refused: str, exercises: list[registry.Exercise],
          chosen: Options) -> int:
    """Grade, then grade again whenever a file of the folder changes, until Ctrl-C.

    A change is any file a graded copy holds (:func:`~grader.engine.submissions.digests.fingerprint`), and the
    grading is ``check``'s, kept by a :class:`~grader.engine.classes.keeper.Keeper` (which grades again the
    exercises whose grading read what changed), so a watched result is always the one ``softlookup check``
    gives. The screen is redrawn each time, made to fit the terminal with the failure just caused on it
    (:func:`~grader.reports.terminal.watch_screen`); the fork servers and the reference's answers stay warm
    between runs.
    """
    console = Console(highlight=False)
    keeper, seen = Keeper(), None
    try:
        while True:
            now = fingerprint(directory)
            if now != seen:
                changed = _saved(seen, now, exercises) if seen is not None else set()
                seen = now
                try:
                    shown = graded(directory, prefer_notebooks, refused, exercises, chosen, grading=keeper.grade)
                    hint_record.record_failures(shown)
                    console.clear()  # after grading, so the last screen stays up meanwhile
                    terminal.watch_screen(shown, console, changed)
                except (RuntimeError, notebooks.NotebookError) as error:
                    console.clear()
                    console.print(f"softlookup check: {error}")
                console.print(f"[dim]Watching {directory} for changes (Ctrl-C to stop)...[/]", no_wrap=True,
                              overflow="ellipsis")
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        console.print("Stopped watching.")
        return 0


def _saved(before: dict, now: dict, exercises: list[registry.Exercise]) -> set[str]:
    """The exercises whose own file (module or notebook) differs between two fingerprints: the screen's focus."""
    return {e.module for e in exercises for name in (f"{e.module}.py", f"{e.module}.ipynb")
            if before.get(name) != now.get(name)}
