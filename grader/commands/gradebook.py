"""What a graded class turns into: per-student files, the gradebook and the reteach summary.

Every function here reads :class:`~grader.engine.results.SubmissionResult` objects
and nothing else; ``softlookup grade`` calls them, and a class graded by any
other road (the Gradescope autograder, say) could call them too.

Per student, in :func:`student_folder` ``(OUT, id)`` (``OUT/<student>/``, the id
itself unless it could be taken for one of the kit's own files):
``softlookup.json`` (the whole result, which also marks the student as
graded), ``results.json`` (Gradescope's schema), ``feedback.md`` and
``feedback.html``. For the class, in ``OUT/``: :data:`CLASS_FILES`,
``grades.csv``, ``summary.md`` and ``summary.html``.

Everything a student wrote is inert wherever it lands: what the student sees
is :func:`~grader.engine.results.redacted` (a hidden check says that it
failed, never its inputs, expected values or prints), the same for
results.json, feedback.md and feedback.html; a spreadsheet takes no cell of a
student's for a formula (:func:`csv_text`); Markdown quotes a student's text
as text (:func:`inline`, :func:`fenced`) and HTML escapes it.
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import functools
import hashlib
import html
import io
import json
import os
import re
import statistics
from collections import Counter
from pathlib import Path

from grader.engine.results import redacted
from grader.engine.results import (STATUSES, SubmissionResult, cleaned, encodable, gradescope, verdict,
                                   write_atomically)

RESULT_FILE = "softlookup.json"
CLASS_FILES = ("grades.csv", "summary.md", "summary.html")  # the kit's own files in OUT, beside the students' folders
_MARK = "_"  # what starts a student's folder whose id cannot be its name
_NAME_BYTES = 255  # the longest file name most file systems allow


# -- where a student's files go ------------------------------------------------------------------


def student_folder(out: Path, student: str) -> Path:
    """The folder of ``student``'s files in ``out``: where they are written and where a rerun finds them.

    It is named by the id, except for an id that could be taken for one of
    the kit's own entries in ``out``: one of :data:`CLASS_FILES` (in any case,
    for file systems that ignore case), a hidden name (``.x``, as the kit's
    temporary files are), an empty one, or one that starts with ``_`` itself;
    those get ``_`` in front (``grades.csv`` -> ``_grades.csv``, ``_x`` ->
    ``__x``), so no two ids share a folder and no id takes a kit file's name.
    An id that cannot be a file name at all (too long, a ``/``, text the file
    system cannot encode) gets ``_~``, a readable part and a digest of the id.
    """
    name = student
    if not name or name.startswith((".", _MARK)) or name.casefold() in {f.casefold() for f in CLASS_FILES}:
        name = _MARK + name
    if "/" in name or "\0" in name or encodable(name) != name or len(name.encode("utf-8")) > _NAME_BYTES:
        digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:20]
        readable = encodable(student).replace("/", "_").replace("\0", "_").encode("utf-8")[:200]
        name = f"{_MARK}~{readable.decode('utf-8', 'ignore')}-{digest}"
    return Path(out) / name


def write_class(out: Path, graded: dict[str, SubmissionResult], exercises: list[str]):
    """The class's files in ``out`` (:data:`CLASS_FILES`): the gradebook and the summary, in Markdown and HTML.

    A folder in the way (a student's, from a version of the kit that named
    every folder by its id) is moved to where :func:`student_folder` puts it.
    """
    out = Path(out)
    for name in CLASS_FILES:
        if (out / name).is_dir() and not (out / name).is_symlink():
            os.rename(out / name, student_folder(out, name))  # refuses, rather than merges, if that exists too
    write_atomically(out / "grades.csv", grades_csv(graded, exercises))
    write_atomically(out / "summary.md", summary_markdown(graded))
    write_atomically(out / "summary.html", summary_html(graded))


# -- a student's feedback ------------------------------------------------------------------------


def markdown(result: SubmissionResult, student: str) -> str:
    """A student's feedback: their table per exercise and, for every failed check, what went wrong.

    :func:`~grader.engine.results.redacted` here, whoever calls it; a
    student's text is escaped where it stands in a line and fenced where it
    is a block, so no print or message can add a heading, a link or HTML.
    """
    result = redacted(result)
    lines = [f"# Feedback for {inline(student)}", "",
             f"**{_points(result.score)}/{_points(result.max_score)} points**", ""]
    for exercise in result.exercises:
        lines += [f"## {inline(exercise.name)}.py: {inline(exercise.title)}: {_points(exercise.score)}/"
                  f"{_points(exercise.max_score)} points, {exercise.status}", "",
                  "| check | points | result |", "| --- | --- | --- |"]
        problems = []
        for (name, hidden), cases in exercise.grouped().items():
            earned, possible = sum(c.points for c in cases), sum(c.max_points for c in cases)
            title = inline(cases[0].title or name) + (" *(hidden)*" if hidden else "")
            lines.append(f"| {title} | {_points(earned)}/{_points(possible)} | {verdict(cases)[0]} |")
            failed = [c for c in cases if c.outcome == "failed"]
            if failed:
                problems.append(f"- **{inline(cases[0].title or name)}**: {inline(failed[0].message)}")
                if failed[0].printed:
                    problems.append("  Your code printed:\n\n" + fenced(failed[0].printed, "  "))
        lines += ["", *problems, ""] if problems else [""]
    return "\n".join(lines)


def feedback_html(result: SubmissionResult, student: str) -> str:
    """The feedback as a page: the notebook's table, :func:`~grader.engine.results.redacted`, every text escaped."""
    from grader.engine.results import html as table

    return _page(f"Feedback for {encodable(student)}", table(redacted(result)))


