"""The class summary teaches (issue 17): mistakes ranked apart from work that was never there to grade.

Results are built by hand, as the plugin fills them in: students who did not
start an exercise, whose module is missing or does not parse, who left a
function unimplemented, and students who made the same catalogued mistake
(its hint from tests/mistakes.py), seen by different checks on different
inputs.
"""

from __future__ import annotations

import re

from grader.reports import gradebook, verdicts
from grader.engine.results import CheckResult, SubmissionResult
from grader.reports import summary

SHIFT = "Only the differences between scores matter: subtract the largest score first."  # mistakes.py's hint
NOT_IMPLEMENTED = "softmax.softmax() is not implemented yet (it still raises NotImplementedError)."


def result(student: str, *checks: tuple) -> SubmissionResult:
    """A student's result: ``(exercise, check, message, error)`` per failed case; every other check passed."""
    graded = SubmissionResult(student)
    failed = {(exercise, check) for exercise, check, _, _ in checks}
    for exercise, check, message, error in checks:
        graded.add(CheckResult(exercise, check, "", check.replace("_", " "), "failed", 0.0, 1.0, message,
                               error=error), exercise)
    for exercise in ("softmax", "lookup"):
        for check in ("test_large_scores", "test_rows_far_apart", "test_lesson_table"):
            if (exercise, check) not in failed:
                graded.add(CheckResult(exercise, check, "", check, "passed", 1.0, 1.0), exercise)
    return graded


def everywhere(exercise: str, message: str, error: str) -> tuple:
    """The failures of an exercise whose checks all fail for one reason."""
    return tuple((exercise, check, message, error) for check in ("test_large_scores", "test_rows_far_apart",
                                                                 "test_lesson_table"))


CLASS = {
    "not-started": result("not-started", *everywhere("softmax", NOT_IMPLEMENTED, "not_implemented")),
    "missing": result("missing", *everywhere("lookup", "There is no lookup.py in your submission.", "missing")),
    "unreadable": result("unreadable", *everywhere("softmax", "Python could not read your file: line 3.", "syntax")),
    "shift-twice": result("shift-twice",
                          ("softmax", "test_large_scores", f"softmax([1000. 999.]): expected [0.7311 0.2689], "
                                                           f"received [nan nan]. {SHIFT}", ""),
                          ("softmax", "test_rows_far_apart", f"softmax of rows near +1000 and -1000: expected "
                                                             f"[[0.5 0.5] [0.5 0.5]], received [[nan nan] [0 0]]. "
                                                             f"{SHIFT}", "")),
    "shift-once": result("shift-once", ("softmax", "test_large_scores", f"softmax([-1000. -999.]): expected "
                                                                        f"[0.2689 0.7311], received [0 0]. {SHIFT}",
                                        "")),
    "table": result("table", ("lookup", "test_lesson_table", "gpt2_values.py: sqrt(d_k) is off by 0.25", "")),
    "unfinished": result("unfinished", ("lookup", "test_lesson_table", "lookup.nearest() is not implemented yet "
                                                                       "(it still raises NotImplementedError).",
                                        "not_implemented")),
}


def test_mistakes_rank_only_code_students_wrote_grouped_by_what_the_checks_named():
    found = summary.mistakes(CLASS)
    assert [(m.exercise, m.told, sorted(m.students), m.attempted) for m in found] == [
        ("softmax", SHIFT, ["shift-once", "shift-twice"], 5),  # three checks' inputs, one mistake, once each
        ("lookup", "gpt2_values.py: sqrt(d_k) is off by …", ["table"], 6),  # names keep their digits
    ]
    assert found[0].checks == {"test large scores", "test rows far apart"}


def test_work_that_was_never_there_is_counted_apart():
    assert summary.absences(CLASS) == {
        "softmax": {"not-started": 1, "syntax-error": 1},
        "lookup": {"missing": 1, "functions not started": 1},
    }
    text = summary.markdown(CLASS)
    reteach, absent = text.split("## What to reteach")[1].split(f"## {summary.NOTHING_TO_GRADE}")
    assert SHIFT in reteach and "2 of 5" in reteach and "NotImplementedError" not in reteach
    assert "There is no" not in reteach and "could not read" not in reteach
    assert "| softmax | 1 | 0 | 1 | 0 | 0 | 0 | 0 |" in absent and "| lookup | 0 | 1 | 0 | 0 | 0 | 0 | 1 |" in absent


def test_the_summary_page_has_one_heading_and_both_sections():
    page = summary.page(CLASS)
    assert page.count("<h1>") == 1 and "<h2>What to reteach</h2>" in page
    assert f"<h2>{summary.NOTHING_TO_GRADE}</h2>" in page and "2 of 5" in page


def test_a_class_that_handed_in_everything_says_so():
    honest = {"a": result("a")}
    assert summary.mistakes(honest) == [] and not any(summary.absences(honest).values())
    text = summary.markdown(honest)
    assert "No check failed on code a student wrote." in text and "Every student handed in every exercise" in text


