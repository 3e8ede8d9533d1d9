"""The result table as a learner reads it, and as a pipe receives it."""

import io

import numpy as np
import pytest
from rich.console import Console

from grader.engine import verify
from grader.engine.results import CheckResult, ExerciseResult, SubmissionResult
from grader.reports.terminal import INDENT, render

LONG_TITLE = "recompute_head_pattern rebuilds the head's pattern from the weights: ln_1, c_attn, q.k/sqrt(d), softmax"
REPEATED = "the weights sum to 2 and the largest weight is 1: did you divide by the max instead of dividing by the sum?"
LONG = ("the pattern of recompute_head_pattern(model, ids, layer=4, head=3): 54 of 100 entries are off (largest "
        "difference at index (8, 8): expected 0.7884, received 0.1111). Check each step of the recipe.")


def case(check, case_id, passed, message="", title="", points=1.0):
    return CheckResult(exercise="softmax", check=check, case=case_id, title=title or check,
                       outcome="passed" if passed else "failed", points=points if passed else 0.0,
                       max_points=points, message="" if passed else message)


def rendered(*checks, **console) -> str:
    result = SubmissionResult("s")
    for check in checks:
        result.add(check, "Softmax: scores into weights")
    output = io.StringIO()
    # By default a pipe: no terminal, rich's 80 columns.
    render(result, Console(file=output, **{"width": 80, "highlight": False, **console}))
    return output.getvalue()


def test_partial_results_read_as_cases_passed():
    text = rendered(case("test_axis", "0", True), case("test_axis", "1", False, "wrong axis"),
                    case("test_axis", "-1", True), case("test_shift", "", False, "not shift invariant"),
                    case("test_keeps_shape", "", True))
    assert "2 of 3 cases passed" in text
    assert "failed 1/3" not in text and "failed 2/3" not in text
    assert "  2/3  2 of 3 cases passed  test_axis" in text.splitlines()
    assert "  0/1  failed               test_shift" in text.splitlines()


def test_a_repeated_message_is_shown_once_with_its_count():
    text = rendered(case("test_sums", "vector", True), *(case("test_sums", c, False, REPEATED) for c in "abc"),
                    case("test_sums", "d", False, "something else entirely"))
    assert text.count(REPEATED) == 1
    assert "[a, b, c] (× 3 cases)" in text
    assert "and 1 more case with other messages" in text
    assert "something else entirely" not in text


def test_piped_output_keeps_every_message_and_title_on_one_line():
    text = rendered(case("test_recompute", "4-3", False, LONG, title=LONG_TITLE), case("test_other", "", True))
    lines = text.splitlines()
    assert any(LONG in line for line in lines), text
    assert any(LONG_TITLE in line for line in lines), text


def test_piped_output_is_never_padded():
    """A report redirected to a file: each line as long as what it says, the longest title included."""
    text = rendered(case("test_recompute", "4-3", False, LONG, title=LONG_TITLE), case("test_other", "", True),
                    width=417)
    lines = text.splitlines()
    assert not [line for line in lines if line != line.rstrip()], text
    assert max(map(len, lines)) == max(len(line) for line in lines if LONG in line)  # the message, nothing wider
    assert "━" not in text and "│" not in text  # rows, not a box drawn to the width of its widest cell


MATRIX = "weights above the diagonal are not 0:\n[[1.  0.5]\n [0.5 1. ]]"


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "terminal"])
def test_a_message_written_over_several_lines_continues_under_itself(terminal):
    text = rendered(case("test_causal", "", False, MATRIX), case("test_other", "", True), width=100,
                    force_terminal=terminal, color_system=None)
    lines = text.splitlines()
    first = next(number for number, line in enumerate(lines) if "weights above the diagonal" in line)
    assert lines[first + 1].startswith(f"{INDENT}[[1.  0.5]") and lines[first + 2].startswith(f"{INDENT} [0.5 1. ]]")


def test_a_matrix_in_a_verdict_is_one_line():
    shown = verify.show(np.full((2, 3), np.nan))
    assert shown == "[[nan nan nan] [nan nan nan]]"
    assert "\n" not in verify.show(np.arange(60.0).reshape(6, 10))  # summarised with ..., still one line


def test_a_report_that_does_not_fit_the_terminal_is_cut_to_fit_with_its_first_failures():
    checks = [case(f"test_{n}", "", False, f"the {n}th check's verdict, long enough to fill most of a line of an "
                   "eighty-column terminal") for n in range(12)]
    text = rendered(*checks, width=80, height=24, force_terminal=True, color_system=None)
    lines = text.splitlines()
    assert len(lines) <= 23, text  # the prompt's line below it
    assert "✗ test_0:" in text and "✗ test_1:" in text  # the first failures stay on the screen
    assert "more: in the whole report" in text and "| less" in lines[-1]
    tall = rendered(*checks, width=80, height=60, force_terminal=True, color_system=None)
    assert "┏" in tall and "✗ test_11:" in tall  # where it fits, the whole report


def test_not_started_is_read_from_the_kind_of_error_not_from_the_words_of_a_message():
    """A learner's own ValueError("not implemented yet") is code that ran and raised: the exercise is started."""
    def exercise(message, error):
        return ExerciseResult("softmax", "Softmax", [CheckResult("softmax", "test_axis", "", "", "failed", 0.0, 1.0,
                                                                 message, error=error)])

    stub = "softmax.softmax() is not implemented yet (it still raises NotImplementedError)."
    assert exercise(stub, "not_implemented").status == "not started"
    assert exercise("softmax.softmax() raised ValueError: not implemented yet.", "exception").status == "in progress"
