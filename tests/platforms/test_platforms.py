"""Course exports read without a flag (issue 17): who each student is, where their work is, what is left out.

Nothing is graded here: :mod:`test_exports` grades the same exports. Each
export is built by :mod:`exports` from the platform's documented format;
the variants a platform writes besides (Moodle's older folder names and its
flat download, Canvas's anonymous and renumbered files, a Blackboard attempt
without its receipt, a Gradescope group) are built here beside the tests
that read them.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import exports
from exports import ROSTER, WORK
from grader.commands import check
from grader.engine.results import SubmissionResult
from grader.engine.submissions.intake import Student, unpacked
from grader.platforms import canvas, detect, moodle
from grader.reports import gradebook

FORMULA_NAME = '=HYPERLINK("http://evil.example","Dupont, \'Jean\'")'


def sources(student: Student) -> set[Path]:
    """The entries of the export a student's work is read from (none for a flat export's student without files)."""
    return {Path(path) for path in student.files.values()} or ({Path(student.path)} if student.path else set())


@pytest.mark.parametrize("layout", list(exports.BUILDERS))
def test_each_export_is_read_as_its_platform_without_a_flag(layout, tmp_path):
    expected = exports.BUILDERS[layout](tmp_path / "export")
    export = detect.read(tmp_path / "export")
    assert export.layout == layout
    assert {s.id: exports.Expected(s.name, s.email, s.late, "") for s in export.students} == {
        student: exports.Expected(who.name, who.email, who.late, "") for student, who in expected.items()}
    assert not [student.problem for student in export.students if student.problem]
    # Every entry of the folder read is a student's or is named as ignored, with why.
    (folder,) = {source.parent for student in export.students for source in sources(student)}
    used = {source.name for student in export.students for source in sources(student)}
    assert used | {entry for entry, _ in export.ignored} == set(os.listdir(folder))
    assert all(why for _, why in export.ignored)


def test_canvas_grades_a_resubmitted_file_under_its_own_name_and_names_older_copies(tmp_path):
    zoe = ROSTER[0]
    files = {f"vanderbergzoë_{zoe.number}_11_softmax.py": WORK["partial"]["softmax.py"],
             f"vanderbergzoë_{zoe.number}_12_softmax-2.py": WORK["honest"]["softmax.py"],
             f"vanderbergzoë_{zoe.number}_13_notes-1.txt": "not an exercise's file: its name is kept",
             "LATE_anon_x7Kq2_14_softmax.py": WORK["honest"]["softmax.py"]}
    exports.write(tmp_path, files)
    (tmp_path / "a folder").mkdir()
    export = detect.read(tmp_path)
    by_id = {student.id: student for student in export.students}
    assert set(by_id) == {str(zoe.number), "anon_x7Kq2"}
    assert {name: Path(path).name for name, path in by_id[str(zoe.number)].files.items()} == {
        "softmax.py": f"vanderbergzoë_{zoe.number}_12_softmax-2.py",
        "notes-1.txt": f"vanderbergzoë_{zoe.number}_13_notes-1.txt"}
    assert by_id["anon_x7Kq2"].late and by_id["anon_x7Kq2"].name == ""
    assert dict(export.ignored) == {
        f"vanderbergzoë_{zoe.number}_11_softmax.py": "an older upload of softmax.py (a lower attachment id; Canvas "
                                                     "numbers a resubmitted file -1, -2, ...)",
        "a folder": "not named as Canvas names a submitted file (<name>_<user id>_<file id>_<file name>)"}


@pytest.mark.parametrize("ending", ["_", ""])  # Moodle 3.1 to 4.0, and 4.1 on
def test_moodle_folders_of_every_version_and_its_flat_download(ending, tmp_path):
    zoe, jose, *_ = ROSTER
    exports.write(tmp_path / "folders" / f"{zoe.name}_{zoe.number}_assignsubmission_file{ending}", WORK["honest"])
    exports.write(tmp_path / "folders" / f"Participant_{jose.number}_assignsubmission_file{ending}", WORK["honest"])
    folders = {s.id: (s.name, Path(s.path).name) for s in detect.read(tmp_path / "folders").students}
    assert folders == {str(zoe.number): (zoe.name, f"{zoe.name}_{zoe.number}_assignsubmission_file{ending}"),
                       str(jose.number): ("", f"Participant_{jose.number}_assignsubmission_file{ending}")}
    exports.write(tmp_path / "flat", {f"{zoe.name}_{zoe.number}_assignsubmission_file_softmax.py": "",
                                      f"{zoe.name}_{zoe.number}_assignsubmission_onlinetext_onlinetext.html": ""})
    export = detect.read(tmp_path / "flat")
    (student,) = export.students
    assert (student.id, student.name, student.path, list(student.files)) == (str(zoe.number), zoe.name, "",
                                                                            ["softmax.py"])
    assert [entry for entry, _ in export.ignored] == [f"{zoe.name}_{zoe.number}_assignsubmission_onlinetext_"
                                                      "onlinetext.html"]


def test_blackboard_without_a_receipt_names_the_student_by_the_file_name(tmp_path):
    exports.write(tmp_path, {"Lab 1_jdoe_attempt_2025-02-03-10-15-22_softmax.py": "",
                             "Lab 1_jdoe_attempt_2025-02-03-10-15-22_my lookup.py": ""})
    (student,) = detect.read(tmp_path).students
    assert (student.id, student.name, sorted(student.files)) == ("jdoe", "", ["my lookup.py", "softmax.py"])


def test_a_gradescope_group_is_a_student_each_and_unreadable_metadata_leaves_folder_names(tmp_path):
    zoe, jose, *_ = ROSTER
    exports.write(tmp_path / "submission_300001", WORK["honest"])
    (tmp_path / "submission_metadata.yml").write_text(exports.gradescope_metadata({"submission_300001": [zoe, jose]}))
    students = detect.read(tmp_path).students
    assert [(s.id, s.name, s.email, Path(s.path).name) for s in students] == [
        (str(p.number), p.name, p.email, "submission_300001") for p in (zoe, jose)]
    (tmp_path / "submission_metadata.yml").write_text(":submitters: [unclosed\n")
    export = detect.read(tmp_path)
    assert [student.id for student in export.students] == ["submission_300001"]
    assert "could not be read" in dict(export.ignored)["submission_metadata.yml"]


def test_github_classroom_ids_drop_the_prefix_the_repositories_share(tmp_path):
    for name in ("attention-zvdberg", "attention-jnunez-2"):
        exports.classroom_repository(tmp_path / "clones" / name, {})
    assert sorted(s.id for s in detect.read(tmp_path / "clones").students) == ["jnunez-2", "zvdberg"]


def test_a_class_of_one_folder_stays_a_class_of_one(tmp_path):
    exports.write(tmp_path / "zvdberg" / "work", WORK["honest"])
    export = detect.read(tmp_path)
    assert (export.layout, [s.id for s in export.students]) == ("folders", ["zvdberg"])


def test_the_layout_named_is_the_one_read(tmp_path):
    exports.canvas(tmp_path / "export")
    export = detect.read(tmp_path / "export", "folders")
    assert export.layout == "folders" and len(export.students) == len(os.listdir(tmp_path / "export")) - 1
    assert all("is a file, not a folder" in student.problem for student in export.students)


@pytest.mark.parametrize("argv,fragment", [
    (["--layout", "sakai"], "invalid choice: 'sakai'"),
    (["--layout"], "expected one argument"),
])
def test_an_unknown_layout_is_one_line_and_exit_2(argv, fragment, tmp_path):
    done = subprocess.run([sys.executable, "-m", "grader.cli", "grade", str(tmp_path), "--out", str(tmp_path / "o"),
                           *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and fragment in done.stderr and len(done.stderr.strip().splitlines()) == 1


# -- what the batch grades: the folder that holds the exercises ------------------------------------


def _nested(root: Path) -> Student:
    exports.write(root / "a" / "b" / "c", WORK["honest"])
    return Student("deep", str(root))


def _zip_inside(root: Path) -> Student:
    with zipfile.ZipFile(exports.write(root, {}) / "work.zip", "w") as archive:
        archive.writestr("work/softmax.py", WORK["honest"]["softmax.py"])
    return Student("zipped", str(root))


NESTINGS = {
    "lone folders, however deep": _nested,
    "a zip inside the folder": _zip_inside,
    "a clone of the bundle": lambda root: Student("clone", str(exports.classroom_repository(root, WORK["honest"]))),
    "a flat export's files": lambda root: Student("flat", "", files={
        "softmax.py": str(exports.write(root, {"doe_1_2_softmax.py": WORK["honest"]["softmax.py"]})
                          / "doe_1_2_softmax.py")}),
}


@pytest.mark.parametrize("nesting", list(NESTINGS))
def test_the_batch_finds_the_exercises_however_the_submission_nests_them(nesting, tmp_path):
    student = NESTINGS[nesting](tmp_path / "submission")
    (tmp_path / "scratch").mkdir()
    assert (unpacked(student, tmp_path / "scratch") / "softmax.py").read_text() == WORK["honest"]["softmax.py"]


def test_a_file_that_is_a_link_is_never_read_through(tmp_path):
    (tmp_path / "secret").write_text("the grader's own file")
    os.symlink(tmp_path / "secret", tmp_path / "link.py")
    (tmp_path / "scratch").mkdir()
    with pytest.raises(ValueError, match="softmax.py cannot be read"):
        unpacked(Student("s", "", files={"softmax.py": str(tmp_path / "link.py")}), tmp_path / "scratch")


def test_check_finds_the_exercises_of_a_clone_as_it_does_in_the_current_folder(tmp_path):
    clone = exports.classroom_repository(tmp_path / "attention-zvdberg", {})
    args = check.parser().parse_args([str(clone)])
    assert check.usage_problem(args) is None and args.directory == clone / "assignments"


# -- what goes back to the platform ----------------------------------------------------------------


def test_every_import_file_is_a_name_no_student_folder_takes():
    files = [platform.IMPORT_FILE for platform in detect.LAYOUTS.values() if platform.IMPORT_FILE]
    assert sorted(files) == sorted(gradebook.IMPORT_FILES)


@pytest.mark.parametrize("platform", [canvas, moodle])
def test_names_from_an_export_reach_the_import_file_as_text(platform):
    result = SubmissionResult("1041", name=FORMULA_NAME, email="=1+1@example.edu")
    text = platform.gradebook_import({"1041": result, "-2": SubmissionResult("-2")}, "=Attention (4242)")
    rows = list(csv.reader(io.StringIO(text)))
    cells = [cell for row in rows for cell in row]
    assert not [cell for cell in cells if cell.lstrip(" ").startswith(("=", "+", "@")) or cell == "-2"]
    assert "'" + FORMULA_NAME in cells  # whole, quotes and comma included, one cell
    assert text.endswith("\r\n") and "\r\n" in text[:-2]


def test_moodle_reads_its_worksheet_date_in_english_whatever_the_locale():
    import datetime

    assert moodle._moodle_date(datetime.datetime(2025, 6, 5, 14, 30)) == "Thursday, 05 June 2025, 02:30 PM"
    assert moodle._moodle_date(datetime.datetime(2025, 6, 5, 0, 5)) == "Thursday, 05 June 2025, 12:05 AM"
