"""What a learner's files say without running them: whether an exercise is started, and what it imports.

The pytest plugin asks before grading, so that an exercise not started costs
nothing (no worker, no torch) and says so in one line, and so that a module
that imports torch (itself, or through a module beside it) gets a worker
with torch already imported; the Gradescope autograder asks which of a module
and its notebook holds the learner's work; watch mode asks which files an
exercise depends on.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from grader.engine import registry
from grader.engine.errors import SubmissionError
from grader.engine.results import ErrorKind


# Bytes; a larger file is not parsed in the judge, just graded. Parsing costs the judge ~700 times a file's
# size in memory for crafted source; the largest solution is 12 KB.
STUB_SOURCE_LIMIT = 100_000


def _source(path: Path) -> bytes | None:
    """A file's bytes, or None where it cannot be read or is too large to parse here."""
    try:
        return None if path.stat().st_size > STUB_SOURCE_LIMIT else path.read_bytes()
    except OSError:
        return None


def _parsed_source(source: str | bytes | None) -> ast.Module | None:
    if source is None or len(source) > STUB_SOURCE_LIMIT:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def imported_names(path: Path) -> set[str]:
    """The top-level module names a file imports anywhere in it (``import torch.nn`` gives "torch")."""
    return set(_imported_names(_source(path)))


# A grading asks about each module twice or more (what its fork server needs, whether it was started), and a class
# graded in batch asks again for every student who handed in the same file: the answers are kept by the text.
@functools.lru_cache(maxsize=64)
def _imported_names(source: bytes | None) -> frozenset[str]:
    tree = _parsed_source(source)
    names = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return frozenset(names)


def libraries_used(folder: Path, module: str) -> set[str]:
    """What ``module`` imports from outside ``folder``, itself or through the modules of ``folder`` it imports."""
    seen, waiting, found = set(), [module], set()
    while waiting:
        name = waiting.pop()
        if name in seen:
            continue
        seen.add(name)
        for imported in imported_names(folder / f"{name}.py"):
            if (folder / f"{imported}.py").is_file():
                waiting.append(imported)
            else:
                found.add(imported)
    return found


def untouched(path: Path, functions: tuple[str, ...]) -> bool:
    """Whether a learner's module still has every one of ``functions`` as its stub left it.

    True only when each function is defined once at the top level, with a
    body that is (a docstring and) a ``raise NotImplementedError``, and
    nothing else at the top level binds its name. Anything else, a file that
    does not parse included, counts as started and is graded for real, so a
    mistake here can only cost time, never a point.
    """
    return _untouched(_source(path), tuple(functions))


def untouched_source(source: str, functions: tuple[str, ...]) -> bool:
    """:func:`untouched` for a module's text (a notebook's code cells, made into one)."""
    return _untouched(source, tuple(functions))


@functools.lru_cache(maxsize=64)  # asked of the same text as _imported_names is
def _untouched(source: str | bytes | None, functions: tuple[str, ...]) -> bool:
    tree = _parsed_source(source)
    if tree is None:
        return False
    bindings: dict[str, list[ast.stmt]] = {}
    for statement in tree.body:
        for name in _names_bound(statement):
            bindings.setdefault(name, []).append(statement)
    return all(len(bindings.get(name, [])) == 1 and _raises_not_implemented(bindings[name][0])
               for name in functions)


def _names_bound(statement: ast.stmt) -> list[str]:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).split(".")[0] for alias in statement.names]
    return [node.id for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)]


def _raises_not_implemented(statement: ast.stmt) -> bool:
    if not isinstance(statement, ast.FunctionDef):
        return False
    body = statement.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    raised = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


def fork_server_needed(folder: Path, exercises: list[registry.Exercise]) -> str:
    """The fork server the started exercises of ``folder`` need (the richest of their needs)."""
    return registry.richest(needs_of(folder, e) for e in exercises if ungradable(folder, e) is None)


def needs_of(folder: Path, exercise: registry.Exercise) -> str:
    """The fork server an exercise's workers come from: the registry's, or a richer one where the learner's code
    imports torch or transformers (read, not run), so that `import torch` in softmax.py costs no import time.

    Any other library is imported by the worker itself, within the import's time limit.
    """
    used = libraries_used(folder, exercise.module)
    return registry.richest([exercise.needs, *(kind for kind in registry.NEEDS if kind in used)])


def ungradable(folder: Path, exercise: registry.Exercise, shown: str | None = None) -> SubmissionError | None:
    """Why none of an exercise's checks needs to run, found without running anything: no file, or stubs only.

    A learner starts one exercise at a time; the ones not started cost
    nothing (no worker, no torch for GPT-2) and say so in one line.
    """
    path = folder / f"{exercise.module}.py"
    label = f"{exercise.module}.py"
    if not path.is_file():
        return SubmissionError(ErrorKind.MISSING, f"there is no {label} in {shown or folder}: put your file there, or "
                               "check the folder name", f"importing {label}")
    if untouched(path, exercise.functions):
        return SubmissionError(ErrorKind.NOT_IMPLEMENTED, "", f"{label}: every function")
    return None
