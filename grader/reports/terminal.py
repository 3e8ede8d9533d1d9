"""The result model in a terminal: the full report, the ``--watch`` screen, and every case of one check.

The full report (:func:`render`) shows every check of every exercise
started. On a terminal it is printed only where it fits: right after a save,
in a terminal of 24 lines, the failures just caused would scroll away under
the tables that still pass. Where it does not fit, the learner gets the
screen ``--watch`` draws (:func:`watch_screen`) instead: one line per
exercise, then the failures of the first exercise in progress, as many as
the terminal's height leaves room for (what the learner's code printed
under each), and the total, with the command that shows the whole report.
A pipe or a file gets the whole report, its tables as plain rows: one line
each, never cut, never padded.

The report shows one message per check, and counts the cases that failed
otherwise; ``softlookup check --cases CHECK`` prints each case of that check
with its own message (:func:`cases`), without pytest's log. Under plain
``pytest`` the report names pytest's way instead (:data:`PYTEST`).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from grader.engine.results import CheckResult, ExerciseResult, SubmissionResult, writable_copy
from grader.reports import markup
from grader.reports.verdicts import Problem, one_line, points, verdict


@dataclass(frozen=True)
class Road:
    """What the learner types for every case of one check, on the road they came by ({check}: its name)."""

    every_case: str


CHECK = Road("softlookup check --cases {check}")
PYTEST = Road("pytest -k {check} --tb=short")  # the failures' section, each case with its own message
WHOLE_REPORT = "add | less for the whole report"  # short: the total and this stay on one line of 80
INDENT = "    "  # where the second line of a message starts: under the message, not flush left


def render(result: SubmissionResult, console, road: Road = CHECK, reserve: int | None = 1) -> None:
    """The terminal report: a table per exercise, then each failed check's first message.

    On a terminal where it does not fit (``reserve``: the lines the caller
    prints after it, the prompt included; None: print it whole anyway), the
    fitted screen instead. Into a pipe (no terminal) every table row and
    message is one line, whole: whatever reads the pipe decides how to wrap.
    """
    result = writable_copy(result)  # a terminal cannot take a lone surrogate either
    if console.is_terminal and reserve is not None and _height(result, console, road) > console.height - reserve:
        _screen(result, console, set(), reserve, road)
        return
    _report(result, console, road)


def _height(result: SubmissionResult, console, road: Road) -> int:
    """How many lines the full report takes on ``console``'s terminal."""
    probe = Console(file=io.StringIO(), width=console.width, height=console.height, force_terminal=True,
                    color_system=None, highlight=False)
    _report(result, probe, road)
    return probe.file.getvalue().count("\n")


def _report(result: SubmissionResult, console, road: Road) -> None:
    if result.unprotected:
        _print_whole(console, f"[yellow]Learner code ran without: {escape('; '.join(result.unprotected))}.[/]")
    for exercise in result.exercises:
        # One line when one thing explains every failure, so a first run reads as a to-do list.
        heading = f"[bold]{exercise.name}.py[/]: {escape(exercise.title)}: [bold]0/{points(exercise.max_score)}[/] points"
        if (line := one_line(exercise)) == "not started":
            _print_whole(console, f"{heading}, not started [dim](stuck? softlookup hint {exercise.name})[/]")
            continue
        if line:
            _print_whole(console, f"{heading}: [red]{_hanging(markup.rich(line))}[/]")
            continue
        problems, rows = {}, []
        for (name, hidden), cases in exercise.grouped().items():
            earned, possible = sum(c.points for c in cases), sum(c.max_points for c in cases)
            failed = [c for c in cases if c.outcome == "failed"]
            problems[name] = failed or [c for c in cases if c.outcome == "skipped"]
            label = markup.rich(cases[0].title or name) + (" [dim](hidden)[/]" if hidden else "")
            rows.append((label, f"{points(earned)}/{points(possible)}", *verdict(cases)))
        _table(console, f"{exercise.name}.py: {escape(exercise.title)}", rows)
        _print_whole(console, f"  [bold]{points(exercise.score)}/{points(exercise.max_score)}[/] points, {exercise.status}")
        for name, cases in problems.items():
            if cases:
                _print_whole(console, _first_problem(name, cases, road))
                if cases[0].printed:  # what the learner's own prints said while the check ran
                    _print_whole(console, _indented(cases[0].printed))
        console.print()
    _print_whole(console, f"[bold]Total: {points(result.score)}/{points(result.max_score)}[/] ({result.seconds:.1f} s)")


