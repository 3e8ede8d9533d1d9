"""Whether a learner has started an exercise: its functions still as ``softlookup release`` left them.

The pytest plugin asks before grading, so that an exercise not started costs
nothing (no worker, no torch) and says so in one line; the Gradescope
autograder asks which of a module and its notebook holds the learner's work.
"""

from __future__ import annotations

import ast
from pathlib import Path


STUB_SOURCE_LIMIT = 1_000_000  # bytes; a larger file is not parsed in the judge, just graded


def untouched(path: Path, functions: tuple[str, ...]) -> bool:
    """Whether a learner's module still has every one of ``functions`` as its stub left it.

    True only when each function is defined once at the top level, with a
    body that is (a docstring and) a ``raise NotImplementedError``, and
    nothing else at the top level binds its name. Anything else, a file that
    does not parse included, counts as started and is graded for real, so a
    mistake here can only cost time, never a point.
    """
    try:
        if path.stat().st_size > STUB_SOURCE_LIMIT:
            return False
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
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
