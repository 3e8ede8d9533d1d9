"""The words reports use, as a reader takes them in (issue 47): lists said as lists, a function never taken for a
class, a thing said once, a check's title whole, scores rounded, the histogram's bars in one column."""

import ast
import re

import pytest

from grader.engine import registry
from grader.engine.errors import SubmissionError
from grader.engine.results import CheckResult, ErrorKind, SubmissionResult
from grader.reports import feedback, inert, summary, verdicts


def timed_out(*modules: str) -> SubmissionResult:
    result = SubmissionResult("s")
    for module in modules:
        result.add(CheckResult(module, "test_x", "", "x", "failed", 0.0, 1.0,
                               f"{module}.{module}() computed for more than its 5 s time limit", error="timeout"),
                   module)
    return result


def test_a_list_of_files_is_said_with_commas_and_one_and():
    [line] = verdicts.status_lines(timed_out("softmax", "lookup", "attention", "gpt2_values"))
    assert "in softmax.py, lookup.py, attention.py and gpt2_values.py" in line, line
    assert verdicts.listed(["a.py", "b.py"], "or") == "a.py or b.py" and verdicts.listed(["a.py"]) == "a.py"


def test_a_function_opening_a_sentence_is_not_capitalised_into_a_class():
    model = feedback.model(timed_out("softmax"), "s")
    assert model.sections[0].line.startswith("softmax.softmax() computed for more than"), model.sections[0].line
    assert verdicts.sentence("not started") == "Not started"


def test_a_function_that_hung_is_named_once_when_called_again():
    said = SubmissionError(ErrorKind.HUNG, "softmax.softmax()", "softmax.softmax()").explain()
    assert said.count("softmax.softmax()") == 1, said
    other = SubmissionError(ErrorKind.HUNG, "softmax.softmax()", "lookup.soft_lookup()").explain()
    assert "lookup.soft_lookup() was stopped: it calls softmax.softmax()" in other


def check_docstrings():
    for exercise in registry.EXERCISES:
        for path in exercise.check_files(hidden=True):
            for node in ast.parse(path.read_text()).body:
                if isinstance(node, ast.FunctionDef) and node.name in exercise.points and ast.get_docstring(node):
                    yield f"{path.parent.name}/{path.name}::{node.name}", ast.get_docstring(node)


@pytest.mark.parametrize("name,docstring", list(check_docstrings()), ids=lambda value: value if "::" in value else "")
def test_a_checks_title_is_its_first_sentence_whole(name, docstring):
    title = registry.check_title(docstring)
    paragraph = " ".join(docstring.split("\n\n")[0].split())
    assert paragraph.startswith(title) and paragraph[len(title):len(title) + 1] in ("", "."), (title, paragraph)
    assert not re.search(r"(,| the| a| an| and| or| of)$", title), f"{name}: cut short: {title}"


def test_the_kits_code_marks_are_code_in_markdown():
    assert inert.kit_inline("did you divide by `np.max(x)`? <b>") == r"did you divide by `np.max(x)`? \<b\>"
    assert inert.kit_inline("a `` ` `` tick") == "a `` ` `` tick"


def scored(student: str, score: float, out_of: float = 137.0) -> SubmissionResult:
    result = SubmissionResult(student)
    result.add(CheckResult("softmax", "test_x", "", "x", "passed", score, score), "softmax")
    result.add(CheckResult("softmax", "test_y", "", "y", "failed", 0.0, out_of - score, "wrong"), "softmax")
    return result


def test_the_summary_rounds_its_figures_and_lines_up_its_histogram():
    graded = {f"s{i}": scored(f"s{i}", score) for i, score in enumerate([0, 59.5, 59.5, 117.6667, 137, 131.25])}
    text = summary.markdown(graded)
    figures = text.split("Scores out of")[1].split("\n")[0]
    assert not re.search(r"\d\.\d\d", figures), figures  # 117.667 and 59.25 said as 117.7 and 59.3
    histogram = text.split("## Distribution")[1].split("```")[1].strip("\n").splitlines()
    bars, counts = {line.index("#") for line in histogram if "#" in line}, {line.rindex(" ") for line in histogram}
    assert len(bars) == len(counts) == 1, "\n".join(histogram)  # every bar, and every count, in one column
