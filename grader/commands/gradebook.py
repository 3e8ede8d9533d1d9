"""What a graded class turns into: per-student files, the gradebook and the reteach summary.

Every function here reads :class:`~grader.engine.results.SubmissionResult` objects
and nothing else; ``softlookup grade`` calls them, and a class graded by any
other road (the Gradescope autograder, say) could call them too.

Per student, in ``OUT/<student>/``: ``softlookup.json`` (the whole result,
which also marks the student as graded), ``results.json`` (Gradescope's
schema), ``feedback.md`` and ``feedback.html``. For the class, in ``OUT/``:
``grades.csv``, ``summary.md`` and ``summary.html``. Feedback never shows a
hidden check's inputs or expected values, only that it failed.
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import html
import io
import json
import re
import statistics
from collections import Counter
from pathlib import Path

from grader.engine.results import STATUSES, SubmissionResult, gradescope, write_atomically

RESULT_FILE = "softlookup.json"
HIDDEN_FEEDBACK = ("differs from the reference on inputs that stay hidden: test your function on inputs "
                   "of your own (other shapes, other values) against what its docstring promises")


def redacted(result: SubmissionResult) -> SubmissionResult:
    """The result a student may see: a hidden check says it failed, not on what or what was expected."""
    copy = SubmissionResult.from_plain(result.to_plain())
    for exercise in copy.exercises:
        for check in exercise.checks:
            if check.hidden and check.outcome == "failed" and not check.error:
                check.message, check.printed = HIDDEN_FEEDBACK, ""
    return copy


def markdown(result: SubmissionResult, student: str) -> str:
    """A student's feedback: their table per exercise and, for every failed check, what went wrong."""
    lines = [f"# Feedback for {student}", "",
             f"**{_points(result.score)}/{_points(result.max_score)} points**", ""]
    for exercise in result.exercises:
        lines += [f"## {exercise.name}.py: {exercise.title}: {_points(exercise.score)}/"
                  f"{_points(exercise.max_score)} points, {exercise.status}", "",
                  "| check | points | result |", "| --- | --- | --- |"]
        problems = []
        for (name, hidden), cases in exercise.grouped().items():
            earned, possible = sum(c.points for c in cases), sum(c.max_points for c in cases)
            passed = sum(c.passed for c in cases)
            verdict = "passed" if passed == len(cases) else f"{passed} of {len(cases)} cases passed"
            title = _cell(cases[0].title or name) + (" *(hidden)*" if hidden else "")
            lines.append(f"| {title} | {_points(earned)}/{_points(possible)} | {verdict} |")
            failed = [c for c in cases if c.outcome == "failed"]
            if failed:
                problems.append(f"- **{_cell(cases[0].title or name)}**: {failed[0].message}")
                if failed[0].printed:
                    problems.append("  Your code printed:\n\n  ```\n" + _indent(failed[0].printed) + "\n  ```")
        lines += ["", *problems, ""] if problems else [""]
    return "\n".join(lines)


def feedback_html(result: SubmissionResult, student: str) -> str:
    from grader.engine.results import html as table

    return _page(f"Feedback for {student}", table(result))


def write_student(folder: Path, student: str, result: SubmissionResult):
    """The student's four files; softlookup.json last, because it marks the student as graded."""
    folder.mkdir(parents=True, exist_ok=True)
    shown = redacted(result)
    write_atomically(folder / "results.json", json.dumps(gradescope(result), indent=2) + "\n")
    write_atomically(folder / "feedback.md", markdown(shown, student))
    write_atomically(folder / "feedback.html", feedback_html(shown, student))
    write_atomically(folder / RESULT_FILE, json.dumps({"student": student, **result.to_plain()}) + "\n")


def read_student(folder: Path) -> tuple[str, SubmissionResult] | None:
    """A graded student's id and result, or None if the folder holds no complete result."""
    try:
        plain = json.loads((folder / RESULT_FILE).read_text())
        return plain.pop("student"), SubmissionResult.from_plain(plain)
    except (OSError, ValueError, KeyError, TypeError):
        return None


# -- the class -----------------------------------------------------------------------------------


