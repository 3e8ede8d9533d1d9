"""The result table at the end of a plain ``pytest grader/checks`` run, as ``softlookup check`` prints it.

A pytest11 entry point of its own, beside the engine's plugin: the engine
fills in the result, and rendering it is a report's job. ``softlookup
check`` and every other road through :func:`grader.engine.runner.run_checks`
load no plugin by entry point, so they never print it twice.
"""

from __future__ import annotations

import io
import shutil

from rich.console import Console

from grader.engine import plugin
from grader.reports.terminal import PYTEST, render


def pytest_addoption(parser):
    parser.addini("softlookup_table", "print the result table at the end", type="bool", default=True)


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
