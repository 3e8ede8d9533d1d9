"""The judge's own numpy for exercise 5, where it takes a shortcut: the shortcut finds what the long way finds."""

import numpy as np
import pytest

from grader.checks.learning_numpy import NINE_QUERIES, least_squares_sharpness, mse, soft_answers


@pytest.mark.parametrize("noise", [2.0, 20.0])  # the check's noise (£k), and ten times it
@pytest.mark.parametrize("truth", [0.8, 1.5, 3.2])
def test_the_coarse_then_fine_search_finds_the_whole_grids_least_squares(truth, noise):
    clean, _ = soft_answers(NINE_QUERIES, truth)
    grid = np.arange(0.5, 4.0, 1e-4)
    for seed in range(4):
        answers = clean + np.random.default_rng(seed).normal(0, noise, len(clean))
        assert least_squares_sharpness(NINE_QUERIES, answers) == grid[np.argmin(mse(grid, NINE_QUERIES, answers))]
