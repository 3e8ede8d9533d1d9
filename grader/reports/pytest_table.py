"""The result table at the end of a plain ``pytest grader/checks`` run, as ``softlookup check`` prints it.

A pytest11 entry point of its own, beside the engine's plugin: the engine
fills in the result, and rendering it is a report's job. ``softlookup
check`` and every other road through :func:`grader.engine.classes.runner.run_checks`
load no plugin by entry point, so they never print it twice.
"""

from __future__ import annotations

import io
import shutil

import pytest
from rich.console import Console

from grader.engine import plugin
from grader.engine.results import ErrorKind
from grader.reports.terminal import PYTEST, render


def pytest_addoption(parser):
    parser.addini("softlookup_table", "print the result table at the end", type="bool", default=True)


NOT_STARTED = "not started"  # the table's word for an exercise whose stubs are untouched


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report, config):
    """A check of an exercise not started counts as "not started" in pytest's own progress and summary line
    ("216 not started"), as the table above it says, rather than as a failure of something begun. It still
    fails the run: the exit status is the table's, below full marks."""
    if report.when == "call" and report.failed and getattr(report, "softlookup_error", "") == ErrorKind.NOT_IMPLEMENTED:
        return NOT_STARTED, "o", "NOT STARTED"
    return None


def pytest_terminal_summary(terminalreporter, config):
    grading = plugin.grading(config)
    result = grading.submission.result if grading is not None else None
    if result is not None and result.exercises and config.getini("softlookup_table"):
        table, size = io.StringIO(), shutil.get_terminal_size()
        # force_jupyter=False: inside a notebook kernel rich would display the table as cell output.
        console = Console(file=table, force_terminal=terminalreporter.hasmarkup, force_jupyter=False,
                          width=size.columns, height=size.lines)
        render(result, console, PYTEST, reserve=3)  # below it: a blank line, pytest's summary, the prompt
        terminalreporter.write("\n" + table.getvalue())
