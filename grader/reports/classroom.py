"""Gradescope's results.json as GitHub Classroom's reporter reads a runner's result.

Classroom's ``autograding-grading-reporter`` action takes each runner's
result from ``<RUNNER>_RESULTS``: base64-encoded JSON with ``status``,
``max_score`` and ``tests``, a ``score`` each. The student bundle's workflow
(:mod:`grader.releases.classroom`) runs ``softlookup check --json
results.json`` and then ``python -m grader.reports.classroom results.json``.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

from grader.usage import UsageError, run


def runner_result(results: dict) -> dict:
    """Gradescope's results.json as the reporter's runner result: one test per check, its points kept."""
    tests = [{
        "name": test["name"],
        "status": "pass" if test["score"] >= test["max_score"] - 1e-9 else "fail",
        "score": test["score"],
        "message": test.get("output", ""),
        "line_no": 0,
    } for test in results["tests"] if test["max_score"] > 0]
    return {
        "version": 1,
        "status": "pass" if all(test["status"] == "pass" for test in tests) else "fail",
        "max_score": results["max_score"],
        "tests": tests,
    }


def encoded(result: dict) -> str:
    return base64.b64encode(json.dumps(result).encode()).decode("ascii")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) != 1:
        raise UsageError("give one argument: the results.json that softlookup check --json wrote")
    print(encoded(runner_result(json.loads(Path(argv[0]).read_text()))))
    return 0


if __name__ == "__main__":
    sys.exit(run(main, sys.argv[1:], "python -m grader.reports.classroom"))
