"""A notebook submission becomes a folder of modules, so the engine only ever grades modules.

``<module>.ipynb`` turns into ``<module>.py``: its code cells in order, except
the cells the kit itself put there (tagged :data:`KIT_TAG`: the self-check,
the widgets, the nbgrader tests), which are not part of the answer. IPython
magics (``%time``, ``%%capture``) and shell lines (``!pip``) mean nothing to
plain Python; they are commented out, and only in a cell that is not valid
Python already, so no valid line is ever changed.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from grader.engine import registry, stubs

KIT_TAG = "softlookup-kit"
MAX_NOTEBOOK_BYTES = 20 * 2**20  # a learner's notebook is read in the grader's own process: keep it bounded


class NotebookError(ValueError):
    """A file that should be a notebook is not one; the message is one line that names it."""


def code_cells(path: Path) -> list[str]:
    """The source of every code cell of the notebook at ``path`` that belongs to the learner.

    The file is untrusted and read by the grader itself: its size is bounded
    first, and anything that is not the shape of a notebook is refused in one line.
    """
    name = Path(path).name
    if Path(path).stat().st_size > MAX_NOTEBOOK_BYTES:
        raise NotebookError(f"{name} is larger than {MAX_NOTEBOOK_BYTES // 2**20} MB: clear its outputs and "
                            "submit it again")
    try:
        cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
        raise NotebookError(f"{name} is not a notebook: it is not valid JSON ({error})") from None
    except (KeyError, TypeError):
        raise NotebookError(f"{name} is not a notebook: it has no list of cells") from None
    if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
        raise NotebookError(f"{name} is not a notebook: its cells are not a list of cells")
    sources = []
    for cell in cells:
        metadata = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        tags = metadata.get("tags") if isinstance(metadata.get("tags"), list) else []
        if cell.get("cell_type") != "code" or KIT_TAG in tags:
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(f"{name} is not a notebook: a code cell's source is not text")
        sources.append(source)
    return sources


def plain_python(cell: str) -> str:
    """``cell`` with IPython-only lines commented out, when it is not valid Python as it stands."""
    try:
        ast.parse(cell)
        return cell
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # grading will say what is wrong with it
        pass
    if cell.lstrip().startswith("%%"):  # a cell magic: the whole cell is for IPython
        return "".join(f"# {line}" for line in cell.splitlines(keepends=True))
    lines = []
    for line in cell.splitlines(keepends=True):
        ipython_only = line.lstrip().startswith(("%", "!"))
        lines.append(line[: len(line) - len(line.lstrip())] + "pass  # " + line.lstrip() if ipython_only else line)
    return "".join(lines)


def module_source(path: Path) -> str:
    """The module a notebook stands for: its learner cells, in order."""
    cells = [plain_python(cell).strip("\n") for cell in code_cells(path)]
    return f"# Made by softlookup from {Path(path).name}: its code cells, in order.\n\n" + "\n\n\n".join(
        cell for cell in cells if cell.strip()) + "\n"


def chosen_sources(folder: Path, prefer_notebooks: bool) -> dict[str, Path]:
    """For each exercise found in ``folder``, the file to grade: ``<module>.py`` or ``<module>.ipynb``.

    ``assignments/`` holds both. A module file wins, unless ``prefer_notebooks``
    or it is still the untouched stub: a learner who edits the ``.py`` files
    must not be graded on the untouched notebooks, nor one who works in the
    notebooks on the untouched modules (a folder pushed or uploaded whole).
    """
    chosen = {}
    for exercise in registry.EXERCISES:
        module, notebook = folder / f"{exercise.module}.py", folder / f"{exercise.module}.ipynb"
        if notebook.is_file() and (prefer_notebooks or not module.is_file()
                                   or stubs.untouched(module, exercise.functions)):
            chosen[exercise.module] = notebook
        elif module.is_file():
            chosen[exercise.module] = module
    return chosen


def write_modules(sources: dict[str, Path], target: Path, keep_going: bool = False) -> None:
    """Put ``<module>.py`` for every chosen source into ``target``.

    A notebook that cannot be read raises NotebookError, or with
    ``keep_going`` (a class is being graded) becomes a module that fails to
    import with that message, so that only its exercise, and those that
    import it, lose their points.

    A source that is a link out of its folder is never read here: it goes into
    ``target`` as a link to the same file, which the engine refuses as it
    refuses such a link in a folder of modules. Copying through it would hand
    the judge whatever it points at (the reference solutions, at a guessable path).
    """
    for module, source in sources.items():
        destination = target / f"{module}.py"
        if source.is_symlink() and source.parent.resolve() not in source.resolve().parents:
            os.symlink(source.resolve(), destination)
            continue
        if source.suffix != ".ipynb":
            shutil.copyfile(source, destination)
            continue
        try:
            text = module_source(source)
        except NotebookError as error:
            if not keep_going:
                raise
            text = f"raise SyntaxError({str(error)!r}, ({source.name!r}, None, None, None))\n"
        destination.write_text(text, encoding="utf-8")


@contextmanager
def module_folder(folder: Path, prefer_notebooks: bool = False, keep_going: bool = False):
    """``folder`` itself when it holds modules only, else a temporary folder of modules made from it."""
    sources = chosen_sources(folder, prefer_notebooks)
    if all(source.suffix == ".py" for source in sources.values()):
        yield folder
        return
    with tempfile.TemporaryDirectory(prefix="softlookup-notebooks-") as target:
        write_modules(sources, Path(target), keep_going)
        yield Path(target)