def _table(console, title: str, rows: list[tuple[str, str, str, str]]) -> None:
    """An exercise's checks: a table on a terminal; in a pipe, a heading and one plain line per check."""
    if console.is_terminal:
        table = Table(title=title, title_justify="left")
        table.add_column("check")
        table.add_column("points", justify="right")
        table.add_column("result")
        for label, earned, words, colour in rows:
            table.add_row(label, earned, f"[{colour}]{words}[/]")
        console.print(table)
        return
    console.print(title, soft_wrap=True)
    wide = max(len(earned) for _, earned, _, _ in rows)
    said = max(len(words) for _, _, words, _ in rows)
    for label, earned, words, colour in rows:
        console.print(f"  {earned:>{wide}}  [{colour}]{words}[/]{' ' * (said - len(words))}  {label}", soft_wrap=True)


def _first_problem(name: str, cases: list[CheckResult], road: Road = CHECK) -> str:
    problem = Problem.of(name, cases)
    mark = "[yellow]○" if problem.first.outcome == "skipped" else "[red]✗"
    where = f" \\[{escape(', '.join(problem.cases))}]" if problem.cases else ""
    repeated = f" (× {len(problem.cases)} cases)" if len(problem.cases) > 1 else ""
    others = problem.others
    otherwise = (f" [dim](and {others} more case{'s' * (others > 1)} with other messages: "
                 f"{escape(road.every_case.format(check=name))} shows every one)[/]") if others else ""
    return f"  {mark} {name}{where}{repeated}[/]: {_hanging(markup.rich(problem.first.message))}{otherwise}"


def _hanging(text: str) -> str:
    """A message's later lines (a matrix a check writes row by row) start under it, not at the margin."""
    return text.replace("\n", "\n" + INDENT)


def _indented(printed: str) -> str:
    return "\n".join(f"      [dim]{escape(line)}[/]" for line in printed.splitlines())


def _print_whole(console, text: str) -> None:
    """Print without rich's wrapping when there is no terminal: a pipe gets whole lines."""
    console.print(text, soft_wrap=not console.is_terminal)


# -- the watch screen and --cases ------------------------------------------------------------

MARKS = {"done": "[green]✓[/]", "not started": "[dim]·[/]", "in progress": "[red]✗[/]"}


def watch_screen(result: SubmissionResult, console, changed: set[str] = frozenset()) -> None:
    """The watch screen: one line per exercise, the focus's failures fitted to the terminal, the total.

    ``changed``: the exercises whose file (or a file they import) was just
    saved; the first of them that is not done is the focus, else the first
    exercise in progress. Below it, watch prints its own line.
    """
    _screen(writable_copy(result), console, changed, 2)


