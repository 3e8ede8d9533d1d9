"""What Gradescope's ``run_autograder`` runs for each submission: every check, and results.json.

``python -m grader.commands.autograder run ROOT`` grades ``ROOT/submission`` with the
public and the hidden checks, against ``ROOT/source/kit/solutions``, in
workers that must be fully confined (as ``softlookup grade`` requires), and
writes ``ROOT/results/results.json`` in Gradescope's format: the score,
each check's points and output, public checks visible at once and hidden
ones "after_published". The table the kit prints goes to stdout, which
Gradescope shows to the instructor only. A submission that cannot be graded
at all still gets a results.json that says why.

``python -m grader.commands.autograder selftest ROOT`` is the image's build-time
test: the reference solutions must earn full marks, every protection
holding, or the build fails before any student submits.

A submission holds modules (``softmax.py``) or notebooks
(``softmax.ipynb``), at its top or in one folder below it (``assignments/``
of a bundle pushed from GitHub, or the folder a zip unpacks to). Where both
a module and a notebook of an exercise are there, the module is graded
unless it is still the untouched stub (:func:`grader.engine.submissions.notebooks.chosen_sources`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console

from grader import usage
from grader.engine import registry
from grader.engine.classes.runner import run_checks
from grader.engine.confinement import system
from grader.engine.options import Options
from grader.engine.results import SubmissionResult, crashed, write_atomically
from grader.engine.submissions import notebooks
from grader.engine.submissions.intake import one_line
from grader.reports.gradescope import gradescope
from grader.reports.terminal import render
from grader.usage import UsageError

ROOT = Path("/autograder")


def locate(submission: Path) -> Path:
    """The folder that holds the exercise files: the submission itself, or its one folder that does."""
    if notebooks.chosen_sources(submission, prefer_notebooks=True):
        return submission
    below = [folder for folder in sorted(submission.iterdir()) if folder.is_dir() and not folder.is_symlink()
             and not folder.name.startswith(".") and notebooks.chosen_sources(folder, prefer_notebooks=True)]
    return below[0] if len(below) == 1 else submission  # none, or several: the checks say what is missing


def summary(result: SubmissionResult) -> str:
    """The line every student sees at once: the public checks' points, and when the hidden ones show."""
    public = [c for e in result.exercises for c in e.checks if not c.hidden]
    hidden = sum(c.max_points for e in result.exercises for c in e.checks if c.hidden)
    earned = sum(c.points for c in public)
    possible = sum(c.max_points for c in public)
    return (f"Public checks: {earned:g} of {possible:g} points. The hidden checks, worth {hidden:g} more, run your "
            "functions on other inputs; their results show when grades are published.")


def grade(submission: Path, solutions: Path) -> SubmissionResult:
    """Every check on ``submission``, in fully confined workers."""
    with notebooks.module_folder(locate(submission)) as folder:
        return run_checks(folder, list(registry.EXERCISES), Options(solutions=solutions, require_isolation=True))


def run(root: Path) -> int:
    """Grade ``root/submission`` and write ``root/results/results.json``, whatever happens."""
    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    console = Console(highlight=False, width=160)
    try:
        result, failed = grade(root / "submission", root / "source" / "kit" / "solutions"), False
    except (RuntimeError, notebooks.NotebookError, OSError) as error:  # recorded as a result, like any other
        result, failed = crashed("submission", registry.EXERCISES, one_line(error)), True
    render(result, console)
    report = gradescope(result)
    del report["max_score"]  # not in Gradescope's schema: the assignment's settings hold its total
    report["output"] = ("The autograder could not grade this submission; your instructor has been shown the "
                        "details." if failed else summary(result))
    write_atomically(results, json.dumps(report, indent=2) + "\n")
    system.close_to_workers([results.parent, results])  # every check's name, hidden ones too: no later worker's
    return 1 if failed else 0


def selftest(root: Path) -> int:
    """The reference solutions, graded as a submission: 0 only at full marks with every protection held."""
    solutions = root / "source" / "kit" / "solutions"
    try:
        result = grade(solutions, solutions)
    except RuntimeError as error:
        print(f"softlookup autograder self-test: {error}", file=sys.stderr)
        return 1
    render(result, Console(highlight=False, width=160))
    if not result.full_marks:
        print("softlookup autograder self-test: the reference solutions lose points here", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    commands = {"run": run, "selftest": selftest}
    if len(argv) not in (1, 2) or argv[0] not in commands:
        raise UsageError("usage: python -m grader.commands.autograder {run,selftest} [ROOT]   (ROOT: default /autograder)")
    return commands[argv[0]](Path(argv[1]) if len(argv) == 2 else ROOT)


if __name__ == "__main__":
    sys.exit(usage.run(main, sys.argv[1:], "python -m grader.commands.autograder"))
