"""A notebook submission becomes a folder of modules, so the engine only ever grades modules.

``<module>.ipynb`` turns into ``<module>.py``: its code cells in order, except
the cells the kit itself put there (tagged :data:`KIT_TAG`: the self-check,
the widgets, the nbgrader tests), which are not part of the answer. IPython
magics (``%time``, ``%%capture``) and shell lines (``!pip``) mean nothing to
plain Python; they are commented out, and only in a cell that is not valid
Python already, so no valid line is ever changed.

A notebook is untrusted and read in the judge's own process, so what the
judge spends on it is bounded before anything is built: the file's size, then
the number of JSON items and their nesting (counted on the raw bytes, strings
skipped), then the number of cells and the length of each cell's code and of
the module they make. Python's parser runs on a cell only when the cell holds
a line that looks IPython-only, and only on a cell of bounded length. Any
failure is one line, :class:`NotebookError`, never an exception of the parser's.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from grader.engine import registry
from grader.engine.confinement import clean, scratch
from grader.engine.submissions import inspection

KIT_TAG = "softlookup-kit"
# The course's notebooks are 4 to 14 KB as handed out, 9 to 117 KB once run with every output (2,200 JSON items at
# most, 12 cells, 2.5 KB of code in the longest cell, 9 KB of code in all); the bounds leave room for a learner's
# own cells, prints and plots. Parsing a notebook at the bounds costs the judge well under 100 MB.
MAX_NOTEBOOK_BYTES = 8 * 2**20
MAX_NOTEBOOK_ITEMS = 200_000  # JSON containers, items and keys: each costs the judge up to ~100 bytes once built
MAX_NOTEBOOK_DEPTH = 64  # nesting of JSON containers (a notebook's is under 10)
MAX_CELLS = 2_000
MAX_CELL_CHARS = 50_000  # characters of code in one cell
MAX_MODULE_CHARS = 100_000  # characters of code in all the learner's cells together
PARSE_LIMIT = 20_000  # characters of a cell Python's parser may read in the judge (~15 MB at worst)
# A JSON string whole (an unterminated one runs to the end, so no match ever fails and the scan stays linear),
# or one structural byte.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)|[\[\]{},:]', re.DOTALL)
_IPYTHON_LINE = re.compile(r"^[ \t]*[%!]", re.MULTILINE)


class NotebookError(ValueError):
    """A file that should be a notebook is not one; the message is one line that names it."""


def _check_json_shape(data: bytes, name: str):
    """Refuse, before building anything, JSON with more items or deeper nesting than a notebook of the course.

    Strings are skipped whole, so the commas of printed output do not count;
    the loop stops at the first bound crossed, so it costs at most a few
    hundred thousand steps whatever the file holds.
    """
    items = depth = strings = 0
    for match in _TOKENS.finditer(data):
        byte = data[match.start()]
        if byte == 0x22:  # a string; in a notebook, each is followed by a separator that counts
            strings += 1
            if strings > MAX_NOTEBOOK_ITEMS + 1:
                raise NotebookError(f"{name} is not a notebook: it holds strings that nothing separates")
            continue
        if byte in b"]}":
            depth -= 1
            continue
        items += 1
        if items > MAX_NOTEBOOK_ITEMS:
            raise NotebookError(f"{name} holds more than {MAX_NOTEBOOK_ITEMS:,} JSON items, far more than a notebook "
                                "of this course: clear its outputs and submit it again")
        if byte in b"[{":
            depth += 1
            if depth > MAX_NOTEBOOK_DEPTH:
                raise NotebookError(f"{name} is not a notebook: its JSON is nested more than {MAX_NOTEBOOK_DEPTH} "
                                    "levels deep")


def code_cells(path: Path) -> list[str]:
    """The source of every code cell of the notebook at ``path`` that belongs to the learner.

    The file is untrusted and read by the grader itself: its size is bounded
    first, then the shape of its JSON, then its cells; anything that is not
    the shape of a notebook of this course is refused in one line.
    """
    name = Path(path).name
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_NOTEBOOK_BYTES + 1)
    except OSError as error:
        raise NotebookError(f"{name} cannot be read ({error.strerror})") from None
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise NotebookError(f"{name} is larger than {MAX_NOTEBOOK_BYTES // 2**20} MB: clear its outputs and "
                            "submit it again")
    _check_json_shape(data, name)
    try:
        cells = json.loads(data)["cells"]
    except (ValueError, RecursionError, MemoryError) as error:  # JSONDecodeError and UnicodeDecodeError included
        reason = clean.clean_text(str(error), 200)
        raise NotebookError(f"{name} is not a notebook: it is not valid JSON ({reason})") from None
    except (KeyError, TypeError, IndexError):
        raise NotebookError(f"{name} is not a notebook: it has no list of cells") from None
    if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
        raise NotebookError(f"{name} is not a notebook: its cells are not a list of cells")
    if len(cells) > MAX_CELLS:
        raise NotebookError(f"{name} has {len(cells):,} cells, more than the {MAX_CELLS:,} the grader reads")
    sources, total = [], 0
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
        total += len(source)
        if len(source) > MAX_CELL_CHARS or total > MAX_MODULE_CHARS:
            raise NotebookError(f"{name} has more code than the grader reads (a cell may hold "
                                f"{MAX_CELL_CHARS:,} characters, all cells {MAX_MODULE_CHARS:,}): move data "
                                "out of the code cells")
        if clean.clean_value(source) is not source:
            raise NotebookError(f"{name} is not a notebook that can be graded: a code cell holds a character "
                                "that is not valid text (a lone surrogate such as \\ud800)")
        sources.append(source)
    return sources


def plain_python(cell: str) -> str:
    """``cell`` with IPython-only lines commented out, when it is not valid Python as it stands.

    A cell with no line that looks IPython-only is returned as it is,
    unparsed. One that has such a line is parsed only up to
    :data:`PARSE_LIMIT` characters (parsing costs the judge hundreds of bytes
    per character); a longer one is taken as not valid Python as it stands.
    """
    if not _IPYTHON_LINE.search(cell):
        return cell
    if len(cell) <= PARSE_LIMIT:
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
    or it is still the untouched stub and the notebook is not: a learner who
    edits the ``.py`` files must not be graded on the untouched notebooks, nor
    one who works in the notebooks on the untouched modules (a folder pushed
    or uploaded whole). Where both are untouched the module is graded (the
    same "not started"), so that a folder of modules is graded as it stands,
    its files named as the learner knows them.
    """
    chosen = {}
    for exercise in registry.EXERCISES:
        module, notebook = folder / f"{exercise.module}.py", folder / f"{exercise.module}.ipynb"
        if notebook.is_file() and (prefer_notebooks or not module.is_file()
                                   or (inspection.untouched(module, exercise.functions)
                                       and not _untouched_notebook(notebook, exercise.functions))):
            chosen[exercise.module] = notebook
        elif module.is_file():
            chosen[exercise.module] = module
    return chosen