def write_student(folder: Path, student: str, result: SubmissionResult):
    """The student's four files in ``folder`` (:func:`student_folder`); softlookup.json last, because it marks
    the student as graded. results.json, feedback.md and feedback.html are redacted; softlookup.json is the
    instructor's record (:func:`record`)."""
    folder.mkdir(parents=True, exist_ok=True)
    shown = redacted(result)  # once for the three (each would redact it again, to the same)
    write_atomically(folder / "results.json", json.dumps(gradescope(shown), indent=2) + "\n")
    write_atomically(folder / "feedback.md", markdown(shown, student))
    write_atomically(folder / "feedback.html", feedback_html(shown, student))
    write_atomically(folder / RESULT_FILE, json.dumps({"student": student, **record(result).to_plain()}) + "\n")


def record(result: SubmissionResult) -> SubmissionResult:
    """What softlookup.json keeps: the whole result, hidden messages included, its texts encodable, less
    what learner code printed during a check it passed, which no report shows (and which, kept, would grow
    the record with every call of a student who prints)."""
    kept = cleaned(result)
    for exercise in kept.exercises:
        for check in exercise.checks:
            if check.passed:
                check.printed = ""
    return kept


def read_student(folder: Path) -> tuple[str, SubmissionResult] | None:
    """A graded student's id and result, or None if ``folder`` (:func:`student_folder`) holds no complete result."""
    try:
        plain = json.loads((folder / RESULT_FILE).read_text())
        return plain.pop("student"), SubmissionResult.from_plain(plain)
    except (OSError, ValueError, KeyError, TypeError):
        return None


# -- the class -----------------------------------------------------------------------------------


def grades_csv(graded: dict[str, SubmissionResult], exercises: list[str]) -> str:
    """``student,score,max_score,status`` and one column per exercise, a row per student.

    The id is the student's text and goes through :func:`csv_text`; every other cell is the kit's (a number,
    a status, an exercise's name) and stays as it is, so the numbers stay numbers. Lines end in CRLF, as
    RFC 4180 has it: the csv module quotes a cell only for the line ending it writes, and a lone CR in an
    unquoted cell would start a new row in a spreadsheet.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180's: a cell holding either is then quoted
    writer.writerow(["student", "score", "max_score", "status", *exercises])
    for student in sorted(graded):
        result = graded[student]
        scores = {exercise.name: exercise.score for exercise in result.exercises}
        writer.writerow([csv_text(student), _points(result.score), _points(result.max_score), result.status,
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
                    entry["mistakes"][blanked(failed[0].message)] += 1
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
            told = "<br>".join(f"{count}×: {inline(message)}" for message, count in row.mistakes)
            hidden = " *(hidden)*" if row.hidden else ""
            check = f"{inline(row.exercise)}: {inline(row.title)}{hidden}"
            lines.append(f"| {check} | {row.failed}/{row.graded} | {told} |")
    return "\n".join(lines) + "\n"


def summary_html(graded: dict[str, SubmissionResult]) -> str:
    """The summary with two charts: the score histogram and failures per check."""
    rows = [row for row in check_failures(graded) if row.failed]
    body = []
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
    return _page(f"Class summary: {len(graded)} students", "\n".join(body))  # its one heading


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
    labels = [encodable(f"{row.exercise}: {row.title[:50]}") for row in shown][::-1]
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


# -- text that came from a student, made inert -----------------------------------------------------

_FORMULA = ("=", "+", "-", "@", "\t", "\r", "\n")  # OWASP's CSV injection list, and a line break
_MARKDOWN_INLINE = re.compile(r"[`*_\[\]<>&|~#!]|\\(?=[!-/:-@\[-`{-~]|$)")  # what can start markup mid-line


def csv_text(text: str) -> str:
    """A student's text as a CSV cell no spreadsheet takes for a formula (OWASP's advice: a leading ``'``).

    A cell that starts with ``= + - @``, a tab or a line break, after any spaces, is prefixed with a
    single quote; the csv module quotes it and doubles its quotes. Read back, the cell is ``'`` and the text.
    """
    text = encodable(text)
    return "'" + text if text.lstrip(" ").startswith(_FORMULA) else text


def inline(text: str) -> str:
    """A student's text (or a message that may quote one) for the middle of a Markdown line, heading or table
    cell: one line, and every character that could start markup (emphasis, code, links, HTML, an entity, a
    table's pipe) escaped with a backslash, so CommonMark shows it as the text it is."""
    return _MARKDOWN_INLINE.sub(lambda match: "\\" + match.group(0), " ".join(encodable(text).splitlines()))


def fenced(text: str, indent: str = "") -> str:
    """A student's text as a Markdown code block that nothing in it can close: its fence is one backtick
    longer than the longest run of backticks inside (CommonMark closes a fence only with one as long)."""
    text = encodable(text)
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    body = "\n".join(indent + line for line in text.splitlines())
    return f"{indent}{fence}\n{body}\n{indent}{fence}"


def _points(points: float) -> str:
    return f"{points:g}" if abs(points - round(points)) < 1e-9 else f"{points:.2f}"
