"""A student's feedback as one model (:func:`model`), rendered twice: feedback.md and feedback.html.

Both forms say the same things because both are drawn from the same
:class:`Feedback`: the total and the status in words, per exercise its table
of checks or the one line that explains it, and for every failure its
message, the mistake the class summary counts, how many of the check's
other cases failed otherwise, and what the student's code printed. The
model holds the kit's words with their marks (```code```); each renderer
escapes the student's text for its format at the edge (:mod:`grader.reports.inert`).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from grader.engine.results import SubmissionResult, redacted
from grader.reports import markup
from grader.reports.inert import fenced, html_page, inline, kit_inline
from grader.reports.verdicts import Problem, one_line, points, sentence, status_lines, verdict


@dataclass
class Failure:
    """One message, said once, with every failed check that gave it (their titles, the first one's details)."""

    titles: list[str]
    message: str
    cases: list[str]  # the first check's cases that share the message ([] for a check without cases)
    others: int  # the first check's cases that failed with other messages
    mistake: str
    printed: str

    def where(self) -> str:
        """The message's place, in the kit's words: which checks and cases, and what else failed."""
        also = f" (and {len(self.titles) - 1} more check{'s' * (len(self.titles) > 2)}: " \
               f"{'; '.join(self.titles[1:])})" if len(self.titles) > 1 else ""
        cases = f" [{', '.join(self.cases)}]" if self.cases else ""
        return also + cases

    def after(self) -> str:
        others = (f" ({self.others} more of its cases failed with other messages)"
                  if self.others else "")
        named = f" (mistake `{self.mistake}`, as the class summary counts it)" if self.mistake else ""
        return others + named


@dataclass
class Section:
    """One exercise: its heading, and either the one line that explains it or its table and failures."""

    heading: str
    line: str
    rows: list[tuple[str, str, str, str]] = field(default_factory=list)  # title, points, verdict, colour
    failures: list[Failure] = field(default_factory=list)


@dataclass
class Feedback:
    student: str
    total: str
    status: str
    why: list[str]
    unprotected: list[str]
    sections: list[Section]


def model(result: SubmissionResult, student: str) -> Feedback:
    """What a student is told, :func:`~grader.engine.results.redacted` here, whoever calls it."""
    result = redacted(result)
    sections = []
    for exercise in result.exercises:
        heading = (f"{exercise.name}.py: {exercise.title}: {points(exercise.score)}/{points(exercise.max_score)} "
                   f"points, {exercise.status}")
        if line := one_line(exercise):  # one thing explains every failure: said once, as the terminal says it
            sections.append(Section(heading, sentence(line) + ("." if line == "not started" else "")))
            continue
        section, told = Section(heading, ""), {}
        for (name, hidden), cases in exercise.grouped().items():
            title = (cases[0].title or name) + (" (hidden)" if hidden else "")
            earned, possible = sum(c.points for c in cases), sum(c.max_points for c in cases)
            section.rows.append((title, f"{points(earned)}/{points(possible)}", *verdict(cases)))
            if failed := [c for c in cases if c.outcome == "failed"]:
                problem = Problem.of(name, failed)
                if problem.first.message in told:  # a message several checks gave is written once
                    if title not in told[problem.first.message].titles:
                        told[problem.first.message].titles.append(title)
                    continue
                told[problem.first.message] = Failure([title], problem.first.message, problem.cases, problem.others,
                                                      problem.first.mistake, problem.first.printed)
        section.failures = list(told.values())
        sections.append(section)
    return Feedback(student, f"{points(result.score)}/{points(result.max_score)}", result.status,
                    [sentence(line) + "." for line in status_lines(result)], result.unprotected, sections)


def markdown(feedback: Feedback) -> str:
    """feedback.md: a student's text escaped where it stands in a line and fenced where it is a block, so no
    print or message can add a heading, a link or HTML."""
    lines = [f"# Feedback for {inline(feedback.student)}", "", f"**{feedback.total} points**", ""]
    if feedback.why:  # what grades.csv's status says, in words
        lines += [f"**Status: {feedback.status}.** " + " ".join(kit_inline(why) for why in feedback.why), ""]
    if feedback.unprotected:
        lines += [f"Your code ran without: {inline('; '.join(feedback.unprotected))}.", ""]
    for section in feedback.sections:
        lines += [f"## {inline(section.heading)}", ""]
        if section.line:
            lines += [kit_inline(section.line), ""]
            continue
        lines += ["| check | points | result |", "| --- | --- | --- |"]
        lines += [f"| {kit_inline(title)} | {earned} | {words} |" for title, earned, words, _ in section.rows]
        problems = []
        for failure in section.failures:
            problems.append(f"- **{kit_inline(failure.titles[0])}**{kit_inline(failure.where())}: "
                            f"{kit_inline(failure.message)}{kit_inline(failure.after())}")
            if failure.printed:
                problems.append("  Your code printed:\n\n" + fenced(failure.printed, "  "))
        lines += ["", *problems, ""] if problems else [""]
    return "\n".join(lines)


COLOURS = {"green": "#1a7f37", "red": "#cf222e", "yellow": "#9a6700"}


def page(feedback: Feedback) -> str:
    """feedback.html: the same model, every text escaped."""
    parts = [f"<p><b>Total: {feedback.total}</b> points</p>"]
    if feedback.why:
        parts.append(f"<p><b>Status: {html.escape(feedback.status)}.</b> "
                     + " ".join(markup.html(why) for why in feedback.why) + "</p>")
    if feedback.unprotected:
        parts.append(f"<p>Your code ran without: {html.escape('; '.join(feedback.unprotected))}.</p>")
    for section in feedback.sections:
        parts.append(f"<h2>{html.escape(section.heading)}</h2>")
        if section.line:
            parts.append(f"<p>{markup.html(section.line)}</p>")
            continue
        rows = "".join(f'<tr><td style="text-align:left">{markup.html(title)}</td><td>{earned}</td>'
                       f'<td style="color:{COLOURS[colour]}">{words}</td></tr>'
                       for title, earned, words, colour in section.rows)
        parts.append("<table><thead><tr><th style=\"text-align:left\">check</th><th>points</th><th>result</th>"
                     f"</tr></thead><tbody>{rows}</tbody></table>")
        items = []
        for failure in section.failures:
            printed = (f"<br>Your code printed:<pre>{html.escape(failure.printed)}</pre>" if failure.printed else "")
            items.append(f"<li><b>{markup.html(failure.titles[0])}</b>{markup.html(failure.where())}: "
                         f"{markup.html(failure.message)}{markup.html(failure.after())}{printed}</li>")
        if items:
            parts.append(f"<ul>{''.join(items)}</ul>")
    return html_page(f"Feedback for {feedback.student}", "\n".join(parts))
