"""What a learner types in a notebook cell: ``from softlookup import check_here``.

The kit itself lives in the ``grader`` package; this module only gathers the
few names a notebook uses, so a cell stays one short line.
"""

from grader.lesson import widgets
from grader.lesson.kernel import check_here, graded, import_notebooks

__all__ = ["check_here", "graded", "import_notebooks", "widgets"]