def grades_csv(graded: dict[str, SubmissionResult], exercises: list[str]) -> str:
    """``student,score,max_score,status`` and one column per exercise, a row per student."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["student", "score", "max_score", "status", *exercises])
    for student in sorted(graded):
        result = graded[student]
        scores = {exercise.name: exercise.score for exercise in result.exercises}
        writer.writerow([student, _points(result.score), _points(result.max_score), result.status,
                         *[_points(scores.get(name, 0.0)) for name in exercises]])
    return out.getvalue()


@dataclasses.dataclass
class CheckFailures:
    """One check across the class: how many failed it, and the likely mistakes they were told."""

    exercise: str
    title: str
    hidden: bool
    failed: int
    graded: int
    mistakes: list[tuple[str, int]]  # (message with its numbers blanked out, how many students got it)


_NUMBERS = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?%?|\[[^\]]*\]")


def check_failures(graded: dict[str, SubmissionResult]) -> list[CheckFailures]:
    """Every check, the most failed first: what to reteach."""
    table: dict[tuple[str, str, bool], dict] = {}
    for result in graded.values():
        for exercise in result.exercises:
            for (name, hidden), cases in exercise.grouped().items():
                entry = table.setdefault((exercise.name, cases[0].title or name, hidden),
                                         {"failed": 0, "graded": 0, "mistakes": Counter()})
                entry["graded"] += 1
                failed = [c for c in cases if c.outcome == "failed"]
                if failed:
                    entry["failed"] += 1
                    entry["mistakes"][_NUMBERS.sub("…", failed[0].message)] += 1
    rows = [CheckFailures(exercise, title, hidden, e["failed"], e["graded"], e["mistakes"].most_common(3))
            for (exercise, title, hidden), e in table.items()]
    return sorted(rows, key=lambda row: -row.failed)


def summary_markdown(graded: dict[str, SubmissionResult]) -> str:
    scores = [result.score for result in graded.values()]
    maximum = max((result.max_score for result in graded.values()), default=0)
    statuses = Counter(result.status for result in graded.values())
    lines = [f"# Class summary: {len(graded)} students", ""]
    if scores:
        quartiles = statistics.quantiles(scores, n=4) if len(scores) > 1 else [scores[0]] * 3
        lines += [f"Scores out of {_points(maximum)}: mean {statistics.mean(scores):.1f}, median "
                  f"{statistics.median(scores):g}, quartiles {quartiles[0]:g} / {quartiles[2]:g}, lowest "
                  f"{min(scores):g}, highest {max(scores):g}.", "",
                  "Statuses: " + ", ".join(f"{status} {statuses[status]}" for status in STATUSES
                                           if statuses[status]) + ".", "", "## Distribution", "", "```"]
        lines += _text_histogram(scores, maximum) + ["```", ""]
    lines += ["## What to reteach", "", "Checks by how many students failed them, with what they were told "
              "(numbers blanked out).", "", "| check | failed | most common message |", "| --- | --- | --- |"]
    for row in check_failures(graded):
        if row.failed:
            told = "<br>".join(f"{count}×: {_cell(message)}" for message, count in row.mistakes)
            hidden = " *(hidden)*" if row.hidden else ""
            lines.append(f"| {row.exercise}: {_cell(row.title)}{hidden} | {row.failed}/{row.graded} | {told} |")
    return "\n".join(lines) + "\n"


def summary_html(graded: dict[str, SubmissionResult]) -> str:
    """The summary with two charts: the score histogram and failures per check."""
    rows = [row for row in check_failures(graded) if row.failed]
    body = [f"<h1>Class summary: {len(graded)} students</h1>"]
    if graded:
        body.append(f'<img alt="score histogram" src="data:image/png;base64,{_histogram_png(graded)}">')
    if rows:
        body.append(f'<img alt="failures per check" src="data:image/png;base64,{_failures_png(rows)}">')
    body.append("<h2>What to reteach</h2><table><thead><tr><th>check</th><th>failed</th>"
                "<th>most common message (numbers blanked out)</th></tr></thead><tbody>")
    for row in rows:
        told = "<br>".join(f"{count}×: {html.escape(message)}" for message, count in row.mistakes)
        hidden = " <i>(hidden)</i>" if row.hidden else ""
        body.append(f"<tr><td>{html.escape(row.exercise)}: {html.escape(row.title)}{hidden}</td>"
                    f"<td>{row.failed}/{row.graded}</td><td>{told}</td></tr>")
    body.append("</tbody></table>")
    return _page("Class summary", "\n".join(body))


def _histogram_png(graded: dict[str, SubmissionResult]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scores = [result.score for result in graded.values()]
    maximum = max(result.max_score for result in graded.values())
    figure, axes = plt.subplots(figsize=(7, 3))
    axes.hist(scores, bins=min(20, max(1, int(maximum) or 1)), range=(0, maximum or 1), color="#4477aa")
    axes.set_xlabel(f"score (out of {_points(maximum)})")
    axes.set_ylabel("students")
    return _png(figure)


def _failures_png(rows: list[CheckFailures]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = rows[:25]
    figure, axes = plt.subplots(figsize=(8, 0.3 * len(shown) + 1))
    labels = [f"{row.exercise}: {row.title[:50]}" for row in shown][::-1]
    axes.barh(labels, [row.failed for row in shown][::-1], color="#cc6677")
    axes.set_xlabel("students who failed the check")
    axes.tick_params(axis="y", labelsize=7)
    return _png(figure)


def _png(figure) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode()


def _text_histogram(scores: list[float], maximum: float, bins: int = 10) -> list[str]:
    width = (maximum or 1) / bins
    counts = Counter(min(int(score / width), bins - 1) for score in scores)
    most = max(counts.values())
    return [f"{_points(i * width):>5}–{_points((i + 1) * width):<5} {'#' * round(30 * counts[i] / most):<30} "
            f"{counts[i]}" for i in range(bins)]


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:.3em .6em;vertical-align:top}</style></head>\n"
            f"<body>\n<h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n")


def _cell(text: str) -> str:
    """Text for a Markdown table cell: no pipes or line breaks to break the row."""
    return text.replace("|", "\\|").replace("\n", " ")


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _points(points: float) -> str:
    return f"{points:g}" if abs(points - round(points)) < 1e-9 else f"{points:.2f}"