def _screen(result: SubmissionResult, console, changed: set[str], reserve: int, road: Road | None = None):
    """The fitted screen, ``reserve`` lines left below it: the watch's own, or (``road`` given) the report cut
    to fit, which then says how to read it whole."""
    fitted = road is not None
    lines = Table.grid(padding=(0, 1), expand=True)
    for justify in ("left", "left", "right"):
        lines.add_column(justify=justify, no_wrap=True)
    lines.add_column(ratio=1)  # the status takes what is left, cut short rather than wrapped
    for exercise in result.exercises:
        lines.add_row(MARKS[exercise.status], f"[bold]{exercise.name}.py[/]",
                      f"{points(exercise.score)}/{points(exercise.max_score)}",
                      _one_line(_status(exercise)))
    if result.unprotected:
        which = escape("; ".join(result.unprotected)) if fitted else "softlookup check says which"
        console.print(f"[yellow]Learner code ran without {len(result.unprotected)} protections ({which}).[/]",
                      no_wrap=True, overflow="ellipsis")
    console.print(lines)
    focus = next((e for e in result.exercises if e.name in changed and e.status == "in progress"), None) or next(
        (e for e in result.exercises if e.status == "in progress"), None)
    # What stays on screen below the details: the total, and what the caller prints after it.
    room = console.height - len(result.exercises) - bool(result.unprotected) - 1 - reserve
    if focus is not None:
        _details(focus, console, room, "in the whole report" if fitted else f"softlookup check --exercise {focus.name}",
                 road or CHECK)
    console.print(f"[bold]Total: {points(result.score)}/{points(result.max_score)}[/] ({result.seconds:.1f} s)"
                  + (f" [dim](cut to fit: {WHOLE_REPORT})[/]" if fitted else ""))


def _one_line(text: str) -> Text:
    line = Text.from_markup(text, overflow="ellipsis")
    line.no_wrap = True
    return line


def _status(exercise: ExerciseResult) -> str:
    if exercise.status != "in progress":
        return exercise.status
    if line := one_line(exercise):
        return f"[red]{markup.rich(line)}[/]"
    failing = [cases[0].title or name for (name, _), cases in exercise.grouped().items()
               if any(c.outcome == "failed" for c in cases)]
    return f"{len(failing)} check{'s' * (len(failing) > 1)} failing: {markup.rich(failing[0])}" if failing else ""


def _details(exercise: ExerciseResult, console, room: int, more: str, road: Road):
    """The exercise's failures, one message each (and what the learner's code printed under it, as room
    allows), as many as ``room`` lines hold; then how many were left out and ``more``, which shows them."""
    console.print(f"[bold]{exercise.name}.py[/]: {points(exercise.score)}/{points(exercise.max_score)} points")
    room -= 1
    failing = [failed for (name, _), cases in exercise.grouped().items()
               if (failed := [c for c in cases if c.outcome == "failed"])]
    for number, failed in enumerate(failing):
        left = len(failing) - number - 1
        problem = _first_problem(failed[0].check, failed, road)
        height = len(console.render_lines(Text.from_markup(problem), console.options))
        if height > room - (left > 0):
            console.print(f"  [dim]... {len(failing) - number} more: {escape(more)}[/]", no_wrap=True,
                          overflow="ellipsis")
            return
        console.print(problem)
        room -= height
        printed = failed[0].printed.splitlines()[:max(0, room - (left > 0) - 1)]
        if printed:  # as many of its lines as leave room for the next failure's line
            console.print(_indented("\n".join(printed)), no_wrap=True, overflow="ellipsis")
            room -= len(printed)


def cases(result: SubmissionResult, check: str, console) -> int:
    """Every case of ``check`` in each exercise graded, with its own outcome and message; how many were shown."""
    shown = 0
    for exercise in writable_copy(result).exercises:
        for (name, hidden), found in exercise.grouped().items():
            if name != check:
                continue
            console.print(f"[bold]{exercise.name}.py: {name}[/]" + (" [dim](hidden)[/]" if hidden else ""))
            for case in found:
                mark = {"passed": "[green]✓", "failed": "[red]✗"}.get(case.outcome, "[yellow]○")
                where = f" \\[{markup.rich(case.case)}]" if case.case else ""
                message = f": {_hanging(markup.rich(case.message))}" if case.message else ""
                console.print(f"  {mark}{where} {case.outcome}[/]{message}", soft_wrap=not console.is_terminal)
                shown += 1
    return shown
