"""What the instructor's kit hands out, as ``softlookup grade`` compares a class's work with it.

Made from the kit that grades, every time, never from anything a student's
folder or repository carries (a student can edit that too):

* :func:`boilerplate`: each exercise's stub module and its notebook made into
  a module, the text every student starts from, which the similarity pass
  (:mod:`grader.engine.similarity`) counts for nothing.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from grader.engine import notebooks, registry
from grader.releases.assignments import planned


def boilerplate(solutions: Path, exercises: list[registry.Exercise]) -> dict[str, list[str]]:
    """Each exercise's handed-out texts, by module: the stub, and the notebook's code cells as a module."""
    with tempfile.TemporaryDirectory(prefix="softlookup-handed-out-") as scratch:
        folder = Path(scratch)
        plan = planned(solutions, folder, tuple(exercises))
        texts = {}
        for exercise in exercises:
            notebook = folder / f"{exercise.module}.ipynb"
            notebook.write_text(plan[notebook], encoding="utf-8")
            texts[exercise.module] = [plan[folder / f"{exercise.module}.py"], notebooks.module_source(notebook)]
    return texts
