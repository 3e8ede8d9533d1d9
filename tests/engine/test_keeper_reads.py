"""A learner's check after an edit grades again exactly the exercises whose grading read the file changed (issue 50).

Each kind of dependency a change there regrades: the exercise's own module, a
helper module it imports, a package of the learner's, a data file its code
opens, an exercise another imports, a notebook; and a file that no
grading read, whose change regrades nothing. Every kept result is compared with
what a fresh check says, so a test passes only where nothing kept is stale.
A worker's report of what it read is its own word: one the judge cannot
believe costs a fuller regrading, one that leaves out the exercise's own
module still regrades it.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from grader.commands.check import graded
from grader.engine import registry
from grader.engine.classes.keeper import Keeper
from grader.engine.confinement import messages
from grader.engine.options import Options
from helpers import SOLUTIONS, solved_folder

NUMPY = ("softmax", "lookup", "attention")  # the exercises without torch: fast to grade, and enough to tell
NAIVE = ("import numpy as np\n\n\ndef softmax(x, axis=-1):\n    e = np.exp(np.asarray(x, dtype=float))  # no max taken\n"
         "    return e / e.sum(axis=axis, keepdims=True)\n")
STABLE = (SOLUTIONS / "softmax.py").read_text()


def check(keeper: Keeper | None, folder: Path) -> tuple[dict[str, float], list[str]]:
    """Each exercise's score as ``softlookup check`` grades the folder (by ``keeper``, or afresh with None), and
    the exercises the keeper kept."""
    result = graded(folder, False, "", [registry.exercise(name) for name in NUMPY], Options(),
                    grading=keeper.grade if keeper else None)
    return {exercise.name: exercise.score for exercise in result.exercises}, list(keeper.kept) if keeper else []


def edit(path: Path, text: str):
    """Save ``text`` as an editor would, a moment after the last write."""
    time.sleep(0.05)
    path.write_text(text)


def regraded_after(folder: Path, change) -> tuple[set[str], dict[str, float]]:
    """Check ``folder``, apply ``change``, check again: the exercises graded again, and their scores, which
    must be what a fresh check says."""
    keeper = Keeper()
    before, kept = check(keeper, folder)
    assert kept == []
    change()
    after, kept = check(keeper, folder)
    assert after == check(None, folder)[0], "a kept result is not what a fresh check gives"
    return set(NUMPY) - set(kept), {name: after[name] - before[name] for name in NUMPY}


@pytest.fixture
def solved(tmp_path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    for name in NUMPY:
        shutil.copy(SOLUTIONS / f"{name}.py", folder)
    (folder / "notes.txt").write_text("my notes\n")
    return folder


def test_an_edit_to_a_module_no_other_exercise_imports_grades_that_exercise_alone(solved):
    regraded, _ = regraded_after(solved, lambda: edit(solved / "lookup.py", (solved / "lookup.py").read_text() +
                                                      "\n# tidied\n"))
    assert regraded == {"lookup"}


def test_an_edit_to_a_module_others_import_grades_them_too(solved):
    regraded, gained = regraded_after(solved, lambda: edit(solved / "softmax.py", NAIVE))
    assert regraded == set(NUMPY)  # lookup.py and attention.py import softmax.py
    assert gained["softmax"] < 0


def test_an_edit_to_a_file_no_grading_read_grades_nothing(solved):
    regraded, _ = regraded_after(solved, lambda: edit(solved / "notes.txt", "other notes\n"))
    assert regraded == set()


def test_a_file_added_to_the_folder_grades_everything(solved):
    """A new file may shadow a library (numpy.py) without ever being opened by name: every exercise again."""
    regraded, _ = regraded_after(solved, lambda: edit(solved / "scratchpad.py", "x = 1\n"))
    assert regraded == set(NUMPY)


def test_an_edit_to_a_helper_module_grades_the_exercise_that_imports_it(solved):
    (solved / "weights.py").write_text(NAIVE)
    lookup = (solved / "lookup.py").read_text()
    assert "from softmax import softmax\n" in lookup
    (solved / "lookup.py").write_text(lookup.replace("from softmax import softmax", "from weights import softmax"))
    regraded, gained = regraded_after(solved, lambda: edit(solved / "weights.py", STABLE))
    assert regraded == {"lookup"} and gained["lookup"] > 0


@pytest.mark.parametrize("changed", ["mymaths/weights.py", "mymaths/__init__.py"])
def test_an_edit_in_a_package_of_the_learners_grades_the_exercise_that_imports_it(solved, changed):
    (solved / "mymaths").mkdir()
    (solved / "mymaths" / "__init__.py").write_text("from .weights import softmax\n")
    (solved / "mymaths" / "weights.py").write_text(NAIVE)
    lookup = (solved / "lookup.py").read_text()
    (solved / "lookup.py").write_text(lookup.replace("from softmax import softmax", "from mymaths import softmax"))
    fixed = {"mymaths/weights.py": STABLE, "mymaths/__init__.py": "from softmax import softmax\n"}[changed]
    regraded, gained = regraded_after(solved, lambda: edit(solved / changed, fixed))
    assert regraded == {"lookup"} and gained["lookup"] > 0


def test_an_edit_to_a_data_file_the_code_opens_grades_that_exercise(solved):
    """lookup.py reads, when called, whether to use its own naive softmax from a file beside it."""
    lookup = (solved / "lookup.py").read_text()
    (solved / "lookup.py").write_text(lookup.replace("from softmax import softmax", "import softmax as _stable") + (
        "\n\nimport os\n\n" + NAIVE.replace("import numpy as np\n", "").replace("def softmax", "def _naive") +
        "\n\ndef softmax(x, axis=-1):\n"
        "    with open(os.path.join(os.path.dirname(__file__), 'data', 'choice.txt')) as choice:\n"
        "        return (_naive if choice.read().strip() == 'naive' else _stable.softmax)(x, axis)\n"))
    (solved / "data").mkdir()
    (solved / "data" / "choice.txt").write_text("naive\n")
    regraded, gained = regraded_after(solved, lambda: edit(solved / "data" / "choice.txt", "stable\n"))
    assert regraded == {"lookup"} and gained["lookup"] > 0


@pytest.mark.parametrize(("changed", "expected"), [("lookup", {"lookup"}), ("softmax", set(NUMPY))])
def test_an_edit_to_a_notebook_grades_what_reads_the_module_made_from_it(tmp_path, changed, expected):
    folder = solved_folder(tmp_path / "work")
    for path in folder.glob("*.ipynb"):
        if path.stem not in NUMPY:
            path.unlink()
    notebook = folder / f"{changed}.ipynb"
    regraded, _ = regraded_after(folder, lambda: edit(notebook, notebook.read_text().replace(
        '"import numpy as np', '"import numpy as np  # edited', 1)))
    assert regraded == expected


# -- a worker's report is its own word ------------------------------------------------------------

LIAR = "\n\nimport sys as _sys\n_sys.modules['grader.engine.confinement.reads'].Reads.report = lambda self: {report}\n"


def test_a_report_the_judge_cannot_believe_reads_everything(solved):
    """lookup.py makes its worker say it read a file outside the folder: lookup counts every file as read."""
    with open(solved / "lookup.py", "a") as handle:
        handle.write(LIAR.format(report="['../../etc/passwd']"))
    regraded, _ = regraded_after(solved, lambda: edit(solved / "notes.txt", "other notes\n"))
    assert regraded == {"lookup"}


def test_a_report_that_leaves_out_the_exercises_own_module_still_regrades_it(solved):
    with open(solved / "lookup.py", "a") as handle:
        handle.write(LIAR.format(report="[]"))
    regraded, gained = regraded_after(solved, lambda: edit(solved / "lookup.py", (solved / "lookup.py").read_text()
                                                           .replace("from softmax import softmax", NAIVE)))
    assert "lookup" in regraded and gained["lookup"] < 0


@pytest.mark.parametrize("report", [None, "lookup.py", [1], ["/etc/passwd"], ["../x.py"], ["a//b.py"], ["./a.py"],
                                    ["a\\b.py"], ["a\x00.py"], [""], ["x.py"] * (messages.MAX_READS + 1)], ids=repr)
def test_a_malformed_report_of_reads_is_anything_not_a_crash(report):
    assert messages.reads(report) is None
    assert messages.answer({"id": 1, "value": None, "read": report}, 1)["read"] is None


def test_a_well_formed_report_of_reads_is_its_paths():
    assert messages.reads(["lookup.py", "mymaths/weights.py"]) == {"lookup.py", "mymaths/weights.py"}
