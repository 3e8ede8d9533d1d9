"""What the class summary says beside the grades, for a person to look at: never a grade itself.

Two findings, each a section of summary.md and summary.html:

* work handed in twice: pairs of students whose code for an exercise is alike
  beyond chance (:mod:`grader.engine.classes.similarity`), each with its score, the
  lines each student has of what they share, and the longest shared passage;
* the kit's files that a GitHub Classroom repository changed (the workflow,
  ``grader/``, ``pyproject.toml``: what reports the points Classroom records),
  by student, as :mod:`grader.platforms.github_classroom` finds them; also a
  column of grades.csv. ``None`` where the class was not read from Classroom.

Students' code and file names are quoted as text (:mod:`grader.reports.inert`).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from grader.engine.classes.similarity import DEFAULT_THRESHOLD, Pair
from grader.reports import inert

SIMILAR = "Work that looks handed in twice"
KIT_CHANGED = "Kit files changed in students' repositories"
KIT_COLUMN = "kit_files_changed"  # grades.csv's column, where the class was read from GitHub Classroom


@dataclass
class Integrity:
    similar: list[Pair] = field(default_factory=list)
    threshold: float = DEFAULT_THRESHOLD
    compared: bool = False  # whether the similarity pass ran (`softlookup grade --similarity 0` skips it)
    not_compared: str = "Not compared (`--similarity 0`)."  # why not, where it did not run
    kit_changes: dict[str, list[str]] | None = None  # student -> the kit's files their repository changed


def kit_cell(integrity: Integrity, student: str) -> str:
    """grades.csv's ``kit_files_changed`` cell: the files a student's repository changed, ``;``-separated."""
    return "; ".join((integrity.kit_changes or {}).get(student, []))


def _similar_intro(integrity: Integrity) -> str:
    return (f"Pairs of students whose own code for an exercise is alike beyond chance: at least "
            f"{integrity.threshold:g} of one's code is in the other's (`softlookup grade --similarity` sets it), "
            "names, order and comments aside; the stubs handed out, and code most of the class wrote alike, count "
            "for nothing. This is evidence for a person to look at, never a grade: read the shared lines before "
            "drawing any conclusion.")


def _ranges(ranges: list[tuple[int, int]]) -> str:
    return ", ".join(f"{first}" if first == last else f"{first}–{last}" for first, last in ranges)


def markdown(integrity: Integrity) -> list[str]:
    """summary.md's sections: work handed in twice, and (Classroom) the kit's files students changed."""
    inline = inert.inline
    lines = ["", f"## {SIMILAR}", ""]
    if not integrity.compared:
        lines.append(integrity.not_compared)  # the kit's own words
    else:
        lines += [_similar_intro(integrity), ""]
        for pair in integrity.similar:
            first, second = pair.students
            lines += [f"- **{inline(pair.exercise)}.py**: {inline(first)} and {inline(second)}, score "
                      f"{pair.score:.2f}; lines {_ranges(pair.lines[0])} of {inline(first)}'s, "
                      f"{_ranges(pair.lines[1])} of {inline(second)}'s. Longest shared passage:", "",
                      inert.fenced(pair.excerpt, "  "), ""]
        if not integrity.similar:
            lines.append("No pair of students' code is alike beyond the threshold.")
    if integrity.kit_changes is not None:
        lines += ["", f"## {KIT_CHANGED}", "", _kit_intro(), ""]
        changed = {student: files for student, files in integrity.kit_changes.items() if files}
        lines += [f"- {inline(student)}: {inline(', '.join(files))}" for student, files in sorted(changed.items())]
        if not changed:
            lines.append("No repository changed any of the kit's files.")
    return lines


def page(integrity: Integrity) -> list[str]:
    """summary.html's sections: the same as :func:`markdown`'s."""
    body = [f"<h2>{SIMILAR}</h2>"]
    if not integrity.compared:
        body.append(f"<p>{html.escape(integrity.not_compared).replace('`', '')}</p>")
    else:
        body.append(f"<p>{html.escape(_similar_intro(integrity)).replace('`', '')}</p>")
        for pair in integrity.similar:
            first, second = (html.escape(student) for student in pair.students)
            body.append(f"<p><b>{html.escape(pair.exercise)}.py</b>: {first} and {second}, score {pair.score:.2f}; "
                        f"lines {_ranges(pair.lines[0])} of {first}'s, {_ranges(pair.lines[1])} of {second}'s. "
                        f"Longest shared passage:</p><pre>{html.escape(inert.writable(pair.excerpt))}</pre>")
        if not integrity.similar:
            body.append("<p>No pair of students' code is alike beyond the threshold.</p>")
    if integrity.kit_changes is not None:
        body.append(f"<h2>{KIT_CHANGED}</h2><p>{html.escape(_kit_intro()).replace('`', '')}</p>")
        changed = {student: files for student, files in integrity.kit_changes.items() if files}
        if changed:
            body += ["<ul>", *[f"<li>{html.escape(student)}: {html.escape(', '.join(files))}</li>"
                               for student, files in sorted(changed.items())], "</ul>"]
        else:
            body.append("<p>No repository changed any of the kit's files.</p>")
    return body


def _kit_intro() -> str:
    return ("The points GitHub Classroom records are reported by the workflow in each student's own repository, "
            "with the `grader/` and `pyproject.toml` it holds: a student who changes them reports what they like. "
            "These repositories changed files of the kit as the instructor's kit releases the bundle now (the "
            "exercises aside). The grades here are the instructor's own checks, whatever the repository holds; "
            "compare them with Classroom's points.")
