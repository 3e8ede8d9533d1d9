"""Two more terminal views of the result model: the ``--watch`` screen, and every case of one check.

The full report (:func:`grader.engine.results.render`) shows every check of
every exercise started: right after a save, in a terminal of 24 lines, the
failure just caused scrolls away under the tables that still pass. The watch
screen is made to fit instead: one line per exercise, then the failures of
the exercise that changed (or else the first one not done), as many as the
terminal's height leaves room for, and the total.

The report shows one message per check, and counts the cases that failed
otherwise; ``softlookup check --cases CHECK`` prints each case of that check
with its own message (:func:`cases`), without pytest's log.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from grader.engine import markup
from grader.engine.results import ExerciseResult, SubmissionResult, _first_problem, _fmt, cleaned, summary

MARKS = {"done": "[green]✓[/]", "not started": "[dim]·[/]", "in progress": "[red]✗[/]"}


def watch_screen(result: SubmissionResult, console, changed: set[str] = frozenset()) -> None:
    """The watch screen: one line per exercise, the focus's failures fitted to the terminal, the total.

    ``changed``: the exercises whose file (or a file they import) was just
    saved; the first of them that is not done is the focus, else the first
    exercise in progress.
    """
    result = cleaned(result)
    lines = Table.grid(padding=(0, 1), expand=True)
    for justify in ("left", "left", "right"):
        lines.add_column(justify=justify, no_wrap=True)
    lines.add_column(ratio=1)  # the status takes what is left, cut short rather than wrapped
    for exercise in result.exercises:
        lines.add_row(MARKS[exercise.status], f"[bold]{exercise.name}.py[/]",
                      f"{_fmt(exercise.score)}/{_fmt(exercise.max_score)}",
                      _one_line(_status(exercise)))
    if result.unprotected:
        console.print(f"[yellow]Learner code ran without {len(result.unprotected)} protections "
                      "(softlookup check says which).[/]", no_wrap=True, overflow="ellipsis")
    console.print(lines)
    focus = next((e for e in result.exercises if e.name in changed and e.status == "in progress"), None) or next(
        (e for e in result.exercises if e.status == "in progress"), None)
    # What stays on screen below the details: the total and watch's own line.
    room = console.height - len(result.exercises) - bool(result.unprotected) - 3
    if focus is not None:
        _details(focus, console, room)
    console.print(f"[bold]Total: {_fmt(result.score)}/{_fmt(result.max_score)}[/] ({result.seconds:.1f} s)")


def _one_line(text: str) -> Text:
    line = Text.from_markup(text, overflow="ellipsis")
    line.no_wrap = True
    return line


def _status(exercise: ExerciseResult) -> str:
    if exercise.status != "in progress":
        return exercise.status
    if line := summary(exercise):
        return f"[red]{markup.rich(line)}[/]"
    failing = [cases[0].title or name for (name, _), cases in exercise.grouped().items()
               if any(c.outcome == "failed" for c in cases)]
    return f"{len(failing)} check{'s' * (len(failing) > 1)} failing: {markup.rich(failing[0])}" if failing else ""


def _details(exercise: ExerciseResult, console, room: int):
    """The exercise's failures, one message each, as many as ``room`` lines hold; then what was left out."""
    console.print(f"[bold]{exercise.name}.py[/]: {_fmt(exercise.score)}/{_fmt(exercise.max_score)} points")
    room -= 1
    problems = [_first_problem(name, failed) for (name, _), cases in exercise.grouped().items()
                if (failed := [c for c in cases if c.outcome == "failed"])]
    for number, problem in enumerate(problems):
        left = len(problems) - number - 1
        height = len(console.render_lines(Text.from_markup(problem), console.options))
        if height > room - (left > 0):
            console.print(f"  [dim]... {len(problems) - number} more: softlookup check --exercise {exercise.name}[/]")
            return
        console.print(problem)
        room -= height


def cases(result: SubmissionResult, check: str, console) -> int:
    """Every case of ``check`` in each exercise graded, with its own outcome and message; how many were shown."""
    shown = 0
    for exercise in cleaned(result).exercises:
        for (name, hidden), found in exercise.grouped().items():
            if name != check:
                continue
            console.print(f"[bold]{exercise.name}.py: {name}[/]" + (" [dim](hidden)[/]" if hidden else ""))
            for case in found:
                mark = {"passed": "[green]✓", "failed": "[red]✗"}.get(case.outcome, "[yellow]○")
                where = f" \\[{markup.rich(case.case)}]" if case.case else ""
                message = f": {markup.rich(case.message)}" if case.message else ""
                console.print(f"  {mark}{where} {case.outcome}[/]{message}", soft_wrap=not console.is_terminal)
                shown += 1
    return shown
