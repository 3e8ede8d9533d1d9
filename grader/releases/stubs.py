"""The solution markers, read in one place: the stubs learners get, and the lines that must never ship.

``solutions/`` is the single source. Each region between ``### BEGIN SOLUTION``
and ``### END SOLUTION`` (nbgrader's markers) is the reference's own work: a
stub replaces it with a ``raise NotImplementedError`` at the same indentation,
and the leak scan looks for its lines in whatever a release would hand out.
Every other line, docstrings included, is what the exercise states.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
_DEF = re.compile(r"^\s*def (\w+)\(")


class MarkerError(ValueError):
    """Unbalanced or nested solution markers in a solution file."""


def regions(source: str, filename: str = "<source>") -> Iterator[tuple[str, str, str | None]]:
    """Each line of ``source`` as ``(line, role, function)``: role "stated", "begin", "solution" or "end".

    ``function`` is the function the line belongs to, as far as ``def`` lines
    tell. Raises :class:`MarkerError` (file and line) for a marker out of place.
    """
    function, inside = None, None
    for number, line in enumerate(source.splitlines(keepends=True), 1):
        if match := _DEF.match(line):
            function = match.group(1)
        stripped = line.strip()
        if stripped == BEGIN:
            if inside is not None:
                raise MarkerError(f"{filename}:{number}: {BEGIN} inside another solution region")
            inside = number
            yield line, "begin", function
        elif stripped == END:
            if inside is None:
                raise MarkerError(f"{filename}:{number}: {END} without a {BEGIN}")
            inside = None
            yield line, "end", function
        else:
            yield line, "stated" if inside is None else "solution", function
    if inside is not None:
        raise MarkerError(f"{filename}:{inside}: {BEGIN} is never closed")


def make_stub(source: str, filename: str = "<source>") -> str:
    """The learner's version of a solution file."""
    out = []
    for line, role, function in regions(source, filename):
        if role == "begin":
            indent = line[: len(line) - len(line.lstrip())]
            where = f"{function}()" if function else "this part"
            out.append(f"{indent}# YOUR CODE HERE\n")
            out.append(f'{indent}raise NotImplementedError("{where}: replace this line with your code")\n')
        elif role == "stated":
            out.append(line)
    return "".join(out)


def solution_lines(source: str, filename: str = "<source>") -> list[str]:
    """The lines inside the solution regions of ``source``, as written."""
    return [line for line, role, _ in regions(source, filename) if role == "solution"]
