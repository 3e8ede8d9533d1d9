"""What the instructor opens is safe and what the student sees is redacted, whatever the student wrote.

Results are built by hand, as the plugin would fill them in, with hostile
ids and texts: ids a spreadsheet would run as formulas, prints that close a
Markdown code block to add a fake "note from the instructor", HTML, lone
surrogates (text UTF-8 cannot encode), hidden checks that failed with their
inputs in the message and in what the student's code printed, and students
named like the gradebook's own files. Markdown is read back with
markdown-it-py (CommonMark, with GitHub's tables), CSV with the csv module.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from rich.console import Console

from grader.reports import gradebook, inert
from grader.reports import summary
from grader.engine import results
from grader.engine.results import CheckResult, SubmissionResult, redacted, write_atomically
from grader.reports.gradescope import gradescope
from grader.reports.terminal import render

FORMULAS = ['=HYPERLINK("http://evil.example","click")', "+1+2", "-2+3", "@SUM(A1:A2)", "\tx", "\rx", " =1+1",
            "=cmd|' /C calc'!A0"]
FAKE_NOTE = "## Note from the instructor\n\nThis student gets full marks; ignore the table."
BREAKOUT = f"debug\n```\n{FAKE_NOTE}\n````\n~~~\n<script>alert('printed')</script>\n"
HOSTILE_MESSAGE = "raised ValueError: `` ` `` <script>alert(1)</script> **bold** [link](http://evil) | pipe \n# heading"
SECRETS = ["SECRET-EXPECTED-0.7884", "SECRET-SHAPE-(10, 10)", "SECRET-PRINTED", "SECRET-RAISED", "SECRET-CASE"]
HOSTILE_IDS = ["## Note from the instructor", "<script>alert('id')</script>", "a`b``c", "x\ud800y", *FORMULAS[:3]]
CLASS_NAMED = ["grades.csv", "summary.md", "summary.html", "Grades.CSV", "_grades.csv", "__grades.csv", ".hidden",
               "..", "", "_", "~", "x" * 255, "_" + "y" * 254, "a/b", "a\ud800b", "plain"]


def check(exercise="softmax", name="test_sums", case="", outcome="failed", message="", hidden=False, printed="",
          error="", title="the weights sum to 1") -> CheckResult:
    passed = outcome == "passed"
    return CheckResult(exercise, name, case, title, outcome, 1.0 if passed else 0.0, 1.0, message, hidden, printed,
                       error)


def hostile_result(student: str = "s") -> SubmissionResult:
    """A public failure quoting hostile text and printing a breakout, and hidden checks full of secrets."""
    result = SubmissionResult(student, seconds=1.5)
    for item in [
        check(message=HOSTILE_MESSAGE, printed=BREAKOUT + "\ud800 lone surrogate " + "`" * 7),
        check(name="test_shape", title="keeps the shape", outcome="passed"),
        check(name="test_hidden_values", title="matches the reference", hidden=True, case="SECRET-CASE-3x5",
              message=f"expected {SECRETS[0]} for {SECRETS[1]}", printed=f"softmax() printed:\n{SECRETS[2]}"),
        check(name="test_hidden_values", title="matches the reference", hidden=True, case="SECRET-CASE-7x2",
              outcome="passed", printed=f"softmax() printed:\n{SECRETS[2]}"),
        check(name="test_hidden_raises", title="works on every shape", hidden=True, error="exception",
              message=f"softmax() raised ValueError: {SECRETS[3]} {SECRETS[1]} \udfff", printed=SECRETS[2]),
        check(name="test_hidden_slow", title="is fast enough", hidden=True, error="timeout",
              message=f"softmax() ran past its 1 s time limit on {SECRETS[1]}"),
    ]:
        result.add(item, "Softmax: <b>scores</b> into weights")
    return result


def markdown_tokens(text: str):
    return MarkdownIt("commonmark").enable("table").parse(text)


def headings(text: str) -> list[str]:
    """Every heading's text, as a reader sees it (escapes undone)."""
    tokens = markdown_tokens(text)
    return ["".join(child.content for child in tokens[i + 1].children) for i, token in enumerate(tokens)
            if token.type == "heading_open"]


def html_in(text: str) -> list[str]:
    """Raw HTML that the Markdown would pass through to a browser."""
    found = []
    for token in markdown_tokens(text):
        if token.type == "html_block":
            found.append(token.content)
        for child in token.children or []:
            if child.type == "html_inline":
                found.append(child.content)
    return found


# -- the gradebook: no cell of a student's is a formula --------------------------------------------


def test_every_student_cell_of_the_gradebook_is_text_to_a_spreadsheet():
    graded = {student: hostile_result(student) for student in [*FORMULAS, "honest"]}
    for student, result in graded.items():  # names and emails from an export are the students' text too
        result.name, result.email = student, student
    text = gradebook.grades_csv(graded, ["softmax", "lookup"])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["student", "name", "email", "late", "score", "max_score", "status", "softmax", "lookup",
                       "edition"]
    ids = {row[0]: row for row in rows[1:]}
    assert set(ids) == {"'" + student for student in FORMULAS} | {"honest"}
    for row in rows[1:]:
        assert row[1] == row[2] == row[0]
        assert not row[0].lstrip(" ").startswith(("=", "+", "-", "@", "\t", "\r", "\n")), row
        assert [float(cell) for cell in row[4:6] + row[7:9]] == [2, 6, 2, 0]  # numbers stay numbers
        assert row[6] == "timeout"  # the hidden check that ran past its limit


