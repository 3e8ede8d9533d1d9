"""No module of grader/ over 400 lines (issue 51): a reviewer reads each in one sitting.

A module that grows past the bound is split along a seam that means one thing (a check file's shared helpers
go to the checks module its exercise already shares, say), never squeezed under it. The catalogues under tests/
(the wrong answers, the right ones written differently, the attacks) are lists a reader scans, not code read in
a sitting, and are not held to it.
"""

import pytest

from grader.engine import registry

MOST_LINES = 400
MODULES = sorted(registry.PACKAGE_DIR.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(registry.PACKAGE_DIR.parent)))
def test_module_fits_in_a_sitting(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MOST_LINES, (f"{path.relative_to(registry.PACKAGE_DIR.parent)} has {lines} lines, over "
                                 f"{MOST_LINES}: split it along a seam that means one thing (issue 51)")
