"""Exercise notebooks, made from the same solution file as the ``.py`` stubs.

A solution module becomes a notebook: its docstring is the opening markdown,
its other top-level statements (the imports) one code cell, and every
function its own code cell with the solution markers. The kit adds cells of
its own, tagged so grading skips them: one that loads the kit, the exercise's
widget where it has one, and the self-check. :func:`layout` is that shape;
the learner's notebook (here) and the nbgrader source notebook
(:mod:`grader.releases.nbgrader_course`) dress it differently.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.engine import registry
from grader.engine.submissions.notebooks import KIT_TAG
from grader.lesson import widgets
from grader.releases.stubs import make_stub

NOTEBOOK_METADATA = {
    "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
    "language_info": {"name": "python"},
}


CHECK_INTRO = "## Check your work\n\nThis grades the functions this notebook has run, with the same checks as " \
              "`softlookup check`."


@dataclass
class Cell:
    """One cell of the layout; ``role`` says what it is to the kit and to nbgrader."""

    role: str  # "text" (read-only prose), "kit" (the kit's code), "setup" (imports), "solution" (a function)
    name: str  # unique in its notebook: the cell id, and nbgrader's grade_id
    source: str
    tags: list[str] = field(default_factory=list)


def split(source: str) -> tuple[str, list[tuple[str, str]]]:
    """A module's docstring, and its code as ``(name, text)`` pieces: each function or class alone,
    the statements between them together (named ``setup``, ``setup-2``, ...), comments kept."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    body = tree.body
    docstring = ast.get_docstring(tree) or ""
    if docstring:
        body = body[1:]
    start = tree.body[0].end_lineno if docstring else 0  # lines before `start` are already taken
    pieces: list[tuple[str, str]] = []
    setups = 0
    for node in body:
        end = node.end_lineno
        for number in range(end, len(lines)):  # indented comments after the last statement (`### END SOLUTION`)
            if lines[number].strip() and not lines[number][:1].isspace():
                break
            if lines[number].strip():
                end = number + 1
        text = "".join(lines[start:end])
        start = end
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            pieces.append((node.name, text))
        elif pieces and pieces[-1][0].startswith("setup"):
            pieces[-1] = (pieces[-1][0], pieces[-1][1] + text)
        else:
            setups += 1
            pieces.append(("setup" if setups == 1 else f"setup-{setups}", text))
    if pieces and start < len(lines):  # trailing comments stay with the last piece
        pieces[-1] = (pieces[-1][0], pieces[-1][1] + "".join(lines[start:]))
    return docstring, [(name, text.strip("\n") + "\n") for name, text in pieces]


def exercises_used(text: str) -> list[str]:
    """The other exercises a piece of code imports (``from softmax import softmax``)."""
    used = []
    for node in ast.walk(ast.parse(text)):
        names = [node.module] if isinstance(node, ast.ImportFrom) else \
            [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        used += [name for name in names if name in registry.BY_MODULE and name not in used]
    return used


def _intro(docstring: str) -> str:
    title, _, rest = docstring.partition("\n")
    return f"# {title.strip().rstrip('.')}\n\n{rest.strip()}\n"


def _kit_cells(module: str, used: list[str], checker: str) -> list[Cell]:
    imports = [checker, "import_notebooks"] + (["widgets"] if module in widgets.FOR_EXERCISE else [])
    text = ("Write each function in its own cell below: replace the line under `# YOUR CODE HERE`, run the "
            "cell (Shift+Enter), and check your work with the last cell. The next cell loads the kit's tools; "
            "it is not part of your answer.")
    if used:
        names = ", ".join(f"`{name}`" for name in used)
        files = ", ".join(f"`{name}.ipynb`" for name in used)
        text += (f"\n\nThis exercise uses your {names} from {files} in this folder, as last saved: after changing "
                 "it there, save that notebook and run this notebook's first cells again.")
    code = f"from softlookup import {', '.join(imports)}\n\nimport_notebooks()"
    if used:
        code += f"  # `from {used[0]} import ...` then reads {used[0]}.ipynb"
    return [Cell("text", "how-to", text), Cell("kit", "kit", code, [KIT_TAG])]


def _widget_cells(module: str) -> list[Cell]:
    widget = widgets.FOR_EXERCISE.get(module)
    if widget is None:
        return []
    arguments = [name for name, p in inspect.signature(widget).parameters.items() if p.default is p.empty]
    summary = inspect.getdoc(widget).splitlines()[0]
    text = (f"## Try it\n\n{summary} The picture runs your own functions, so it works once they do; "
            "rerun this cell after changing them.")
    call = f"widgets.{widget.__name__}({', '.join(arguments)})"
    return [Cell("text", "try-it", text), Cell("kit", "widget", call, [KIT_TAG])]


def layout(exercise: registry.Exercise, source: str, checker: str = "check_here") -> list[Cell]:
    """The cells every notebook of ``exercise`` has, solution markers still in place.

    ``checker`` is the kit function the notebook's last cells call.
    """
    docstring, pieces = split(source)
    used = exercises_used(source)
    cells = [Cell("text", "intro", _intro(docstring)), *_kit_cells(exercise.module, used, checker)]
    for name, text in pieces:
        cells.append(Cell("setup" if name.startswith("setup") else "solution", name, text))
    return cells + _widget_cells(exercise.module)


def notebook(cells: list[Cell], metadata: dict | None = None) -> nbformat.NotebookNode:
    """A notebook of ``cells``, with ids fixed by the layout so that regenerating it changes nothing."""
    made = []
    for cell in cells:
        new = new_markdown_cell if cell.role == "text" else new_code_cell
        node = new(cell.source.rstrip("\n"), id=cell.name, metadata={"tags": cell.tags} if cell.tags else {})
        node.metadata.update((metadata or {}).get(cell.name, {}))
        made.append(node)
    return new_notebook(cells=made, metadata=NOTEBOOK_METADATA)


def learner_notebook(exercise: registry.Exercise, source: str, stub: bool = True) -> str:
    """``assignments/<module>.ipynb``: stubs where the solutions were, and a self-check at the end.

    ``stub=False`` keeps the solutions: the notebook a learner has when done.
    """
    cells = [Cell(c.role, c.name, make_stub(c.source, c.name) if stub and c.role == "solution" else c.source, c.tags)
             for c in layout(exercise, source)]
    cells += [
        Cell("text", "check-intro", CHECK_INTRO + " Run your function cells first."),
        Cell("kit", "check", f'check_here("{exercise.module}")', [KIT_TAG]),
    ]
    return nbformat.writes(notebook(cells)) + "\n"
