"""The instructor's record of a class run, whole at every moment: what ``softlookup grade`` writes as it goes.

Three promises, each kept here:

- **Whatever stops the run, the record holds every student finished.** Each student's files are written
  as their result comes, before the next result is taken: their feedback, then the gradebook with their
  row, then ``softlookup.json``, the record that marks them graded, each file renamed into place whole,
  its content on the disk (fsync) before its name, and the record with the names of all four on the disk
  before the next student's turn. So at any instant, SIGKILL and a power cut included,
  every student marked graded has their feedback and their row in grades.csv; a row whose record was cut
  off is graded again by the next run, which writes the gradebook from the records before it grades
  anyone. grades.csv is written whole after every student rather than only rebuilt on resume, because an
  instructor who stops a run (or whose run is stopped) opens grades.csv, not the next run: its rows are
  kept in memory, so writing it again costs the joining of a few hundred lines.
- **The record never depends on a student's disk use.** :class:`Reserve` keeps space aside in OUT, sized
  for the records still to come; a write that finds the disk full frees part of it and tries again, and
  between students it is topped up to what the rest need, as far as the disk allows.
- **A record stands only while nothing grading read has changed.** :meth:`ClassRecord.standing` says
  whether a student's record still holds: the same work, by content (:func:`grader.engine.submissions.digests.work_digest`),
  the same edition of the kit's checks, reference and engine (:func:`grader.engine.edition.kit_edition`),
  and the same settings (the exercises and the limits chosen); else why it must be graded again.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from grader.engine.results import SubmissionResult, write_atomically
from grader.engine.submissions.digests import work_digest
from grader.engine.submissions.intake import Student
from grader.reports import gradebook

RESERVE_FILE = ".softlookup-reserve"  # hidden: no student's folder takes a name that starts with "."
STUDENT_BYTES = 256 * 2**10  # kept aside per student still to record: their four files, with room to spare
CLASS_BYTES = 4 * 2**20  # and for the class's files: grades.csv, the summary (its charts) and the import file
FULL = (errno.ENOSPC, errno.EDQUOT)  # a disk (or a quota) with no room left

# Why a student is graded again, as the run says it ("3 regraded: work changed").
NEW, WORK, CHECKS, SETTINGS = "", "work changed", "checks changed", "settings changed"


class Reserve:
    """A file of space kept aside in OUT, given back, part by part, to the class's record when the disk is full.

    The space is the file's own blocks (allocated, not a sparse file), so nothing else on the disk (a
    student's scratch folder, say, where a worker has one there) can take it. Where the disk cannot hold
    all of it, as much as fits is kept. :meth:`close` removes it; one left by a run that was killed is
    taken over by the next.
    """

    CHUNK = 2**20  # given back at a time: a record's files need far less

    def __init__(self, path: Path):
        self.path = path

    def keep(self, size: int):
        """Make the reserve ``size`` bytes, or as near as the disk allows (never failing: it is a precaution)."""
        try:
            descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError:
            return
        try:
            kept = os.fstat(descriptor).st_size
            if kept > size:
                os.ftruncate(descriptor, size)
            while size > kept:
                try:
                    os.posix_fallocate(descriptor, 0, size)
                    return
                except OSError as error:
                    if error.errno not in FULL:
                        return
                    size = kept + (size - kept) // 2  # half the missing part, until a chunk would not fit
                    if size - kept < self.CHUNK:
                        return
        except OSError:
            return
        finally:
            os.close(descriptor)

    def spend(self, write):
        """``write()``, giving back a chunk of the reserve whenever the disk is full, until it fits or the
        reserve is spent (then the disk's error is raised)."""
        while True:
            try:
                return write()
            except OSError as error:
                if error.errno not in FULL or not self._give_back():
                    raise

    def _give_back(self) -> bool:
        try:
            size = os.stat(self.path).st_size
            if size == 0:
                return False
            os.truncate(self.path, max(0, size - self.CHUNK))
            return True
        except OSError:
            return False

    def close(self):
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


class ClassRecord:
    """The record of one class run in ``out``: who holds a result, each student's files and the gradebook
    as results come, and the space kept aside for them.

    ``edition`` is the kit's (:func:`~grader.engine.edition.kit_edition`), recorded with every result; ``settings``
    the chosen exercises and limits as one string, recorded with it, so that a run with others grades again.
    """

    def __init__(self, out: Path, exercises: list[str], edition: str, settings: str):
        self.out, self.exercises, self.edition, self.settings = Path(out), exercises, edition, settings
        self.reserve = Reserve(self.out / RESERVE_FILE)
        self.rows: dict[str, list[str]] = {}  # grades.csv's rows, by student id
        self.work: dict[str, str] = {}  # each student's work_digest, taken once, before they are graded
        self.left = 0  # students still to record: what the reserve is kept for

    def standing(self, student: Student) -> tuple[SubmissionResult | None, str]:
        """The student's result of record if it still holds, with "" ; else None and why they must be graded
        (:data:`NEW`, never graded; :data:`WORK`, :data:`CHECKS` or :data:`SETTINGS` changed since)."""
        found = gradebook.read_student(gradebook.student_folder(self.out, student.id))
        if found is None:
            return None, NEW
        _, result, graded_with = found
        if result.edition != self.edition:
            return None, CHECKS
        if graded_with.get("settings") != self.settings:
            return None, SETTINGS
        if student.id not in self.work:
            self.work[student.id] = work_digest(student)
        if graded_with.get("work") != self.work[student.id]:
            return None, WORK
        return result, ""

    def begin(self, kept: dict[str, SubmissionResult], to_grade: int):
        """Before anyone is graded: the half-written files of a run killed earlier removed, the gradebook of the
        results that stand (that run may have left it behind them), and the space the ``to_grade`` students'
        records will need, kept aside."""
        for left in [*self.out.glob(".*.tmp"), *self.out.glob("*/.*.tmp")]:  # a write a killed run was in
            left.unlink(missing_ok=True)
        self.rows = {student: gradebook.grade_row(student, result, self.exercises) for student, result in kept.items()}
        self.reserve.keep(CLASS_BYTES + to_grade * STUDENT_BYTES)
        self.left = to_grade
        self._write_gradebook()

    def add(self, student: Student, result: SubmissionResult):
        """Record a student just graded: their feedback, their row in grades.csv, then their record, each whole
        on the disk before the next (see the module's docstring for why in this order)."""
        result.edition = self.edition
        if student.id not in self.work:
            self.work[student.id] = work_digest(student)
        folder = gradebook.student_folder(self.out, student.id)
        self.reserve.spend(lambda: gradebook.write_feedback(folder, student.id, result))
        self.rows[student.id] = gradebook.grade_row(student.id, result, self.exercises)
        self._write_gradebook()
        graded_with = {"work": self.work[student.id], "settings": self.settings}
        self.reserve.spend(lambda: gradebook.write_record(folder, student.id, result, graded_with))
        self.left = max(0, self.left - 1)
        self.reserve.keep(CLASS_BYTES + self.left * STUDENT_BYTES)  # topped up as the disk allows, or trimmed

    def write(self, write):
        """``write()`` (one of the class's files), from the space kept aside where the disk is full."""
        self.reserve.spend(write)

    def close(self):
        """The space kept aside given back: the run's last act, after the class's files are written."""
        self.reserve.close()

    def _write_gradebook(self):
        text = gradebook.grades_table(self.rows, self.exercises)
        self.reserve.spend(lambda: write_atomically(self.out / "grades.csv", text))
