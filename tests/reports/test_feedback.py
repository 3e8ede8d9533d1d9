"""A student's feedback: feedback.md and feedback.html say the same things, and name files as the student knows them.

Both come from one model (grader.reports.feedback); every text of it (titles,
messages, cases, what else failed, mistake names, printed output) must be
read in both, as a reader sees them: the Markdown rendered by markdown-it-py,
the HTML with its tags taken out.
"""

import html
import re

from markdown_it import MarkdownIt

from classes import cli, modules
from grader.engine.results import CheckResult, SubmissionResult
from grader.reports import feedback, gradebook


def case(name, case, message="", outcome="failed", title="", mistake="", printed="", hidden=False):
    result = CheckResult("softmax", name, case, title or name, outcome, 0.0 if outcome == "failed" else 1.0, 1.0,
                         message, hidden, printed)
    result.mistake = mistake
    return result


def a_result() -> SubmissionResult:
    result = SubmissionResult("bob", seconds=1.0)
    for check in [
        case("test_axis", "rows", "did you sum over `axis=0`?", title="sums each row to 1", mistake="wrong axis",
             printed="debug: 3 rows\n"),
        case("test_axis", "columns", "did you sum over `axis=0`?", title="sums each row to 1", mistake="wrong axis"),
        case("test_axis", "cube", "the result has shape (2, 3), not (2, 3, 4)", title="sums each row to 1"),
        case("test_large", "", "did you sum over `axis=0`?", title="handles large scores"),
        case("test_shape", "", outcome="passed", title="keeps the shape"),
    ]:
        result.add(check, "Softmax: scores into weights")
    return result


def seen(page: str) -> str:
    """A page's text as a reader takes it in: inline marks dropped, blocks apart, entities read."""
    inline = re.sub(r"</?(code|b|i|em|strong)>", "", page)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", inline)).split())


def seen_in_markdown(text: str) -> str:
    return seen(MarkdownIt("commonmark").enable("table").render(text))


def seen_in_html(text: str) -> str:
    return seen(text)


def said(model: feedback.Feedback) -> list[str]:
    """Every text of the model, its marks rendered as a reader sees them (```axis=0``` as axis=0)."""
    texts = [model.total, *model.why]
    for section in model.sections:
        texts += [section.heading, section.line, *(row[0] for row in section.rows)]
        for failure in section.failures:
            texts += [*failure.titles, failure.message, failure.where(), failure.after(), *failure.printed.split()]
    return [" ".join(text.replace("`", "").split()) for text in texts if text.strip()]


def test_feedback_md_and_html_say_the_same_things():
    result = a_result()
    model = feedback.model(result, "bob")
    markdown, page = gradebook.feedback_texts(result, "bob")
    markdown, page = seen_in_markdown(markdown), seen_in_html(page)
    for text in said(model):
        assert text in markdown, f"feedback.md does not say: {text}"
        assert text in page, f"feedback.html does not say: {text}"
    for shown in (markdown, page):  # what the old HTML left out or left unexplained
        assert "debug: 3 rows" in shown and "mistake wrong axis" in shown and "[rows, columns]" in shown
        assert "(1 more of its cases failed with other messages)" in shown
        assert "(and 1 more check: handles large scores)" in shown
        assert "(and 1 more)" not in shown


def test_the_kits_code_marks_are_code_in_markdown_not_escaped_backticks():
    text = gradebook.feedback_texts(a_result(), "bob")[0]
    rendered = MarkdownIt("commonmark").render(text)
    assert "<code>axis=0</code>" in rendered and "\\`" not in text


def test_feedback_names_a_students_file_as_handed_in_not_by_the_class_folder(tmp_path):
    submissions = tmp_path / "the-class-folder"
    warning = ("import warnings\n\n\ndef softmax(x, axis=-1):\n    warnings.warn('from my softmax')\n"
               "    import numpy as np\n    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n"
               "    print('my softmax ran')\n    return e / e.sum(axis=axis, keepdims=True) * 1.01\n")
    modules(submissions / "bob", {"softmax": warning})
    done = cli(submissions, tmp_path / "out", "--exercise", "softmax")
    assert done.returncode == 0, done.stderr
    text = (gradebook.student_folder(tmp_path / "out", "bob") / "feedback.md").read_text()
    assert "softmax.py:5: UserWarning: from my softmax" in text, text
    assert str(submissions) not in text and "the-class-folder" not in text, text
