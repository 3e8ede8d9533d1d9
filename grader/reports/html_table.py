"""The result model as an HTML table: a notebook's ``check_here`` and the gradebook's feedback.html.

The same verdicts, problems and totals as the terminal report
(:mod:`grader.reports.verdicts`), every text escaped.
"""

from __future__ import annotations

from html import escape

from grader.engine.results import SubmissionResult, writable_copy
from grader.reports import markup
from grader.reports.verdicts import Problem, one_line, points, verdict


def html(result: SubmissionResult, total_first: bool = False, under_total: str = "") -> str:
    """The terminal report's content as HTML, for a notebook: the same verdicts, problems and totals.

    The total comes last, as in the terminal, or first (``total_first``), as a page of feedback opens, with
    ``under_total`` (HTML already made safe) right under it.
    """
    colours = {"green": "#1a7f37", "red": "#cf222e", "yellow": "#9a6700"}
    result = writable_copy(result)
    parts = []
    if result.unprotected:  # the terminal report's line, as it says it
        parts.append(f'<p style="color:{colours["yellow"]}">Learner code ran without: '
                     f'{escape("; ".join(result.unprotected))}.</p>')
    for exercise in result.exercises:
        heading = (f"<b>{escape(exercise.name)}</b>: {escape(exercise.title)}: "
                   f"<b>{points(exercise.score)}/{points(exercise.max_score)}</b> points")
        if (line := one_line(exercise)) == "not started":
            parts.append(f"<p>{heading}, not started (stuck? <code>softlookup hint {escape(exercise.name)}</code>)</p>")
            continue
        if line:
            parts.append(f'<p>{heading}: <span style="color:{colours["red"]}">{markup.html(line)}</span></p>')
            continue
        rows = []
        for (name, hidden), cases in exercise.grouped().items():
            words, colour = verdict(cases)
            problems = [c for c in cases if c.outcome == "failed"] or [c for c in cases if c.outcome == "skipped"]
            message = ""
            if problems:
                problem = Problem.of(name, problems)
                where = f"[{escape(', '.join(problem.cases))}] " if problem.cases else ""
                message = where + markup.html(problem.first.message) + (f" (and {problem.others} more)" if problem.others else "")
            label = markup.html(cases[0].title or name) + (" <i>(hidden)</i>" if hidden else "")
            earned, possible = sum(c.points for c in cases), sum(c.max_points for c in cases)
            rows.append(f'<tr><td style="text-align:left">{label}</td><td>{points(earned)}/{points(possible)}</td>'
                        f'<td style="color:{colours[colour]}">{words}</td><td style="text-align:left">{message}</td></tr>')
        parts.append(f"<p>{heading}, {exercise.status}</p><table><thead><tr><th style=\"text-align:left\">check</th>"
                     "<th>points</th><th>result</th><th style=\"text-align:left\">what went wrong</th></tr></thead>"
                     f"<tbody>{''.join(rows)}</tbody></table>")
    total = f"<p><b>Total: {points(result.score)}/{points(result.max_score)}</b> ({result.seconds:.1f} s)</p>"
    return "\n".join([total + under_total, *parts] if total_first else [*parts, total])
