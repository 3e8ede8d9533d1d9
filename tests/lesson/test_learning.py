"""The reference solution of exercise 5 reproduces the numbers its docstrings teach."""

import numpy as np
import pytest
import torch

from helpers import SOLUTIONS, load_solution
from grader.lesson import lesson

KEYS, VALUES = list(lesson.BEDROOMS), list(lesson.PRICES)
NINE_QUERIES = np.arange(1.0, 5.01, 0.5)

learning = load_solution("learning")


def test_soft_answer_is_exercise_2s_lookup():
    answer = learning.soft_answer(3.0, KEYS, VALUES, 1.5)
    assert answer.shape == () and answer.dtype == torch.float64
    assert float(answer) == pytest.approx(275.1099, abs=1e-4)
    assert learning.answer_slope(3.0, KEYS, VALUES, 1.5) == pytest.approx((275.11, 201.76), abs=0.005)
    assert learning.soft_answer(NINE_QUERIES, KEYS, VALUES, 1.5).shape == (9,)


# The docstring's table: query -> slopes at sharpness 0.5, 1.5, 5 and 20.
SLOPES = {2.0: [43.20, 28.66, 3.99, 0.00], 3.0: [102.40, 201.76, 650.00, 2600.00], 3.5: [81.43, 46.06, 0.15, 0.00]}


@pytest.mark.parametrize("query", SLOPES)
def test_slope_table(query):
    slopes = [learning.answer_slope(query, KEYS, VALUES, sharpness)[1] for sharpness in (0.5, 1.5, 5.0, 20.0)]
    np.testing.assert_allclose(slopes, SLOPES[query], atol=0.005)


def test_nearest_slope_is_zero_even_at_the_jump():
    assert [learning.nearest_slope(q, KEYS, VALUES) for q in (2.9, 3.0, 3.1)] == [(210.0, 0.0), (210.0, 0.0),
                                                                                     (340.0, 0.0)]


def test_fit_table():
    answers = learning.soft_answer(NINE_QUERIES, KEYS, VALUES, 1.5).numpy()
    sharpness, losses = learning.fit_sharpness(NINE_QUERIES, answers, KEYS, VALUES)
    assert len(losses) == 200 and sharpness == pytest.approx(1.5, abs=1e-6)
    shown = {0: 2702.98, 10: 25.97, 25: 1.354, 50: 0.0035, 100: 2.1e-08, 199: 9.5e-19}
    for step, loss in shown.items():
        assert losses[step] == pytest.approx(loss, rel=0.02), step
    assert np.all(np.diff(losses) <= 0)


def test_fit_is_one_soft_answer_per_step():
    """The reference's fit does its steps and nothing more: what it costs is the lesson's, on any machine."""
    answers = learning.soft_answer(NINE_QUERIES, KEYS, VALUES, 1.5).numpy()
    original, calls = learning.soft_answer, []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(learning, "soft_answer", lambda *args: calls.append(args) or original(*args))
        learning.fit_sharpness(NINE_QUERIES, answers, KEYS, VALUES, steps=17)
    assert len(calls) == 17


def test_noisy_fit_settles_off_the_truth():
    """The docstring's noisy case, with the noise the checks add."""
    answers = learning.soft_answer(NINE_QUERIES, KEYS, VALUES, 1.5).numpy()
    answers = answers + np.random.default_rng(0).normal(0, 2.0, len(answers))
    sharpness, losses = learning.fit_sharpness(NINE_QUERIES, answers, KEYS, VALUES)
    assert round(sharpness, 3) == 1.426 and round(losses[-1], 2) == 1.47


def test_nearest_key_does_not_move_where_a_soft_one_would():
    answers = learning.nearest_answer(NINE_QUERIES, KEYS, VALUES).numpy()
    key, losses = learning.fit_nearest_key(NINE_QUERIES, answers, KEYS, VALUES, 2, 3.2)
    assert key == 3.2 and len(losses) == 50 and set(np.round(losses, 2)) == {2588.89}
    # The docstring's contrast: the same 50 steps through soft_answer at sharpness 1.5 reach 4.13.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(learning, "nearest_answer",
                      lambda queries, keys, values: learning.soft_answer(queries, keys, values, 1.5))
        key, _ = learning.fit_nearest_key(NINE_QUERIES, answers, KEYS, VALUES, 2, 3.2)
    assert round(key, 2) == 4.13


def test_solution_imports_only_math_and_torch():
    source = (SOLUTIONS / "learning.py").read_text()
    imports = {line.split()[1] for line in source.splitlines() if line.startswith(("import ", "from "))}
    assert imports == {"math", "torch"}
