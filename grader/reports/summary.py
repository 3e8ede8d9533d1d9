"""The class summary: how the scores fall, what to teach again, and what was never there to grade.

A check fails for two unrelated reasons. A student who did not start an
exercise, or whose module is missing or cannot be read, fails all its checks:
that says nothing about what they misunderstood, and ranked among the rest it
buries the one signal a teacher needs. So it is counted apart, per exercise
(:func:`absences`). What is left, checks that ran on a student's own code and
failed, is grouped by the mistake the verdict names (:func:`mistakes`):
the stable name a check gives its diagnosis (``CheckResult.mistake``, listed
with a line of text per exercise in ``grader/checks/exercises.toml``), which
stays the same whichever check, inputs and wording told it; the mistakes
catalogued in ``tests/mistakes.py`` are required to be told theirs. A
verdict that names none (a comparison with the reference, a wrong shape)
is grouped by what its message advises: a message first says what was wrong
with the numbers, which differs with every input, then the advice, with
numbers blanked out (:func:`blanked`) and names kept. Such a failure counts
only for a student with no named mistake in that exercise: once a mistake
is named, the comparisons it also fails (a hidden check's among them) say
nothing more about it. Code that ran out of time or memory, or crashed,
says nothing about the lesson either (and a loop in softmax stops the
lookups that call it too): those are counted apart, per exercise
(:func:`stopped`).
"""

from __future__ import annotations

import base64
import functools
import html
import io
import re
import statistics
import textwrap
from collections import Counter
from dataclasses import dataclass, field

from grader.engine import registry
from grader.engine.results import (ERROR_STATUS, STATUSES, CheckResult, ErrorKind, ExerciseResult, SubmissionResult,
                                   writable)
from grader.reports import inert, integrity
from grader.reports.integrity import Integrity
from grader.reports.verdicts import points

# Why an exercise has nothing of a student's to grade, or some checks of it no code to run, in the order shown:
# the statuses of the gradebook (grader.engine.results.STATUSES), and functions left as stubs in a started exercise.
ABSENCES = ("not-started", "missing", "syntax-error", "invalid", "import-error", "missing-function",
            "functions not started")
NOTHING_RAN = (ErrorKind.SYNTAX, ErrorKind.INVALID, ErrorKind.IMPORT)  # a module no check could call into
# Why a failed check judged no code of the student's: counted apart, never as a mistake (the message is theirs).
NOT_RUN = {ErrorKind.NOT_IMPLEMENTED, ErrorKind.MISSING_FUNCTION, *NOTHING_RAN}
# Why a student's code gave no answer to judge, by its checks' errors: apart from the lesson's mistakes.
STOPPED = {ErrorKind.TIMEOUT: "ran out of time", ErrorKind.MEMORY: "ran out of memory",
           ErrorKind.DISK: "filled its scratch folder", ErrorKind.CRASH: "crashed", ErrorKind.EXIT: "crashed",
           ErrorKind.JUDGE_DIED: "crashed"}  # a judge killed twice: graded no further


NOTHING_TO_GRADE = "Not started, missing, unreadable or not importable"


@dataclass
class Mistake:
    """One mistake across the class: what the checks told, which checks, and how many made it of how many."""

    exercise: str
    told: str  # the named mistake's line of text; else the verdict's advice (or whole message), numbers blanked out
    name: str = ""  # the stable name the verdicts gave it, "" where they named none
    checks: set[str] = field(default_factory=set)  # titles of the checks that told it, "(hidden)" marked
    students: set[str] = field(default_factory=set)
    attempted: int = 0  # students whose code for this exercise was graded


# A number that stands alone: not the 2 of gpt2_values.py or of d2, nor the k of sqrt(d_k).
_NUMBERS = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?(?!\w)")
# An array or list of them once blanked (``[… …]``, ``[[…, …], […, …]]``), not an index (``x[…]``).
_BLANKED_LIST = re.compile(r"(?<![\w\])])\[[\s,.…]*\]")


@functools.lru_cache(maxsize=4096)  # a class repeats its messages
def blanked(message: str) -> str:
    """``message`` with its numbers blanked out (…), so that students told the same thing count together."""
    message = _NUMBERS.sub("…", message)
    while (shorter := _BLANKED_LIST.sub("…", message)) != message:
        message = shorter
    return message


def told(message: str) -> str:
    """The mistake a verdict names: what follows its first sentence (the numbers it got wrong), blanked out;
    the whole message where it has one sentence only (a shape, a time limit, an exception)."""
    message = blanked(message)
    _, stop, advice = message.partition(". ")
    return advice.strip() if stop and advice.strip() else message


