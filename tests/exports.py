"""Classes as course platforms export them, written from each platform's documented format.

Each builder lays out :data:`ROSTER` as one platform's export does (the
table of platforms in docs/instructors.md cites the document or exporter's
code each follows) and returns who ``softlookup grade`` must find: each student's id,
name, email, whether late, and which :data:`WORK` they handed in. The roster
has names with spaces, accents, hyphens and an apostrophe; a late student; a
student who resubmitted; and a student who handed in nothing to grade.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

from classes import PARTIAL, reference
from helpers import ASSIGNMENTS

EXERCISES = ["softmax"]  # one exercise keeps each class's grading short; its files stand for all of them


@dataclass(frozen=True)
class Person:
    first: str
    last: str
    login: str  # username (Blackboard, GitHub) and the local part of their email
    number: int  # Canvas user id, Moodle participant id, Gradescope student id
    work: str  # a key of WORK
    late: bool = False
    resubmitted: bool = False  # handed in `partial` first, then `honest`

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def email(self) -> str:
        return f"{self.login}@example.edu"


ROSTER = (
    Person("Zoë", "Van der Berg", "zvdberg", 1041, "honest"),
    Person("José", "Núñez-García", "jnunez", 1042, "partial", late=True),
    Person("Anne Marie", "O'Neil", "aoneil", 1043, "honest", resubmitted=True),
    Person("Li", "Wei", "lwei", 1044, "nothing"),
)
WORK = {"honest": {"softmax.py": reference("softmax")}, "partial": {"softmax.py": PARTIAL}, "nothing": {}}


@dataclass(frozen=True)
class Expected:
    """What the gradebook must say of one student: as the export names them, and what they handed in."""

    name: str
    email: str
    late: bool
    work: str


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


# -- one folder (or zip) per student -------------------------------------------------------------


def folders(root: Path) -> dict[str, Expected]:
    """Folders and zips named by the student, nested as people nest them, with macOS's litter beside and inside."""
    zoe, jose, anne, li = ROSTER
    write(root / zoe.login, WORK[zoe.work])
    with zipfile.ZipFile(root / f"{jose.login}.zip", "w") as archive:  # a zip nested two folders deep
        for name, text in WORK[jose.work].items():
            archive.writestr(f"{jose.login}/submission/{name}", text)
            archive.writestr(f"__MACOSX/{jose.login}/submission/._{name}", "macOS resource fork")
    write(root / anne.login / "Anne Marie" / "work" / "final", WORK[anne.work])
    (root / li.login).mkdir()
    (root / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    return {p.login: Expected("", "", False, p.work) for p in ROSTER}


# -- Canvas ------------------------------------------------------------------------------------------


def canvas_name(person: Person) -> str:
    """The name as Canvas writes it into a file name: the sortable name ("Last, First"), ``_<digits>_`` runs
    collapsed, lower-cased, every non-word character removed (canvas-lms ``ContentZipper#sanitize_user_name``,
    ``#sanitize_file_name``)."""
    sortable = re.sub(r"_(\d+)_", r"\1", f"{person.last}, {person.first}").lower()
    return re.sub(r"[^\w]", "", sortable)


def canvas(root: Path) -> dict[str, Expected]:
    """"Download Submissions": one flat folder, ``<name>[_LATE]_<user id>_<attachment id>_<file>``; a resubmitted
    file renamed ``softmax-1.py``; a text entry as ``<name>_<user id>_text.html``."""
    root.mkdir(parents=True)
    for attachment, person in enumerate(ROSTER, start=5001):
        stem = f"{canvas_name(person)}{'_LATE' if person.late else ''}_{person.number}"
        if person.work == "nothing":
            (root / f"{stem}_text.html").write_text("<p>I did not get it to work.</p>", encoding="utf-8")
        for name, text in WORK[person.work].items():
            shown = name.replace(".py", "-1.py") if person.resubmitted else name
            (root / f"{stem}_{attachment}_{shown}").write_text(text, encoding="utf-8")
    (root / "grading notes.txt").write_text("the TA's notes, not a student's\n")
    (root / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    return {str(p.number): Expected(canvas_name(p), "", p.late, p.work) for p in ROSTER}


# -- Moodle ------------------------------------------------------------------------------------------


def moodle(root: Path) -> dict[str, Expected]:
    """"Download all submissions" of Moodle 4.1 and later: ``<Full Name>_<participant id>_assignsubmission_file``
    per student; a student who wrote online text only has an ``..._assignsubmission_onlinetext`` folder."""
    for person in ROSTER:
        stem = f"{person.name}_{person.number}_assignsubmission"
        if person.work == "nothing":
            write(root / f"{stem}_onlinetext", {"onlinetext.html": "<p>I ran out of time.</p>"})
        else:
            write(root / f"{stem}_file", WORK[person.work])
    return {str(p.number): Expected(p.name, "", False, p.work) for p in ROSTER}


# -- Blackboard --------------------------------------------------------------------------------------

BLACKBOARD_ASSIGNMENT = "Attention"


def blackboard_receipt(person: Person, when: str, files: dict[str, str]) -> str:
    """The .txt Blackboard writes beside each attempt's files (as CodeGra.de's ``psef/blackboard.py`` parses it)."""
    listed = "".join(f"\tOriginal filename: {original}\n\tFilename: {stored}\n" for original, stored in files.items())
    return (f"Name: {person.name} ({person.login})\nAssignment: {BLACKBOARD_ASSIGNMENT}\n"
            f"Date Submitted: Monday, 3 February 2025 {when[11:].replace('-', ':')} o'clock GMT\n"
            "Current Grade: Needs Grading\n\nSubmission Field:\n"
            "There is no student submission text data for this assignment.\n\nComments:\n"
            "There are no student comments for this assignment.\n\nFiles:\n"
            + (listed or "No files were attached to this submission.\n") + "\n")


def blackboard_attempt(root: Path, person: Person, when: str, files: dict[str, str]):
    stem = f"{BLACKBOARD_ASSIGNMENT}_{person.login}_attempt_{when}"
    stored = {name: f"{stem}_{name}" for name in files}
    for name, text in files.items():
        (root / stored[name]).write_text(text, encoding="utf-8")
    (root / f"{stem}.txt").write_text(blackboard_receipt(person, when, stored), encoding="utf-8")


def blackboard(root: Path) -> dict[str, Expected]:
    """The Grade Centre's assignment download: ``<assignment>_<username>_attempt_<date>_<file>`` and a receipt
    per attempt; the student who resubmitted has both attempts in it."""
    root.mkdir(parents=True)
    for person in ROSTER:
        if person.resubmitted:
            blackboard_attempt(root, person, "2025-02-03-09-00-00", WORK["partial"])
        blackboard_attempt(root, person, "2025-02-03-10-15-22", WORK[person.work])
    return {p.login: Expected(p.name, "", False, p.work) for p in ROSTER}


# -- Gradescope --------------------------------------------------------------------------------------


def gradescope_metadata(people: dict[str, list[Person]]) -> str:
    """submission_metadata.yml, as Gradescope writes it (Ruby symbols as keys) and otter-grader reads it."""
    lines = []
    for submission, submitters in people.items():
        lines += [f"{submission}:", "  :submitters:"]
        for person in submitters:
            name = person.name.replace("'", "''")
            lines += [f"  - :name: '{name}'", f"    :sid: '{person.number}'", f"    :email: {person.email}"]
        lines.append("  :created_at: 2025-02-03 10:15:22.000000000 -08:00")
    return "\n".join(lines) + "\n"


def gradescope(root: Path) -> dict[str, Expected]:
    """"Export Submissions": ``submission_<id>/`` as uploaded, and ``submission_metadata.yml``."""
    people = {}
    for submission, person in enumerate(ROSTER, start=200001):
        write(root / f"submission_{submission}", WORK[person.work] or {"README.md": "nothing yet\n"})
        people[f"submission_{submission}"] = [person]
    (root / "submission_metadata.yml").write_text(gradescope_metadata(people), encoding="utf-8")
    return {str(p.number): Expected(p.name, p.email, False, p.work) for p in ROSTER}


# -- GitHub Classroom --------------------------------------------------------------------------------


def classroom_repository(folder: Path, files: dict[str, str]) -> Path:
    """A clone of a student's repository made from the bundle: git's folder, the stubs, the student's work."""
    write(folder / ".git", {"HEAD": "ref: refs/heads/main\n"})
    write(folder, {"README.md": "# Attention as a soft lookup\n"})
    write(folder / "assignments", {"softmax.py": (ASSIGNMENTS / "softmax.py").read_text(), **files})
    return folder


def classroom_clone(bundle: Path, folder: Path, files: dict[str, str]) -> Path:
    """A clone of a student's repository as Classroom makes it from a real bundle (``softlookup release
    student``): every file of the bundle, git's folder, and the student's work written over assignments/."""
    shutil.copytree(bundle, folder)
    write(folder / ".git", {"HEAD": "ref: refs/heads/main\n"})
    write(folder / "assignments", files)
    return folder


def github_classroom(root: Path) -> dict[str, Expected]:
    """``gh classroom clone student-repos``: ``<slug>-submissions/<slug>-<username>/``, the work in assignments/
    (a student who never pushed still has the bundle's stubs there)."""
    clones = root / "attention-submissions"
    for person in ROSTER:
        classroom_repository(clones / f"attention-{person.login}", WORK[person.work])
    return {p.login: Expected("", "", False, p.work) for p in ROSTER}


BUILDERS = {"folders": folders, "canvas": canvas, "moodle": moodle, "blackboard": blackboard,
            "gradescope": gradescope, "github-classroom": github_classroom}
