"""Each exercise's table of inputs (``INPUTS`` in its public check file) names only checks that exist.

The table is a reader's map: every kind of input an exercise's docstrings and lesson allow, and the checks that
try it. A check renamed or removed would leave the map claiming coverage that no check gives; this test says so.
The table is read from the file's text, as the registry reads the checks' points: nothing is imported.
"""

import ast

import pytest

from grader.engine import registry


def inputs_table(exercise) -> dict[str, tuple[str, ...]]:
    public = exercise.check_files(hidden=False)[0]
    for node in ast.parse(public.read_text()).body:
        if isinstance(node, ast.Assign) and [ast.unparse(target) for target in node.targets] == ["INPUTS"]:
            return ast.literal_eval(node.value)
    return {}


@pytest.mark.parametrize("exercise", registry.EXERCISES, ids=lambda e: e.module)
def test_every_input_is_tried_by_a_check_that_exists(exercise):
    table = inputs_table(exercise)
    assert table, f"grader/checks/public/test_{exercise.module}.py has no INPUTS table of the inputs its checks try"
    # A hidden check is named "hidden" there: the table ships to learners in the public file, and a hidden
    # check's name may not (grader/releases/leak_scan.py).
    checks = {check.name for check in exercise.checks} | ({"hidden"} if any(c.hidden for c in exercise.checks) else set())
    missing = {what: [name for name in names if name not in checks] for what, names in table.items()}
    assert not any(missing.values()), f"INPUTS names checks that {exercise.module} does not have: {missing}"
    assert all(table.values()), f"an input of {exercise.module} is tried by no check: {table}"