def _untouched_notebook(path: Path, functions: tuple[str, ...]) -> bool:
    """Whether the notebook's code cells still leave every one of ``functions`` a stub (one that cannot be read
    is not: grading says what is wrong with it)."""
    try:
        return inspection.untouched_source(module_source(path), functions)
    except NotebookError:
        return False


def write_modules(sources: dict[str, Path], target: Path, keep_going: bool = False) -> None:
    """Put ``<module>.py`` for every chosen source into ``target``.

    A notebook that cannot be read raises NotebookError, or with
    ``keep_going`` (a class is being graded) becomes a module that fails to
    import with that message, so that only its exercise, and those that
    import it, lose their points: a SyntaxError of no line in the notebook's
    name, which the worker reports as ``invalid`` (no code was there to run),
    not as a syntax error of the learner's.

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
            text = f"raise SyntaxError({clean.clean_text(str(error), 500)!r}, ({source.name!r}, None, None, None))\n"
        destination.write_text(text, encoding="utf-8", errors="replace")


# The folders module_folder made and has not yet removed: each module's file name -> the learner's file it came from.
_MADE: dict[str, dict[str, Path]] = {}


@contextmanager
def module_folder(folder: Path, prefer_notebooks: bool = False, keep_going: bool = False):
    """``folder`` itself when it holds modules only, else a temporary folder of modules made from it.

    While the temporary folder exists, :func:`made_from` says which of the
    learner's files each of its modules stands for, so that a warning or a
    traceback names ``assignments/softmax.py``, not the temporary copy.
    """
    sources = chosen_sources(folder, prefer_notebooks)
    if all(source.suffix == ".py" for source in sources.values()):
        yield folder
        return
    with tempfile.TemporaryDirectory(prefix=scratch.run_prefix("notebooks")) as target:
        write_modules(sources, Path(target), keep_going)
        key = os.path.realpath(target)
        _MADE[key] = {f"{module}.py": source for module, source in sources.items()}
        try:
            yield Path(target)
        finally:
            _MADE.pop(key, None)


def made_from(folder) -> dict[str, Path]:
    """For a folder :func:`module_folder` made (and has not removed yet), each module's file name and the
    learner's file it was made from; for any other folder, nothing."""
    return _MADE.get(os.path.realpath(folder), {})