def test_a_cell_that_only_looks_like_a_formula_inside_is_left_as_it_is():
    assert inert.csv_text("a=1+2") == "a=1+2"
    assert inert.csv_text("honest-0") == "honest-0"
    assert inert.csv_text("caf\\xe9") == "caf\\xe9"
    assert inert.csv_text("x\ud800") == "x\\ud800"


# -- feedback.md and summary.md: a student's text stays text ----------------------------------------


@pytest.mark.parametrize("student", HOSTILE_IDS)
def test_feedback_markdown_has_only_the_kits_headings_and_the_fake_note_stays_in_a_code_block(student):
    text = gradebook.feedback_texts(hostile_result(student), student)[0]
    shown_id = student.encode("utf-8", "backslashreplace").decode()
    assert headings(text) == [f"Feedback for {shown_id}", "softmax.py: Softmax: <b>scores</b> into weights: "
                                                          "2/6 points, in progress"]
    assert html_in(text) == []
    fences = [token.content for token in markdown_tokens(text) if token.type == "fence"]
    assert len(fences) == 1 and FAKE_NOTE in fences[0] and "<script>" in fences[0]  # all of the print, as it was
    assert "`" * 7 in fences[0]
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "<script>" not in rendered and '<a href="http://evil"' not in rendered and "<strong>bold" not in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt; **bold** [link](http://evil) | pipe  # heading" in rendered


def test_the_summary_quotes_messages_as_text():
    graded = {student: hostile_result(student) for student in ["a", "b"]}
    text = summary.markdown(graded)
    assert headings(text) == ["Class summary: 2 students", "Distribution", "What to reteach",
                              "Ran out of time or memory, or crashed", summary.NOTHING_TO_GRADE]
    assert set(html_in(text)) <= {"<br>"}
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "<script>" not in rendered and "&lt;script&gt;" in rendered


def test_blanking_numbers_keeps_names():
    assert summary.blanked("gpt2_values.py: layer 4 is off by 0.25 (expected [0.1 0.9], received [1e-05 1.])") \
        == "gpt2_values.py: layer … is off by … (expected …, received …)"
    assert summary.blanked("the scores are divided by d_k, not sqrt(d_k); x[0] of shape (3, 4)") \
        == "the scores are divided by d_k, not sqrt(d_k); x[…] of shape (…, …)"


# -- HTML: everything escaped, one heading -----------------------------------------------------------


@pytest.mark.parametrize("student", HOSTILE_IDS)
def test_the_html_pages_escape_everything_and_have_one_heading(student):
    graded = {student: hostile_result(student), "other": hostile_result("other")}
    for page in (gradebook.feedback_texts(graded[student], student)[1], summary.page(graded)):
        assert "<script" not in page and "<b>scores" not in page
        assert "&lt;script&gt;" in page
        assert page.count("<h1>") == 1
    assert "Class summary: 2 students" in summary.page(graded)


# -- redaction: one rule for results.json, feedback.md and feedback.html ----------------------------


def test_no_student_facing_file_holds_a_hidden_checks_message_prints_or_case(tmp_path):
    result = hostile_result()
    folder = gradebook.student_folder(tmp_path, "s")
    gradebook.write_student(folder, "s", result)
    for name in ("results.json", "feedback.md", "feedback.html"):
        text = (folder / name).read_text(encoding="utf-8")
        assert not [secret for secret in SECRETS if secret in text], name
        assert "matches the reference" in text and "works on every shape" in text and "is fast enough" in text, name
        assert "inputs that stay hidden" in text and "time limit" in text, name
    record = (folder / gradebook.RESULT_FILE).read_text()
    assert all(secret in record for secret in SECRETS)  # the instructor's record is whole
    kept = gradebook.read_student(folder)[1]
    assert kept.to_plain() == gradebook.record(result).to_plain()
    checks = [(item, original) for exercise, whole in zip(kept.exercises, result.exercises)
              for item, original in zip(exercise.checks, whole.checks)]
    for item, original in checks:  # less the prints of checks passed, which no report shows
        assert item.printed == ("" if original.passed else original.printed.encode("utf-8", "backslashreplace")
                                .decode())
        assert item.message == original.message.encode("utf-8", "backslashreplace").decode()


def test_results_json_is_redacted_by_whoever_makes_it():
    """The Gradescope autograder and ``check --json`` write gradescope(result) themselves."""
    text = json.dumps(gradescope(hostile_result()))
    assert not [secret for secret in SECRETS if secret in text]
    tests = {test["name"]: test for test in gradescope(hostile_result())["tests"]}
    assert tests["softmax: matches the reference"]["output"] == results.HIDDEN_FEEDBACK  # once, not per case
    assert tests["softmax: matches the reference"]["visibility"] == "after_published"
    assert HOSTILE_MESSAGE in tests["softmax: the weights sum to 1"]["output"]  # a public check keeps its message


def test_the_terminal_table_is_whole_for_whoever_holds_the_reference():
    """``softlookup check`` with the hidden checks runs only where the reference solutions are: the instructor's."""
    output = io.StringIO()
    render(hostile_result(), Console(file=output, width=200, highlight=False))
    assert all(secret in output.getvalue() for secret in SECRETS)


def test_redaction_is_one_function_and_applying_it_again_changes_nothing():
    once = redacted(hostile_result())
    assert redacted(once).to_plain() == once.to_plain()
    assert gradebook.redacted is redacted
    assert gradebook.feedback_texts(once, "s") == gradebook.feedback_texts(hostile_result(), "s")  # both files
    hidden = [c for e in once.exercises for c in e.checks if c.hidden]
    assert all(c.printed == "" and c.case == "" for c in hidden)
    assert hidden_statuses_kept(once)


def hidden_statuses_kept(result: SubmissionResult) -> bool:
    return result.status == "timeout" and result.score == hostile_result().score


def test_a_hidden_check_that_is_not_implemented_still_reads_not_started():
    result = SubmissionResult("s")
    for item in [check(message="softmax.py: every function is not implemented yet (it still raises ...)",
                       error="not_implemented"),
                 check(name="test_hidden", hidden=True, error="not_implemented",
                       message="softmax.py: every function is not implemented yet (it still raises ...)")]:
        result.add(item, "Softmax")
    assert redacted(result).exercises[0].status == "not started"


# -- text that cannot be encoded ---------------------------------------------------------------------


def test_lone_surrogates_never_stop_a_file_or_the_terminal(tmp_path):
    student = "x\ud800y"
    result = hostile_result(student)
    result.unprotected = ["a protection \udc80"]
    folder = gradebook.student_folder(tmp_path, student)
    gradebook.write_student(folder, student, result)
    gradebook.write_class(tmp_path, {student: result}, ["softmax"])
    for path in [*folder.iterdir(), *(tmp_path / name for name in gradebook.CLASS_FILES)]:
        path.read_bytes().decode("utf-8")  # written whole, as UTF-8
    assert "\\ud800 lone surrogate" in (folder / "feedback.md").read_text()
    assert gradebook.read_student(folder)[0] == student
    write_atomically(tmp_path / "plain.txt", "a \ud800 b")
    assert (tmp_path / "plain.txt").read_text() == "a \\ud800 b"
    output = io.StringIO()
    render(result, Console(file=output, width=100, highlight=False))
    assert "\\ud800 lone surrogate" in output.getvalue() and "\\udfff" in output.getvalue()
    assert "a protection \\udc80" in output.getvalue()


# -- students named like the gradebook's own files ----------------------------------------------------


def test_every_student_gets_a_folder_of_their_own_and_no_kit_file_is_taken(tmp_path):
    folders = {student: gradebook.student_folder(tmp_path, student) for student in CLASS_NAMED}
    names = [folder.name for folder in folders.values()]
    assert len(set(names)) == len(names)  # one folder per student
    assert all(folder.parent == tmp_path for folder in folders.values())
    reserved = {name.casefold() for name in gradebook.CLASS_FILES}
    for name in names:
        assert name.casefold() not in reserved and not name.startswith(".") and "/" not in name
        assert len(name.encode("utf-8")) <= 255
    assert folders["plain"].name == "plain" and folders["grades.csv"].name == "_grades.csv"

    graded = {}
    for student in CLASS_NAMED:
        graded[student] = hostile_result(student)
        gradebook.write_student(folders[student], student, graded[student])
    gradebook.write_class(tmp_path, graded, ["softmax"])
    for name in gradebook.CLASS_FILES:
        assert (tmp_path / name).is_file()
    rows = {row["student"] for row in csv.DictReader(open(tmp_path / "grades.csv", newline=""))}
    assert len(rows) == len(CLASS_NAMED)
    for student in CLASS_NAMED:  # a rerun finds every one of them
        found = gradebook.read_student(gradebook.student_folder(tmp_path, student))
        assert found is not None and found[0] == student


def test_a_student_folder_left_where_a_kit_file_goes_is_moved_to_its_place(tmp_path):
    """A gradebook from before: the student named summary.md has their folder where summary.md goes."""
    gradebook.write_student(tmp_path / "summary.md", "summary.md", hostile_result("summary.md"))
    gradebook.write_class(tmp_path, {"summary.md": hostile_result("summary.md")}, ["softmax"])
    assert (tmp_path / "summary.md").is_file()
    assert gradebook.read_student(gradebook.student_folder(tmp_path, "summary.md"))[0] == "summary.md"


def test_the_layout_is_the_one_the_readme_describes(tmp_path):
    gradebook.write_student(gradebook.student_folder(tmp_path, "alice"), "alice", hostile_result("alice"))
    assert sorted(path.name for path in (tmp_path / "alice").iterdir()) == [
        "feedback.html", "feedback.md", "results.json", "softlookup.json"]
    assert Path(tmp_path / "alice").is_dir()
