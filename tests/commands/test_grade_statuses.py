"""Every way a submission fails to run has a status of its own, through ``softlookup grade`` (issue 46 §2).

A small class on the numpy exercises, each broken student beside an honest
one at full marks: a lookup.py that raises at import, one that does not
parse, one whose nearest_lookup was renamed, and stubs left as they were
handed out. The gradebook's status column, the student's feedback (Markdown
and HTML) and the line the command ends with name each; the summary counts
them under that status, and never lists a student's own message (their
exception, the name of the function they lack) as a mistake of the class.
"""

import re

import pytest

from classes import MAX, graded_class, honest, reference, rows, stubs
from grader.reports import gradebook

OWN_WORDS = "the importer's very own words"  # the exception a student's module raises as it is imported
RAISES_AT_IMPORT = f"raise RuntimeError({OWN_WORDS!r})\n" + reference("lookup")
DOES_NOT_PARSE = reference("lookup") + "\ndef unfinished(query:\n"
RENAMED = reference("lookup").replace("def nearest_lookup(", "def closest_lookup(")

EXPECTED = {"honest": "ok", "raises-at-import": "import-error", "does-not-parse": "syntax-error",
            "renamed-function": "missing-function", "stubs": "not-started"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return graded_class(tmp_path_factory.mktemp("statuses"), {
        "honest": honest, "raises-at-import": {"lookup": RAISES_AT_IMPORT}, "does-not-parse": {"lookup": DOES_NOT_PARSE},
        "renamed-function": {"lookup": RENAMED}, "stubs": stubs}, "--time-limit", "2")


def test_the_gradebook_names_each_way_a_submission_failed_to_run(graded):
    out, _ = graded
    found = rows(out)
    assert {student: row["status"] for student, row in found.items()} == EXPECTED
    assert float(found["honest"]["score"]) == MAX
    assert float(found["raises-at-import"]["lookup"]) == 0 and float(found["raises-at-import"]["softmax"]) > 0


@pytest.mark.parametrize("student,said", [
    ("raises-at-import", "Your lookup.py raised an error as it was imported"),
    ("does-not-parse", "Python could not read lookup.py: a syntax error"),
    ("renamed-function", "Your lookup.py has no function of a name the checks call"),
    ("stubs", "You have not started softmax.py and lookup.py yet"),
])
def test_feedback_says_the_status_and_why(graded, student, said):
    folder = gradebook.student_folder(graded[0], student)
    markdown, page = (folder / "feedback.md").read_text(), (folder / "feedback.html").read_text()
    assert f"**Status: {EXPECTED[student]}.** {said}" in markdown, markdown
    assert f"<b>Status: {EXPECTED[student]}.</b> {said}" in page, page
    honest_feedback = (gradebook.student_folder(graded[0], "honest") / "feedback.md").read_text()
    assert "**Status:" not in honest_feedback


def test_the_terminal_report_counts_each_status(graded):
    _, done = graded
    assert "Statuses: ok 1, not-started 1, missing-function 1, import-error 1, syntax-error 1." in done.stdout


def test_the_summary_counts_them_by_status_never_by_their_own_words(graded):
    out, _ = graded
    for name in ("summary.md", "summary.html"):
        text = (out / name).read_text()
        mistakes = text.split("What to reteach", 1)[1].split("Ran out of time", 1)[0]
        assert "No check failed on code a student wrote." in mistakes, mistakes
        for theirs in (OWN_WORDS, "has no function", "closest_lookup", "nearest_lookup", "unfinished", "Importing"):
            assert theirs.lower() not in text.lower(), (name, theirs)
    table = (out / "summary.md").read_text().split("## Not started", 1)[1]
    header = next(line for line in table.splitlines() if line.startswith("| exercise |"))
    lookup = next(line for line in table.splitlines() if line.startswith("| lookup |"))
    counts = dict(zip(re.findall(r"[^|]+", header)[1:], map(str.strip, re.findall(r"[^|]+", lookup)[1:])))
    counts = {status.strip(): count for status, count in counts.items()}
    assert counts["import-error"] == counts["syntax-error"] == counts["missing-function"] == "1", counts
    assert counts["not-started"] == "1" and counts["invalid"] == counts["missing"] == "0", counts
