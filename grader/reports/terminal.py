"""The result model in a terminal: the full report, the ``--watch`` screen, and every case of one check.

The full report (:func:`render`) shows every check of every exercise
started: right after a save, in a terminal of 24 lines, the failure just
caused scrolls away under the tables that still pass. The watch screen
(:func:`watch_screen`) is made to fit instead: one line per exercise, then
the failures of the exercise that changed (or else the first one not done),
as many as the terminal's height leaves room for, and the total.

The report shows one message per check, and counts the cases that failed
otherwise; ``softlookup check --cases CHECK`` prints each case of that check
with its own message (:func:`cases`), without pytest's log.
"""

from __future__ import annotations

from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from grader.engine.results import CheckResult, ExerciseResult, SubmissionResult, cleaned
from grader.reports import markup
from grader.reports.verdicts import Problem, points, summary, verdict


def render(result: SubmissionResult, console) -> None:
    """The terminal report: a table per exercise, then each failed check's first message.

    Into a pipe (no terminal) rich would wrap everything at 80 columns, in the
    middle of a verdict; there every table and message is printed whole, one
    line each, and whatever reads the pipe decides how to wrap.
    """
    result = cleaned(result)  # a terminal cannot take a lone surrogate either
    if result.unprotected:
        _print_whole(console, f"[yellow]Learner code ran without: {escape('; '.join(result.unprotected))}.[/]")
    for exercise in result.exercises:
        # One line when one thing explains every failure, so a first run reads as a to-do list.
        heading = f"[bold]{exercise.name}.py[/]: {escape(exercise.title)}: [bold]0/{points(exercise.max_score)}[/] points"
        if (line := summary(exercise)) == "not started":
            _print_whole(console, f"{heading}, not started [dim](stuck? softlookup hint {exercise.name})[/]")
            continue
        if line:
            _print_whole(console, f"{heading}: [red]{markup.rich(line)}[/]")
            continue
        table = Table(title=f"{exercise.name}.py: {escape(exercise.title)}", title_justify="left")
        table.add_column("check")
        table.add_column("points", justify="right")
        table.add_column("result")
        problems = {}
        for (name, hidden), cases in exercise.grouped().items():
            earned, possible = sum(c.points for c in cases), sum(c.max_points for c in cases)
            failed = [c for c in cases if c.outcome == "failed"]
            problems[name] = failed or [c for c in cases if c.outcome == "skipped"]
            label = markup.rich(cases[0].title or name) + (" [dim](hidden)[/]" if hidden else "")
            table.add_row(label, f"{points(earned)}/{points(possible)}", _verdict(cases))
        _print_whole(console, table)
        _print_whole(console, f"  [bold]{points(exercise.score)}/{points(exercise.max_score)}[/] points, {exercise.status}")
        for name, cases in problems.items():
            if cases:
                _print_whole(console, _first_problem(name, cases))
                if cases[0].printed:  # what the learner's own prints said while the check ran
                    _print_whole(console, _indented(cases[0].printed))
        console.print()
    _print_whole(console, f"[bold]Total: {points(result.score)}/{points(result.max_score)}[/] ({result.seconds:.1f} s)")


def _verdict(cases: list[CheckResult]) -> str:
    words, colour = verdict(cases)
    return f"[{colour}]{words}[/]"


def _first_problem(name: str, cases: list[CheckResult]) -> str:
    problem = Problem.of(name, cases)
    mark = "[yellow]○" if problem.first.outcome == "skipped" else "[red]✗"
    where = f" \\[{escape(', '.join(problem.cases))}]" if problem.cases else ""
    repeated = f" (× {len(problem.cases)} cases)" if len(problem.cases) > 1 else ""
    others = problem.others
    otherwise = (f" [dim](and {others} more case{'s' * (others > 1)} with other messages: --cases {name} shows "
                 "every one)[/]") if others else ""
    return f"  {mark} {name}{where}{repeated}[/]: {markup.rich(problem.first.message)}{otherwise}"


def _indented(printed: str) -> str:
    return "\n".join(f"      [dim]{escape(line)}[/]" for line in printed.splitlines())


def _print_whole(console, renderable) -> None:
    """Print without rich's wrapping when there is no terminal: a pipe gets whole lines."""
    if console.is_terminal:
        console.print(renderable)
    elif isinstance(renderable, str):
        console.print(renderable, soft_wrap=True)
    else:
        width = console.width
        console.width = max(width, Measurement.get(console, console.options.update_width(10**4), renderable).maximum)
        try:
            console.print(renderable)
        finally:
            console.width = width


# -- the watch screen and --cases ------------------------------------------------------------

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
                      f"{points(exercise.score)}/{points(exercise.max_score)}",
                      _one_line(_status(exercise)))
    if result.unprotected:
        told = (escape(result.unprotected[0]) if len(result.unprotected) == 1
                else f"{len(result.unprotected)} protections (softlookup check says which)")
        console.print(f"[yellow]Learner code ran without: {told}.[/]", no_wrap=True, overflow="ellipsis")
    console.print(lines)
    focus = next((e for e in result.exercises if e.name in changed and e.status == "in progress"), None) or next(
        (e for e in result.exercises if e.status == "in progress"), None)
    # What stays on screen below the details: the total and watch's own line.
    room = console.height - len(result.exercises) - bool(result.unprotected) - 3
    if focus is not None:
        _details(focus, console, room)
    console.print(f"[bold]Total: {points(result.score)}/{points(result.max_score)}[/] ({result.seconds:.1f} s)")


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
    console.print(f"[bold]{exercise.name}.py[/]: {points(exercise.score)}/{points(exercise.max_score)} points")
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
