"""The judge's own numpy for exercise 5, where it takes a shortcut: the shortcut finds what the long way finds."""

from types import SimpleNamespace

import numpy as np
import pytest

from grader.checks import learning_numpy
from grader.checks.learning_numpy import NINE_QUERIES, least_squares_sharpness, mse, soft_answers
from grader.checks.public import test_learning as checks
from grader.engine.verify import CheckFailure


@pytest.mark.parametrize("noise", [2.0, 20.0])  # the check's noise (£k), and ten times it
@pytest.mark.parametrize("truth", [0.8, 1.5, 3.2])
def test_the_coarse_then_fine_search_finds_the_whole_grids_least_squares(truth, noise):
    clean, _ = soft_answers(NINE_QUERIES, truth)
    grid = np.arange(0.5, 4.0, 1e-4)
    for seed in range(4):
        answers = clean + np.random.default_rng(seed).normal(0, noise, len(clean))
        assert least_squares_sharpness(NINE_QUERIES, answers) == grid[np.argmin(mse(grid, NINE_QUERIES, answers))]


class _Sent:
    """A learner's fit_sharpness, as a check's ``submission`` reaches it, that sends the same answer each time."""

    def __init__(self, result):
        self.result = result

    def once(self, *args):
        return self.result


def test_a_fit_that_sends_more_losses_than_steps_is_replayed_only_for_the_steps_asked(monkeypatch):
    """To name what a wrong fit did, the judge replays other optimisers' descents: for the steps the check asked
    for, not for as many losses as the learner sent (70,000 of them cost it 14 s)."""
    first = float(mse(0.1, NINE_QUERIES, soft_answers(NINE_QUERIES, 1.5)[0]))  # right, so the replays are reached
    sent = _Sent((1.0, [first] + [1.0] * 70_000))
    replayed, descend = [], learning_numpy.descend
    monkeypatch.setattr(learning_numpy, "descend", lambda *args, **kwargs: replayed.append(args[3]) or
                        descend(*args, **kwargs))
    with pytest.raises(CheckFailure, match="not as gradient descent makes them"):
        checks.test_fit_losses_go_down(SimpleNamespace(learning=SimpleNamespace(fit_sharpness=sent)), 1.5, 0.1)
    assert len(replayed) > 1 and max(replayed) <= checks.STEPS