def diagnosis(case: CheckResult) -> tuple[str, str]:
    """The mistake a failed case names, as the summary groups it: (stable name, its line of text), or, where the
    verdict names none, ("", :func:`told` of its message)."""
    exercise = registry.BY_MODULE.get(case.exercise)
    if case.mistake and exercise is not None and case.mistake in exercise.mistakes:
        return case.mistake, exercise.mistakes[case.mistake]
    return "", told(case.message)


def absence(exercise: ExerciseResult) -> str | None:
    """Why none of the exercise's checks ran on a student's own code, if none did: its status (of
    :data:`ABSENCES`), from its checks' errors; never the student's own message, which is no mistake of the class."""
    errors = {check.error for check in exercise.checks if not check.passed}
    if ErrorKind.MISSING in errors:
        return "missing"
    if exercise.status == "not started":
        return "not-started"
    return next((ERROR_STATUS[kind] for kind in NOTHING_RAN if kind in errors), None)


def absences(graded: dict[str, SubmissionResult]) -> dict[str, Counter]:
    """Per exercise, how many students had nothing to grade there, by why; and how many called a function their
    module lacks, or left functions of an exercise they started unimplemented (those checks count here, not as
    mistakes)."""
    table: dict[str, Counter] = {}
    for result in graded.values():
        for exercise in result.exercises:
            counts = table.setdefault(exercise.name, Counter())
            if why := absence(exercise):
                counts[why] += 1
                continue
            errors = {check.error for check in exercise.checks}
            counts.update({"missing-function"} & {ERROR_STATUS.get(error) for error in errors})
            if ErrorKind.NOT_IMPLEMENTED in errors:
                counts["functions not started"] += 1
    return table


def stopped(graded: dict[str, SubmissionResult]) -> dict[str, Counter]:
    """Per exercise, how many students' code ran out of time, ran out of memory or crashed in some check."""
    table: dict[str, Counter] = {}
    for result in graded.values():
        for exercise in result.exercises:
            counts = table.setdefault(exercise.name, Counter())
            for why in {STOPPED[check.error] for check in exercise.checks if check.error in STOPPED}:
                counts[why] += 1
    return table


def mistakes(graded: dict[str, SubmissionResult]) -> list[Mistake]:
    """The mistakes students made in code they wrote, the most made first (not a loop's or a crash's checks)."""
    found: dict[tuple[str, str], Mistake] = {}
    attempted = Counter()
    for student, result in graded.items():
        for exercise in result.exercises:
            if absence(exercise):
                continue
            attempted[exercise.name] += 1
            told_here = {}  # (name, text) -> the checks that told it, for this student and exercise
            for (name, hidden), cases in exercise.grouped().items():
                failed = [case for case in cases if case.outcome == "failed"
                          and case.error not in NOT_RUN and case.error not in STOPPED]
                # Each mistake the failed cases named, once; a check whose cases named none, by its first's advice.
                diagnosed = [diagnosis(case) for case in failed]
                for each in {d for d in diagnosed if d[0]} or diagnosed[:1]:
                    told_here.setdefault(each, set()).add((cases[0].title or name) + " (hidden)" * hidden)
            if any(name_of for name_of, _ in told_here):  # a named mistake explains the unnamed failures
                told_here = {diagnosed: checks for diagnosed, checks in told_here.items() if diagnosed[0]}
            for (name_of, text), checks in told_here.items():
                mistake = found.setdefault((exercise.name, name_of or text), Mistake(exercise.name, text, name_of))
                mistake.checks |= checks
                mistake.students.add(student)
    for mistake in found.values():
        mistake.attempted = attempted[mistake.exercise]
    return sorted(found.values(), key=lambda mistake: (-len(mistake.students), mistake.exercise, mistake.told))


def statuses_line(graded: dict[str, SubmissionResult]) -> str:
    """How many students had each status, worst last: "Statuses: ok 38, not-started 1, import-error 1." (the
    summary's, and the line ``softlookup grade`` ends with)."""
    statuses = Counter(result.status for result in graded.values())
    return "Statuses: " + ", ".join(f"{status} {statuses[status]}" for status in STATUSES if statuses[status]) + "."