def test_feedback_html_opens_with_the_total_as_feedback_md_does():
    shown = CLASS["shift-once"]
    page = gradebook.feedback_texts(shown, "shift-once")[1]
    total = f"{verdicts.points(shown.score)}/{verdicts.points(shown.max_score)}"
    assert page.count("<h1>") == 1
    assert re.search(r"<h1>[^<]*</h1>\s*<p><b>Total: " + re.escape(total), page)
    assert gradebook.feedback_texts(shown, "shift-once")[0].splitlines()[2] == f"**{total} points**"


TIMED_OUT = "softmax.softmax() ran past its 1 s time limit: is there a loop that never ends?"
STOPPED_CLASS = {**CLASS,
                 "looping": result("looping", *everywhere("softmax", TIMED_OUT, "timeout"),
                                   ("lookup", "test_lesson_table", "lookup.soft_lookup() was not run: it calls "
                                                                   "softmax.softmax(), which ran past its time limit",
                                    "timeout")),
                 "crashing": result("crashing", ("lookup", "test_large_scores", "lookup.soft_lookup() ended the "
                                                                                "program (exit status 3)", "exit"))}


def test_timeouts_and_crashes_are_counted_apart_not_as_mistakes():
    def told(graded):
        return [(m.exercise, m.told, m.students) for m in summary.mistakes(graded)]

    assert told(STOPPED_CLASS) == told(CLASS)  # the loop and its knock-on, the crash: no mistake of the lesson
    assert {name: dict(counts) for name, counts in summary.stopped(STOPPED_CLASS).items() if counts} == {
        "softmax": {"ran out of time": 1}, "lookup": {"ran out of time": 1, "crashed": 1}}
    text = summary.markdown(STOPPED_CLASS)
    reteach, rest = text.split("## What to reteach")[1].split("## Ran out of time or memory, or crashed")
    assert "time limit" not in reteach and "ended the program" not in reteach
    assert "| softmax | 1 | 0 | 0 | 0 |" in rest and "| lookup | 1 | 0 | 0 | 1 |" in rest  # time, memory, disk, crashed
    assert "<h2>Ran out of time or memory, or crashed</h2>" in summary.page(STOPPED_CLASS)


def test_the_charts_count_students_in_whole_numbers():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    small = {name: CLASS[name] for name in ("shift-once", "shift-twice", "table")}  # counts of 1 and 2: halves, once
    for figure, axis in ((summary.histogram_figure(small), "y"), (summary.mistakes_figure(summary.mistakes(small)), "x")):
        FigureCanvasAgg(figure).draw()
        axes = figure.axes[0]
        ticks = (axes.get_yticks() if axis == "y" else axes.get_xticks())
        shown = [t for t in ticks if (axes.get_ylim() if axis == "y" else axes.get_xlim())[0] <= t
                 <= (axes.get_ylim() if axis == "y" else axes.get_xlim())[1]]
        assert shown and all(float(t).is_integer() for t in shown), ticks


def test_a_chart_label_is_cut_between_words():
    long = summary.Mistake("softmax", "Only the differences between scores matter: subtract the largest score first, "
                                      "along the axis you were given, and never the largest of the whole array")
    label = summary.chart_label(long)
    lines = label.split("\n")
    assert len(lines) == 2 and all(len(line) <= 60 for line in lines) and lines[-1].endswith(" …")
    words = set(f"{long.exercise}: {long.told}".split())
    assert all(word in words for line in lines for word in line.removesuffix(" …").split()), label  # no word cut


def test_a_graded_class_is_summarised_one_row_per_mistake_made(tmp_path):
    """A class with a known mix of catalogued mistakes, graded as `softlookup grade` grades it: one row per
    mistake, counted by the students who made it, most made first; the checks each mistake also fails (a
    hidden comparison, a property that follows from it) add no row of their own."""
    from helpers import make_submission, run_batch
    from mistakes import MISTAKES

    made = {"no max subtraction": 3, "divide by the max": 2, "axis ignored": 1, "shifted by the first score": 1}
    catalogue = {mistake.name: mistake for mistake in MISTAKES if mistake.module == "softmax"}
    folders = {"right": make_submission(tmp_path / "right")}
    for name, students in made.items():
        for number in range(students):
            folder = folders[f"{name}-{number}".replace(" ", "-")] = make_submission(tmp_path / f"{name}-{number}")
            catalogue[name].apply(folder)
    graded = run_batch(folders, ["softmax"], tmp_path)
    found = summary.mistakes(graded)
    assert [(m.name, len(m.students), m.attempted) for m in found] == [
        (catalogue[name].named, students, len(folders)) for name, students in made.items()]
    for mistake, name in zip(found, made):
        assert mistake.students == {student for student in folders if student.startswith(name.replace(" ", "-"))}
    table = summary.markdown(graded).split("## What to reteach")[1].split("## Ran out of time")[0]
    assert "(`largest-not-subtracted`) | 3 of 8 |" in table and "(`divided-by-max`) | 2 of 8 |" in table
    assert table.count("| softmax: ") == len(made)
