"""The intake under attack (issue 25): names, links and metadata that one student (or a corrupted export) steers.

Each case is a real export of the platform concerned, laid out as
:mod:`exports` lays out the roster's class, with an attacker added beside
the honest students, and graded by ``softlookup grade`` as an instructor
runs it. The honest students' rows must keep the marks their own files
earn (the roster's honest students: full marks), and the attacker must get
nothing that is not theirs:

* **names**: on Blackboard, an upload named like a later attempt of a
  classmate (``<victim>_attempt_<a later date>_softmax.py``); on Canvas's
  anonymous download, an upload whose name starts with digits
  (``1041_softmax.py``), which once read the attachment id as a user id;
* **links**: a repository (GitHub Classroom) or a plain folder whose
  ``assignments`` or lone subfolder is a link to a classmate's work or to
  the kit's ``solutions/``, and ``softlookup check DIR`` on such a folder;
* **metadata**: Gradescope's ``submission_metadata.yml`` as an alias bomb,
  nested 100,000 deep, or with lists and mappings where names, ids and
  emails belong.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import exports
from classes import PARTIAL
from exports import EXERCISES, ROSTER, WORK, Person
from grader.engine import registry
from grader.reports import gradebook
from grader.warm import client
from helpers import ENV, SOLUTIONS, softlookup

OPTIONS = [*(f"--exercise={name}" for name in EXERCISES), "--time-limit", "30"]
FULL = registry.exercise("softmax").max_points
HONEST = [person for person in ROSTER if person.work == "honest"]
MALLORY = Person("Mal", "Lory", "mallory", 1099, "partial")


def grade(export: Path, out: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "grader.cli", "grade", str(export), "--out", str(out), *OPTIONS]
    return subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=600)


def rows(out: Path) -> dict[str, dict]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def feedback(out: Path, student: str) -> str:
    return (gradebook.student_folder(out, student) / "feedback.md").read_text(encoding="utf-8")


def full_marks(row: dict) -> bool:
    return float(row["score"]) == FULL and row["status"] == "ok"


# -- names: what a student called a file never says who they are or which attempt counts -------------


def test_an_upload_named_like_a_classmates_later_attempt_stays_its_uploaders(tmp_path):
    export = tmp_path / "export"
    expected = exports.blackboard(export)
    victim = HONEST[0]
    forged = f"{victim.login}_attempt_2099-12-31-23-59-59_softmax.py"
    exports.blackboard_attempt(export, MALLORY, "2025-02-03-11-00-00", {forged: PARTIAL})
    done = grade(export, tmp_path / "graded")
    assert done.returncode == 0, done.stderr
    found = rows(tmp_path / "graded")
    assert set(found) == set(expected) | {MALLORY.login}
    assert full_marks(found[victim.login]), found[victim.login]  # graded on their own attempt, not mallory's file
    assert f"an earlier attempt of {victim.login}" not in done.stderr
    assert found[MALLORY.login]["name"] == MALLORY.name and found[MALLORY.login]["status"] == "missing"


ANONYMOUS = {"Qx7Kp": ROSTER[0], "Hd3Wt": ROSTER[2], "Mz9Rb": MALLORY}  # base58, as Canvas makes them


def test_an_anonymous_upload_named_with_digits_creates_no_student(tmp_path):
    """``anon_Mz9Rb_5009_1041_softmax.py``: the attachment id (5009) is not a user id, whatever follows it."""
    export = tmp_path / "export"
    for attachment, (anonymous, person) in enumerate(ANONYMOUS.items(), start=5007):
        upload = "1041_softmax.py" if person is MALLORY else "softmax.py"
        exports.write(export, {f"anon_{anonymous}_{attachment}_{upload}": WORK["honest"]["softmax.py"]})
    done = grade(export, tmp_path / "graded")
    assert done.returncode == 0, done.stderr
    found = rows(tmp_path / "graded")
    assert set(found) == {f"anon_{anonymous}" for anonymous in ANONYMOUS}
    for anonymous, person in ANONYMOUS.items():
        if person is not MALLORY:
            assert full_marks(found[f"anon_{anonymous}"]), found[f"anon_{anonymous}"]
    assert found["anon_Mz9Rb"]["status"] == "missing"  # its file is 1041_softmax.py, as it was uploaded
    with open(tmp_path / "graded" / "canvas-gradebook.csv", newline="", encoding="utf-8") as handle:
        imported = {row[1] for row in list(csv.reader(handle))[2:]}
    assert imported == set(found)


# -- links: nothing between the export's root and the graded files is followed ---------------------


def linked(link: Path, target: Path) -> Path:
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link, target_is_directory=True)
    return link


def assert_refused_as_a_link(out: Path, student: str, row: dict):
    assert row["status"] == "invalid" and float(row["score"]) == 0, row
    assert "link" in feedback(out, student), feedback(out, student)


def test_a_repository_whose_assignments_is_a_link_earns_nothing(tmp_path):
    clones = tmp_path / "export" / "attention-submissions"
    exports.github_classroom(tmp_path / "export")
    for login, target in (("mallory", clones / f"attention-{HONEST[0].login}" / "assignments"),
                          ("eve", SOLUTIONS)):
        repository = exports.classroom_repository(clones / f"attention-{login}", {})
        for stub in (repository / "assignments").iterdir():
            stub.unlink()
        (repository / "assignments").rmdir()
        linked(repository / "assignments", target)
    done = grade(tmp_path / "export", tmp_path / "graded")
    assert done.returncode == 0, done.stderr
    found = rows(tmp_path / "graded")
    for person in HONEST:
        assert full_marks(found[person.login]), found[person.login]
    for login in ("mallory", "eve"):
        assert_refused_as_a_link(tmp_path / "graded", login, found[login])


def test_a_plain_folder_with_a_link_on_the_way_earns_nothing(tmp_path):
    export = tmp_path / "export"
    exports.folders(export)
    linked(export / "mallory" / "work", export / HONEST[0].login)  # a lone subfolder that is a link
    linked(export / "eve" / "assignments", SOLUTIONS)  # a clone's assignments/
    exports.write(export / "trent" / "submission", {"README.md": "my work\n"})
    (export / "trent" / "submission" / "README.md").unlink()
    linked(export / "trent" / "submission" / "final", SOLUTIONS)  # deeper down
    done = grade(export, tmp_path / "graded")
    assert done.returncode == 0, done.stderr
    found = rows(tmp_path / "graded")
    for person in HONEST:
        assert full_marks(found[person.login]), found[person.login]
    for login in ("mallory", "eve", "trent"):
        assert_refused_as_a_link(tmp_path / "graded", login, found[login])


@pytest.fixture
def runtime(monkeypatch):
    """A private runtime folder of this test's own (a socket's path has at most 107 bytes), its server stopped after."""
    folder = Path(tempfile.mkdtemp(prefix="softlookup-test-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield folder
    with contextlib.suppress(client.Unavailable, OSError, ValueError):
        client.request({"stop": True}, start=False)
    shutil.rmtree(folder)


@pytest.mark.parametrize("warm", [False, True], ids=["in-process", "warm server"])
def test_check_refuses_a_folder_whose_assignments_is_a_link(tmp_path, runtime, warm):
    clone = tmp_path / "clone"
    exports.write(clone, {"README.md": "# Attention as a soft lookup\n"})
    linked(clone / "assignments", SOLUTIONS)
    server = {"XDG_RUNTIME_DIR": str(runtime), "SOFTLOOKUP_NO_SERVER": "0" if warm else "1",
              "SOFTLOOKUP_SERVER_IDLE": "120"}
    done = softlookup("check", clone, "--exercise", "softmax", "--json", tmp_path / "results.json", **server)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "is a link" in done.stdout, done.stdout
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["score"] == 0 and results["max_score"] == FULL


# -- metadata: a platform's file read within bounds, plain values only ------------------------------

ALIAS_BOMB = "".join(f"{letter}: &{letter} [{', '.join([f'*{previous}'] * 9)}]\n"
                     for previous, letter in zip("abcdefgh", "bcdefghi"))
METADATA = {
    "an alias bomb": "a: &a ['lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol']\n" + ALIAS_BOMB
                     + "submission_200001:\n  :submitters:\n  - :name: *i\n    :sid: '1041'\n",
    "nested 100,000 deep": "submission_200001:\n  :submitters: " + "[" * 100_000 + "]" * 100_000 + "\n",
}


def gradescope_export(root: Path, metadata: str) -> Path:
    for submission, person in enumerate(ROSTER, start=200001):
        exports.write(root / f"submission_{submission}", WORK[person.work] or {"README.md": "nothing yet\n"})
    (root / "submission_metadata.yml").write_text(metadata, encoding="utf-8")
    return root


@pytest.mark.parametrize("metadata", list(METADATA))
def test_a_metadata_file_that_cannot_be_read_within_bounds_costs_its_names_only(tmp_path, metadata):
    assert len(METADATA["an alias bomb"]) < 700
    export = gradescope_export(tmp_path / "export", METADATA[metadata])
    done = grade(export, tmp_path / "graded")
    assert done.returncode == 0, done.stderr
    found = rows(tmp_path / "graded")
    assert set(found) == {f"submission_{number}" for number in range(200001, 200001 + len(ROSTER))}
    for submission, person in enumerate(ROSTER, start=200001):
        if person.work == "honest":
            assert full_marks(found[f"submission_{submission}"]), found[f"submission_{submission}"]
    line = next(line for line in done.stderr.splitlines() if "submission_metadata.yml" in line)
    assert "could not be read" in line and "ids are folder names" in line


def test_only_plain_values_are_read_as_names_ids_and_emails(tmp_path):
    zoe, jose, anne, li = ROSTER
    metadata = exports.gradescope_metadata({f"submission_{200001 + i}": [p] for i, p in enumerate(ROSTER)})
    metadata = metadata.replace(f":sid: '{zoe.number}'", ":sid: ['1042', '1043']")  # a list where an id goes
    metadata = metadata.replace(f":name: '{jose.name}'", ":name: {first: José}")  # a mapping where a name goes
    done = grade(gradescope_export(tmp_path / "export", metadata), tmp_path / "graded")
    assert done.returncode == 0, done.stderr
    found = rows(tmp_path / "graded")
    assert set(found) == {zoe.email, str(jose.number), str(anne.number), str(li.number)}  # zoe: her email
    assert (found[zoe.email]["name"], found[str(jose.number)]["name"]) == (zoe.name, "")
    assert full_marks(found[zoe.email]) and full_marks(found[str(anne.number)])