def markdown(graded: dict[str, SubmissionResult], findings: Integrity | None = None) -> str:
    """summary.md: the scores, the mistakes to teach again, what was not there to grade, and ``findings`` for a
    person to look at (:mod:`grader.reports.integrity`)."""
    inline = inert.inline
    scores = [result.score for result in graded.values()]
    maximum = max((result.max_score for result in graded.values()), default=0)
    lines = [f"# Class summary: {len(graded)} students", ""]
    if scores:
        quartiles = statistics.quantiles(scores, n=4) if len(scores) > 1 else [scores[0]] * 3
        lines += [f"Scores out of {points(maximum)}: mean {statistics.mean(scores):.1f}, median "
                  f"{_figure(statistics.median(scores))}, quartiles {_figure(quartiles[0])} / "
                  f"{_figure(quartiles[2])}, lowest {_figure(min(scores))}, highest {_figure(max(scores))}.", "",
                  statuses_line(graded), "", "## Distribution", "", "```"]
        lines += _text_histogram(scores, maximum) + ["```", ""]
    lines += ["## What to reteach", "", "The mistakes that checks named in code students wrote, by how many "
              "students made them (numbers blanked out). Exercises not started, missing, unreadable or raising "
              "at import, and functions missing, are counted below, not here.", ""]
    found = mistakes(graded)
    if found:
        lines += ["| mistake | students | exercise: checks |", "| --- | --- | --- |"]
        lines += [f"| {inert.kit_inline(m.told)}{f' (`{m.name}`)' if m.name else ''} | {len(m.students)} of "
                  f"{m.attempted} | "
                  f"{inline(m.exercise)}: "
                  f"{inline(', '.join(sorted(m.checks)))} |" for m in found]
    else:
        lines.append("No check failed on code a student wrote.")
    lines += ["", "## Ran out of time or memory, or crashed", "",
              "Students whose code gave no answer to some checks of an exercise (a loop stops the exercises that "
              "import it too); those checks are not counted as mistakes above.", ""]
    halted = stopped(graded)
    kinds = sorted(set(STOPPED.values()), key=list(STOPPED.values()).index)
    if any(halted.values()):
        lines += ["| exercise | " + " | ".join(kinds) + " |", "|" + " --- |" * (len(kinds) + 1)]
        lines += [f"| {inline(exercise)} | " + " | ".join(str(counts[why]) for why in kinds) + " |"
                  for exercise, counts in halted.items() if counts]
    else:
        lines.append("No student's code ran out of time or memory, or crashed.")
    lines += ["", f"## {NOTHING_TO_GRADE}", "", "Students with nothing of theirs to grade in an exercise, or in some "
              "checks of it, counted by status: it teaches nothing about the lesson.", ""]
    table = absences(graded)
    if any(table.values()):
        lines += ["| exercise | " + " | ".join(ABSENCES) + " |", "|" + " --- |" * (len(ABSENCES) + 1)]
        lines += [f"| {inline(exercise)} | " + " | ".join(str(counts[why]) for why in ABSENCES) + " |"
                  for exercise, counts in table.items() if counts]
    else:
        lines.append("Every student handed in every exercise, and started every function.")
    lines += integrity.markdown(findings) if findings is not None else []
    return "\n".join(lines) + "\n"


def page(graded: dict[str, SubmissionResult], findings: Integrity | None = None) -> str:
    """summary.html: summary.md's tables and findings, with the score histogram and a chart of the mistakes most
    made."""
    found = mistakes(graded)
    body = []
    if graded:
        body.append(f'<img alt="score histogram" src="data:image/png;base64,{_histogram_png(graded)}">')
    body.append("<h2>What to reteach</h2><p>The mistakes that checks named in code students wrote, by how many "
                "students made them (numbers blanked out). Exercises not started, missing, unreadable or raising at "
                "import, and functions missing, are counted below, not here.</p>")
    if found:
        body.append(f'<img alt="students per mistake" src="data:image/png;base64,{_mistakes_png(found)}">')
        body.append("<table><thead><tr><th>mistake</th><th>students</th><th>exercise: checks</th></tr></thead><tbody>")
        body += [f"<tr><td>{html.escape(m.told)}{f' (<code>{html.escape(m.name)}</code>)' if m.name else ''}</td>"
                 f"<td>{len(m.students)} of {m.attempted}</td>"
                 f"<td>{html.escape(m.exercise)}: {html.escape(', '.join(sorted(m.checks)))}</td></tr>" for m in found]
        body.append("</tbody></table>")
    else:
        body.append("<p>No check failed on code a student wrote.</p>")
    body.append("<h2>Ran out of time or memory, or crashed</h2><p>Students whose code gave no answer to some checks "
                "of an exercise (a loop stops the exercises that import it too); those checks are not counted as "
                "mistakes above.</p>")
    halted = stopped(graded)
    kinds = sorted(set(STOPPED.values()), key=list(STOPPED.values()).index)
    if any(halted.values()):
        body.append("<table><thead><tr><th>exercise</th>" + "".join(f"<th>{why}</th>" for why in kinds)
                    + "</tr></thead><tbody>")
        body += [f"<tr><td>{html.escape(exercise)}</td>" + "".join(f"<td>{counts[why]}</td>" for why in kinds)
                 + "</tr>" for exercise, counts in halted.items() if counts]
        body.append("</tbody></table>")
    else:
        body.append("<p>No student's code ran out of time or memory, or crashed.</p>")
    body.append(f"<h2>{NOTHING_TO_GRADE}</h2>")
    table = absences(graded)
    if any(table.values()):
        body.append("<table><thead><tr><th>exercise</th>" + "".join(f"<th>{why}</th>" for why in ABSENCES)
                    + "</tr></thead><tbody>")
        body += [f"<tr><td>{html.escape(exercise)}</td>" + "".join(f"<td>{counts[why]}</td>" for why in ABSENCES)
                 + "</tr>" for exercise, counts in table.items() if counts]
        body.append("</tbody></table>")
    else:
        body.append("<p>Every student handed in every exercise, and started every function.</p>")
    body += integrity.page(findings) if findings is not None else []
    return inert.html_page(f"Class summary: {len(graded)} students", "\n".join(body))  # its one heading


