"""The result table as a learner reads it, and as a pipe receives it."""

import io

from rich.console import Console

from grader.engine.results import CheckResult, SubmissionResult
from grader.reports.terminal import render

LONG_TITLE = "recompute_head_pattern rebuilds the head's pattern from the weights: ln_1, c_attn, q.k/sqrt(d), softmax"
REPEATED = "the weights sum to 2 and the largest weight is 1: did you divide by the max instead of dividing by the sum?"
LONG = ("the pattern of recompute_head_pattern(model, ids, layer=4, head=3): 54 of 100 entries are off (largest "
        "difference at index (8, 8): expected 0.7884, received 0.1111). Check each step of the recipe.")


def case(check, case_id, passed, message="", title="", points=1.0):
    return CheckResult(exercise="softmax", check=check, case=case_id, title=title or check,
                       outcome="passed" if passed else "failed", points=points if passed else 0.0,
                       max_points=points, message="" if passed else message)


def rendered(*checks) -> str:
    result = SubmissionResult("s")
    for check in checks:
        result.add(check, "Softmax: scores into weights")
    output = io.StringIO()
    render(result, Console(file=output, width=80, highlight=False))  # a pipe: no terminal, rich's 80 columns
    return output.getvalue()


def test_partial_results_read_as_cases_passed():
    text = rendered(case("test_axis", "0", True), case("test_axis", "1", False, "wrong axis"),
                    case("test_axis", "-1", True), case("test_shift", "", False, "not shift invariant"),
                    case("test_keeps_shape", "", True))
    assert "2 of 3 cases passed" in text
    assert "failed 1/3" not in text and "failed 2/3" not in text
    assert "│ failed" in text and "│ passed" in text


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
