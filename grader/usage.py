"""A mistake on the command line: :class:`UsageError`, one line that says what to do, exit status 2.

Commands raise it (and :class:`Parser` raises it for argparse's own
complaints); :func:`run` turns it into its line and status, once, for the
``softlookup`` command and for the few modules also started with ``python -m``.
A command raises it before it grades anything, or after it has written what
it graded, so no mistake on the command line loses work.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys


class UsageError(Exception):
    """What the person typing must fix, in one line; ``prog`` names the command it is about."""

    def __init__(self, message: str, prog: str = ""):
        super().__init__(message)
        self.prog = prog


# A docstring's reStructuredText marks (``code``, :mod:`name`), which a terminal would show as they are.
RST_MARKS = re.compile(r"(?::[a-z]+:)?`{1,2}([^`]+)`{1,2}")


class Parser(argparse.ArgumentParser):
    """argparse, with its complaints raised as :class:`UsageError` rather than printed with the usage, and its
    description (often a docstring's first line) shown without reStructuredText's marks."""

    def __init__(self, *args, description: str | None = None, **kwargs):
        super().__init__(*args, description=description and RST_MARKS.sub(r"\1", description), **kwargs)

    def error(self, message):
        raise UsageError(f"{message} (see {self.prog} --help)", self.prog)


# The packages only a road's extra installs (pyproject.toml), and that extra: the kit's core leaves them out.
EXTRAS = {"nbgrader": "nbgrader", "ipywidgets": "notebooks"}


def optional(package: str):
    """``package`` of :data:`EXTRAS`, imported where it is needed, not before; missing, one line naming the
    extra that installs it rather than a traceback."""
    try:
        return importlib.import_module(package)
    except ModuleNotFoundError as error:
        if error.name != package:  # something it imports is missing: not a matter of the extra
            raise
        raise UsageError(f"{package} is not installed: in the kit's folder, pip install -e '.[{EXTRAS[package]}]'") \
            from None


def run(main, argv, prog: str) -> int:
    """``main(argv)``'s exit status, a :class:`UsageError` printed as ``prog: message`` with status 2."""
    try:
        return main(argv)
    except UsageError as error:
        print(f"{error.prog or prog}: {error}", file=sys.stderr)
        return 2
