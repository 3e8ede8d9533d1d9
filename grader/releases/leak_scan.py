"""Whether a release holds anything a student must not see: the reference's code, or the hidden checks.

In every file of a folder or a wheel (a notebook also as its cells' text) it
looks for:

* every line of reference code (the lines between the solution markers of
  ``solutions/*.py``, stripped of indentation) that the exercise does not
  state itself: a line that the released stub also holds (in its
  docstring: ``weights = softmax(scores)``) is part of the assignment, and
  the few lines in :data:`GENERIC` say nothing about any answer;
* the solution markers themselves;
* every hidden check's name and title, and each string of its source long
  enough to be its own (its inputs and messages), unless a public check
  holds it too, or it is one of the sentences the tiny GPT-2's tokenizer is
  built from (``grader.lesson.models.SENTENCES``): the shipped tokenizer must know
  their words, and an input gives nothing away without a working function.

:data:`ALLOWED` lists the few files that may hold a line anyway, and why.
"""

from __future__ import annotations

import ast
import json
import zipfile
from pathlib import Path

from grader.engine import registry
from grader.releases.stubs import BEGIN, END, make_stub, solution_lines

# Reference lines that any Python file may hold, and that carry no answer.
GENERIC = {"return None", "return value", "return output", "losses = []", "with torch.no_grad():",
           "if mask is not None:", "x = np.asarray(x, dtype=float)"}
# (file, line): a file that may hold a reference line, and why.
ALLOWED = {
    ("grader/lesson/lesson.py", "return sizes / sizes.sum()"):
        "value_shares, the lesson's own measure, which value_contributions' docstring states in words",
    ("grader/checks/public/test_gpt2_values.py", "return sizes / sizes.sum()"):
        "the check's helper that builds its mistakes' shares",
}
LONG_ENOUGH = 24  # characters: a hidden check's string at least this long is its own, not a common phrase


def reference_lines(solutions: Path) -> set[str]:
    """The lines of reference code that the exercises do not state themselves."""
    lines, stated = set(), ""
    for path in sorted(solutions.glob("*.py")):
        source = path.read_text()
        stated += make_stub(source, path.name)
        lines |= {line.strip() for line in solution_lines(source, path.name) if line.strip() not in GENERIC}
    return {line for line in lines if line not in stated}


def tokenizer_sentences() -> set[str]:
    """grader.lesson.models.SENTENCES, read from its source: importing it would import torch."""
    tree = ast.parse((registry.PACKAGE_DIR / "lesson" / "models.py").read_text())
    values = [node.value for node in tree.body if isinstance(node, ast.Assign)
              and any(isinstance(target, ast.Name) and target.id == "SENTENCES" for target in node.targets)]
    return set(ast.literal_eval(values[0]))


def hidden_texts(checks: Path = registry.CHECKS_DIR) -> dict[str, str]:
    """Each text that belongs to a hidden check, and what it is."""
    found, sentences = {}, tokenizer_sentences()
    public = "".join(path.read_text() for path in sorted((checks / "public").glob("test_*.py")))
    for path in sorted((checks / "hidden").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                found[node.name] = f"the name of hidden check {node.name}"
                if doc := ast.get_docstring(node):
                    found[doc.splitlines()[0]] = f"the title of hidden check {node.name}"
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value.strip()
                if len(text) >= LONG_ENOUGH and text not in public and text.removeprefix("<|endoftext|>") not in sentences:
                    found.setdefault(text.splitlines()[0], f"a string of {path.name} (hidden)")
    return found


def _readable(name: str, data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    if name.endswith(".ipynb"):
        try:
            cells = json.loads(text)["cells"]
            text += "\n" + "\n".join("".join(cell.get("source", "")) for cell in cells)
        except (ValueError, KeyError, TypeError):
            pass
    return text


def folder_texts(folder: Path):
    """(relative name, text) for every file under ``folder``."""
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            yield str(path.relative_to(folder)), _readable(path.name, path.read_bytes())


def wheel_texts(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            yield member, _readable(member, archive.read(member))


def findings(texts, solutions: Path) -> list[str]:
    """One line per leak found in ``texts`` ((name, text) pairs): the file and what it holds."""
    wanted = {line: "a line of the reference solutions" for line in reference_lines(solutions)}
    wanted |= {BEGIN: "a solution marker", END: "a solution marker"} | hidden_texts()
    return [f"{name}: {what}: {text!r}" for name, content in texts
            for text, what in wanted.items() if text in content and (name, text) not in ALLOWED]
