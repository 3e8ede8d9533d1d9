"""The result model as Gradescope's results.json: what the autograder writes, and ``softlookup check --json``.

GitHub Classroom's reporter reads the same file (:mod:`grader.reports.classroom`).
"""

from __future__ import annotations

import json
from pathlib import Path

from grader.engine.results import SubmissionResult, redacted, write_atomically


def gradescope(result: SubmissionResult) -> dict:
    """Gradescope's results.json: one test per check, its cases added up, :func:`redacted`.

    Hidden checks are shown once grades are published ("after_published").
    Whoever runs ``softlookup check --json`` with the reference solutions
    sees the hidden checks' messages in the terminal table; the file, which
    is Gradescope's and so the student's, is redacted wherever it is made.
    """
    result = redacted(result)
    tests = []
    for exercise in result.exercises:
        for (name, hidden), cases in exercise.grouped().items():
            failures = [c for c in cases if c.outcome == "failed"]
            skips = [c for c in cases if c.outcome == "skipped"]
            lines = [f"[{c.case}] {c.message}" if c.case else c.message for c in failures + skips]
            lines = list(dict.fromkeys(lines))  # a redacted hidden check says it once, not once per case
            lines += [failures[0].printed] if failures and failures[0].printed else []
            tests.append({
                "name": f"{exercise.name}: {cases[0].title or name}",
                "score": round(sum(c.points for c in cases), 4),
                "max_score": round(sum(c.max_points for c in cases), 4),
                "output": "\n".join(lines) if lines else "Passed.",
                "visibility": "after_published" if hidden else "visible",
            })
    return {
        "score": round(result.score, 4),
        "max_score": round(result.max_score, 4),
        "execution_time": round(result.seconds, 3),
        "tests": tests,
        **({"extra_data": {"edition": result.edition}} if result.edition else {}),  # the kit that graded it
    }


def write_gradescope(result: SubmissionResult, path: Path):
    write_atomically(path, json.dumps(gradescope(result), indent=2) + "\n")
