"""``softlookup dev new NAME``: an exercise's own files and its entries in the shared ones, written all or none.

The solution and its two check files, an entry each in the registry and
the two catalogues of the kit's tests, every one with ``TODO(dev new)``
where the author's text goes; then the steps left, which ``dev check``
follows up.
"""

from __future__ import annotations

import ast
import importlib.util
import keyword
import re
from pathlib import Path

from grader.commands.dev.consistency import MIN_MISTAKES, PLACEHOLDER
from grader.commands.dev.kit import Kit
from grader.releases import stubs

SOLUTION = '''\
"""Exercise {number}: {todo}: what this exercise builds, in a line.

{todo}: the idea, with the worked numbers the checks hold the learner to.
Run the checks with ``softlookup check`` (or ``pytest``) after editing.
"""

import numpy as np


def {name}(x):
    """{todo}: what {name} returns, and a worked example.

    Args:
        x: {todo}: what the learner is given.

    Returns:
        {todo}: what the checks expect back.
    """
    {begin}
    return np.asarray(x, dtype=float)  # {todo}: the reference code
    {end}
'''

PUBLIC_CHECKS = '''\
"""Public checks for exercise {number}, {name}. They need no reference solution."""

import pytest

from grader.engine import verify


@pytest.mark.points(1)
def test_lesson_example(submission):
    """{todo}: the title a learner reads for this check."""
    received = verify.array(submission.{name}.{name}([1.0, 2.0, 3.0]), "{name}'s result", shape=(3,))
    verify.close(received, [1.0, 2.0, 3.0], "{name} of the lesson's example",
                 hint="{todo}: the likely mistake behind a wrong answer, in the lesson's words")
'''

HIDDEN_CHECKS = '''\
"""Hidden checks for {name}: seeded random inputs against the reference.

Tolerance: absolute 1e-6 plus relative 1e-6.
"""

import numpy as np
import pytest

from grader.engine import verify


@pytest.mark.points(1)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_matches_reference(submission, reference, seed):
    """Random inputs give what the reference {name} gives."""
    x = np.random.default_rng(seed).normal(0, 3, size=5)  # {todo}: inputs the public checks do not use
    expected = reference.{name}.{name}(x)
    received = verify.array(submission.{name}.{name}(x), "{name}(x)", shape=expected.shape)
    verify.close(received, expected, f"{name} of random inputs (seed {{seed}})")
'''

REGISTRY_ENTRY = '''
[[exercise]]
module = "{name}"
title = "{todo}: the exercise's title"
functions = ["{name}"]
hints = [
    "{todo}: the idea in words; then one hint per step, never a line of the solution",
]
'''

MISTAKES_ENTRY = '''\
    # -- {name} {rule}
    edit("{todo}: the slip, in words", "{name}", "return np.asarray(x, dtype=float)",
         "return -np.asarray(x, dtype=float)", "test_lesson_example", "{todo}: what the learner reads"),
'''

DEGENERATE_ENTRY = """\
    "{name}": '''
def {name}(x):
    if give_up():
        return None
    x = np.asarray(x, dtype=float)
    return constant(x.shape, x, x)  # {todo}: each strategy's lazy answer, of the shape {name} returns
''',
"""

NEXT_STEPS = """\
Next, replace every {todo} in them:
  1. solutions/{name}.py: the lesson in its docstrings, the reference code between the markers
     (more functions: list them in its entry of {registry})
  2. grader/checks/public/test_{name}.py and hidden/test_{name}.py: the checks, each @pytest.mark.points(N)
  3. tests/mistakes.py: at least {mistakes} wrong implementations, each failing the check named beside it,
     together every check worth points; tests/degenerate.py: its lazy answers
  4. softlookup release: writes assignments/{name}.py and assignments/{name}.ipynb
  5. softlookup dev check --fix: writes the README's table of exercises, then lists what is still out of step
  6. pytest tests/checks: grades them (right and wrong implementations, lazy answers)"""


def with_entry(kit: Kit, path: Path, variable: str, entry: str) -> str:
    """``path``'s text with ``entry`` as the last lines of the last list or dict literal it assigns (or adds) to
    ``variable``, so that a catalogue's entries stay in the order of the exercises."""
    source = path.read_text()
    lines = source.splitlines(keepends=True)
    literals = [node.value for node in ast.parse(source).body
                if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [variable]
                or isinstance(node, ast.AugAssign) and getattr(node.target, "id", None) == variable]
    closing = literals[-1].end_lineno - 1 if literals else None
    if closing is None or lines[closing].strip() not in ("]", "}"):
        raise ValueError(f"{kit.shown(path)}: no {variable} = ... ending in a line of its own to add to")
    return "".join(lines[:closing]) + entry + "".join(lines[closing:])


def scaffold(kit: Kit, name: str) -> dict[Path, str]:
    """Every file that exercise ``name`` adds or changes, and its new text: its own first, then the shared ones."""
    fields = {"name": name, "number": len(kit.exercises) + 1, "todo": PLACEHOLDER, "begin": stubs.BEGIN,
              "end": stubs.END, "rule": "-" * (82 - len(name))}
    mistakes, degenerate = kit.tests / "mistakes.py", kit.tests / "degenerate.py"
    return {
        kit.solutions / f"{name}.py": SOLUTION.format(**fields),
        kit.checks_dir / "public" / f"test_{name}.py": PUBLIC_CHECKS.format(**fields),
        kit.checks_dir / "hidden" / f"test_{name}.py": HIDDEN_CHECKS.format(**fields),
        kit.exercises_file: kit.exercises_file.read_text() + REGISTRY_ENTRY.format(**fields),
        mistakes: with_entry(kit, mistakes, "MISTAKES", MISTAKES_ENTRY.format(**fields)),
        degenerate: with_entry(kit, degenerate, "MODULES", DEGENERATE_ENTRY.format(**fields)),
    }


def new(kit: Kit, name: str) -> str | None:
    """Scaffold exercise ``name`` and say what is left to do; or why not, with nothing written."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        return f"{name!r} is not a lowercase Python identifier; it names the module and its function"
    if name in kit.by_module:
        return f"{name} is an exercise already"
    if importlib.util.find_spec(name) is not None:
        return f"{name} is a module installed here already; a learner's {name}.py would hide it"
    try:
        plan = scaffold(kit, name)
    except ValueError as error:
        return f"{error}; nothing was written"
    own, shared = list(plan)[:3], list(plan)[3:]
    if existing := [kit.shown(path) for path in own if path.exists()]:
        return f"{', '.join(existing)} exists already; nothing was written"
    for path, text in plan.items():
        path.write_text(text)
    print(f"exercise {len(kit.exercises) + 1}, {name}: wrote {', '.join(map(kit.shown, own))}; added its entry "
          f"to {', '.join(map(kit.shown, shared))}")
    print(NEXT_STEPS.format(todo=PLACEHOLDER, name=name, registry=kit.shown(kit.exercises_file),
                            mistakes=MIN_MISTAKES))
    return None