def _histogram_png(graded: dict[str, SubmissionResult]) -> str:
    return _png(histogram_figure(graded))


def histogram_figure(graded: dict[str, SubmissionResult]):
    """The scores' histogram: students counted in whole numbers, as students come."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    scores = [result.score for result in graded.values()]
    maximum = max(result.max_score for result in graded.values())
    figure = Figure(figsize=(7, 3))
    axes = figure.add_subplot()
    axes.hist(scores, bins=min(20, max(1, int(maximum) or 1)), range=(0, maximum or 1), color="#4477aa")
    axes.set_xlabel(f"score (out of {points(maximum)})")
    axes.set_ylabel("students")
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    return figure


def _mistakes_png(found: list[Mistake]) -> str:
    return _png(mistakes_figure(found))


CHART_ROWS = 10  # the chart shows the mistakes most made; the table below it lists them all


def mistakes_figure(found: list[Mistake]):
    """The mistakes most made, a bar each, labelled with how many made it of how many attempted the exercise:
    the label cut between words, students in whole numbers."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    shown = found[:CHART_ROWS][::-1]
    labels = [chart_label(m) for m in shown]
    figure = Figure(figsize=(9, 0.45 * sum(label.count("\n") + 1 for label in labels) + 1.2))
    axes = figure.add_subplot()
    bars = axes.barh(range(len(shown)), [len(m.students) for m in shown], color="#cc6677")
    axes.bar_label(bars, [f" {len(m.students)} of {m.attempted}" for m in shown], fontsize=8)
    axes.set_yticks(range(len(shown)), labels)
    axes.set_xlabel("students who made the mistake")
    axes.set_title(f"The {len(shown)} mistakes most made" + (f", of {len(found)}" if len(found) > len(shown) else ""),
                   fontsize=10)
    axes.tick_params(axis="y", labelsize=7)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlim(0, max(len(m.students) for m in shown) * 1.15)  # room for the counts
    return figure


def chart_label(mistake: Mistake, width: int = 60, lines: int = 2) -> str:
    """A mistake's label on the chart: its exercise and what it is, on at most ``lines`` lines of ``width``,
    cut between words (a … where it goes on)."""
    wrapped = textwrap.wrap(writable(f"{mistake.exercise}: {mistake.told}"), width)
    if len(wrapped) > lines:
        wrapped[lines - 1:] = [textwrap.shorten(" ".join(wrapped[lines - 1:]), width, placeholder=" …")]
    return "\n".join(wrapped)


def warm_charts():
    """Draw a chart nobody sees: matplotlib's imports and fonts (a third of a second) are then paid before the
    gradebook's charts are drawn. ``softlookup grade`` calls it in a thread while its judges grade; it joins that
    thread before drawing the gradebook's charts, so that only one thread draws at a time."""
    try:
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator  # noqa: F401 (what the histogram imports too)

        _png(Figure(figsize=(1, 1)))
    except Exception:  # the gradebook's own charts will say what is wrong
        pass


def _png(figure) -> str:
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=100)
    return base64.b64encode(buffer.getvalue()).decode()


def _figure(value: float) -> str:
    """A score as the summary's sentence gives it: one decimal at most (117.7, 59.5, 60), as a reader takes it in."""
    return f"{value:.1f}".removesuffix(".0")


def _text_histogram(scores: list[float], maximum: float, bins: int = 10) -> list[str]:
    """One line per bin: its range, padded to the widest, so every bar starts in the same column."""
    width = (maximum or 1) / bins
    counts = Counter(min(int(score / width), bins - 1) for score in scores)
    most = max(counts.values())
    ranges = [f"{_figure(i * width)}–{_figure((i + 1) * width)}" for i in range(bins)]
    pad = max(map(len, ranges))
    return [f"{ranges[i]:<{pad}} {'#' * round(30 * counts[i] / most):<30} {counts[i]}" for i in range(bins)]
