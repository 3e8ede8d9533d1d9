"""Every copy of what a learner must not read, looked for as a learner's worker would look (issue 45, 5).

The kit closes its installed package and the reference it grades against,
but a road's own setting up may leave other copies on the grading machine:
the Gradescope zip unpacked into ``/autograder/source``, what installing it
leaves there (``build/``, an egg-info), caches. :func:`probe` is a
``lookup.py`` that, at import, reads every file it can under the paths a
road lays out (its folders, the Python installation its workers import from,
pip's caches and build folders, the home) and looks in each for :func:`markers`: the
names and titles of the hidden checks, and the reference's longest lines of
code. Its ``soft_lookup`` then raises with what it found, so that the finding
reaches the student's own feedback, as a stolen hidden check would.
:func:`findings` reads it back from any text the road wrote.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from grader.engine import registry
from grader.releases import leak_scan, stubs

LONG_NAME = 24  # characters: a hidden check's name this long is its own (test_matches_reference is in scipy's tests)
LONG_LINE = 50  # characters: a line of the reference's code this long is the reference's alone
PROBE = '''
import glob, io, os, zipfile

_MARKS = [bytes.fromhex(mark)[::-1] for mark in {marks!r}]  # reversed, so that this file holds none of them
_ROOTS = {roots!r} + glob.glob("/tmp/pip-*") + [os.path.expanduser("~/.cache"), "/root"]


def _holds(data):
    if any(mark in data for mark in _MARKS):
        return True
    if data[:4] == b"PK\\x03\\x04":  # a wheel or a zip: its members are compressed
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                return any(_holds(archive.read(member)) for member in archive.namelist())
        except (zipfile.BadZipFile, OSError, ValueError):
            return False
    return False


def _look():
    read, found, seen, refused = 0, [], set(), []
    for root in _ROOTS:
        for folder, _, files in os.walk(root, onerror=lambda error: refused.append(str(error))):
            for name in files:
                path = os.path.realpath(os.path.join(folder, name))
                if path in seen:
                    continue
                seen.add(path)
                try:
                    if os.path.getsize(path) > 4 * 2**20:
                        continue
                    with open(path, "rb") as handle:
                        data = handle.read()
                except OSError:
                    continue
                read += 1
                if _holds(data):
                    found.append(path)
    return read, found, refused


_READ, _FOUND, _REFUSED = _look()


def soft_lookup(query, keys, values, sharpness=1.0):
    raise RuntimeError("COPIES-PROBE " + __import__("json").dumps({{"read": _READ, "found": _FOUND[:8], "refused": _REFUSED[:3]}}))


exact_lookup = nearest_lookup = soft_lookup
'''


def markers(solutions: Path = registry.SOLUTIONS_DIR) -> list[str]:
    """Texts that only the hidden checks or the reference hold: the hidden checks' names and titles, the
    reference's lines of code at least :data:`LONG_LINE` long, and the marker its solutions begin with."""
    hidden = [text for text, what in leak_scan.hidden_texts().items()
              if what.startswith("the title") or what.startswith("the name") and len(text) >= LONG_NAME]
    lines = sorted(line for line in leak_scan.reference_lines(solutions) if len(line) >= LONG_LINE)
    return [*hidden, *_titles(registry.CHECKS_DIR / "hidden"), *lines, stubs.BEGIN]


def _titles(folder: Path) -> list[str]:
    """The hidden checks' titles as reports show them: each docstring's first paragraph, on one line, without its full stop."""
    titles = []
    for path in sorted(folder.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_") and ast.get_docstring(node):
                titles.append(" ".join(ast.get_docstring(node).split("\n\n")[0].split()).rstrip("."))
    return titles


def probe(roots: list[Path]) -> str:
    """The probe's ``lookup.py``, looking under ``roots`` besides the places every road shares."""
    return PROBE.format(marks=[mark.encode()[::-1].hex() for mark in markers()], roots=[str(root) for root in roots])


def findings(text: str) -> dict:
    """What the probe reported in ``text``: {"read": files read, "found": readable copies}; KeyError if it did not."""
    match = re.search(r"COPIES-PROBE (\{.*?\})", text.replace('\\"', '"'))
    if match is None:
        raise KeyError("the probe reported nothing: its module did not run, or its report was lost")
    return json.loads(match.group(1))
