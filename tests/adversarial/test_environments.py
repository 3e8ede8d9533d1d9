"""Every Linux the kit's users grade on, emulated here (tests/emulate.py): each road grades, or refuses in a sentence.

Under each environment of :data:`environments.ENVIRONMENTS`: a learner's
``check`` of the reference, a class ``grade`` with a hostile student between
two honest ones, GitHub Classroom's command, the Gradescope self-test and
``run_autograder`` (where Gradescope's containers run: as root), and
nbgrader's autograde with the kit's step. Where every protection holds the
honest get full marks and the hostile nothing it did not write, having
neither written outside its folder, signalled a neighbour nor connected out;
where one is missing, ``check`` says which in one line and still keeps the
learner's code from other processes, and the instructor's roads refuse
before a single line of a student's module has run.
"""

import base64
import csv
import json
import os
import re
import shutil
import zipfile

import nbformat
import pytest

import copies
from attacks import ATTACKS, HONEST_NEIGHBOURS, SECRET, run_class_of_attacks
from classes import NUMPY, OPTIONS, reference
from environments import ENVIRONMENTS, World, self_contained_lookup
from grader.engine import registry
from grader.releases import gradescope
from grader.releases.nbgrader_course import ASSIGNMENT
from helpers import fresh_venv, notebook_scores, released_course

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="the launcher needs root to stand in for other machines")]

NUMPY_MAX = sum(registry.exercise(name).max_points for name in NUMPY)
GRADING = [e for e in ENVIRONMENTS if e.grades]
REFUSING = [e for e in ENVIRONMENTS if not e.grades]


@pytest.fixture(scope="module", params=ENVIRONMENTS, ids=[e.name for e in ENVIRONMENTS])
def world(request):
    made = World(request.param)
    yield made
    made.close()


def class_folder(world: World):
    """Two honest students and a hostile one between them, as plain folders."""
    submissions = world.folder("class")
    for student, softmax in (("alice", reference("softmax")), ("mallory", world.hostile("grade")),
                             ("zoe", reference("softmax"))):
        folder = world.folder(f"class/{student}")
        (folder / "softmax.py").write_text(softmax)
        (folder / "lookup.py").write_text(self_contained_lookup(reference("lookup")))
    return submissions


def test_check_gives_the_reference_full_marks(world):
    results = world.out / "check.json"
    done = world.python("-m", "grader.cli", "check", world.kit / "solutions", *OPTIONS, "--json", results)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert json.loads(results.read_text())["score"] == NUMPY_MAX
    warned = [line for line in done.stdout.splitlines() if "Learner code ran without" in line]
    assert bool(warned) != world.environment.grades, done.stdout[-2000:]


def test_check_keeps_a_hostile_learner_from_other_processes(world):
    """Even where grading would be refused, a learner checking their own work cannot reach other processes."""
    folder = world.folder("learner")
    (folder / "softmax.py").write_text(world.hostile("check"))
    done = world.python("-m", "grader.cli", "check", folder, "--exercise", "softmax", "--public")
    assert "Traceback" not in done.stdout + done.stderr
    achieved = world.contained("check")
    if world.environment.grades:
        assert done.returncode == 1 and not achieved, done.stdout[-3000:] + done.stderr[-3000:]
    else:  # the files are not confined here, and check says so; signals and the network still are. The files'
        # attacks must succeed: the reference read (its softmax then earns every public point) and the mark written
        assert "Learner code ran without: reading only its own folder" in done.stdout, done.stdout[-3000:]
        assert done.returncode == 0, f"the reference was not read where nothing confines the files:\n{done.stdout[-3000:]}"
        assert achieved == ["wrote outside its folder"], achieved


def test_grade_contains_the_hostile_student_or_refuses_before_running_anyone(world):
    out = world.out / "grades"
    done = world.python("-m", "grader.cli", "grade", class_folder(world), "--out", out, *OPTIONS, "--jobs", "2")
    output = done.stdout + done.stderr
    assert "Traceback" not in output
    if not world.environment.grades:
        assert done.returncode != 0 and "--allow-unconfined" in output and "reading only its own folder" in output
        assert not world.ran("grade"), "a student's module ran before the judge refused"
        return
    assert done.returncode in (0, 1), output[-3000:]
    with open(out / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert float(rows["alice"]["score"]) == float(rows["zoe"]["score"]) == NUMPY_MAX, rows
    assert float(rows["mallory"]["score"]) == registry.exercise("lookup").max_points, rows  # its own lookup only
    assert not world.contained("grade"), world.contained("grade")


def test_classroom_command_scores_the_public_checks(world):
    if not world.environment.grades:
        pytest.skip("the Classroom workflow runs on GitHub's runners, which this environment is not")
    results = world.out / "classroom.json"
    check = world.python("-m", "grader.cli", "check", world.kit / "solutions", "--public", "--json", results)
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-3000:]
    done = world.python("-m", "grader.reports.classroom", results)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(base64.b64decode(done.stdout.strip()))
    assert outcome["status"] == "pass" and sum(test["score"] for test in outcome["tests"]) == outcome["max_score"]


@pytest.fixture(scope="module")
def autograder(world):
    """Gradescope's /autograder, built as setup.sh builds it, inside this environment's open folder."""
    if not world.environment.root:
        pytest.skip("Gradescope's containers run the autograder as root")
    root = world.base / "autograder"
    assert gradescope.main([str(world.base / "autograder.zip")]) == 0
    with zipfile.ZipFile(world.base / "autograder.zip") as archive:
        archive.extractall(root / "source")
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    os.chmod(root / "run_autograder", 0o755)
    python = fresh_venv(root / "venv")
    world.run(python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", root / "source" / "kit")
    for path in [root, *root.rglob("*")]:
        os.chmod(path, os.stat(path).st_mode | 0o005 | (0o001 if path.is_dir() else 0))
    return root, python


def test_gradescope_self_test_and_run_autograder(world, autograder):
    root, python = autograder
    selftest = world.run(python, "-I", "-m", "grader.commands.autograder", "selftest", root, PYTHONPATH="")
    assert selftest.returncode == 0, selftest.stdout[-3000:] + selftest.stderr[-3000:]
    submission = root / "submission"
    submission.mkdir()
    # The kit that grades here is the autograder's own copy, the one a Gradescope machine holds: its solutions
    # are what the student goes for (the world's copy is opened or closed by whichever test ran before).
    assert (root / "source" / "kit" / "solutions" / "softmax.py").is_file()  # there to be stolen, if it could be
    (submission / "softmax.py").write_text(world.hostile("gradescope", kit=root / "source" / "kit"))
    (submission / "lookup.py").write_text(self_contained_lookup(reference("lookup")))
    done = world.run(root / "run_autograder", PYTHONPATH="", SOFTLOOKUP_AUTOGRADER_ROOT=str(root))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    tests = json.loads((root / "results" / "results.json").read_text())["tests"]
    softmax = [test for test in tests if test["name"].startswith("softmax: ")]
    assert softmax and sum(test["score"] for test in softmax) == 0
    lookup = [test for test in tests if test["name"].startswith("lookup: ")]
    assert sum(test["score"] for test in lookup) == registry.exercise("lookup").max_points
    assert not world.contained("gradescope"), world.contained("gradescope")


def test_gradescope_leaves_no_copy_of_the_hidden_checks_a_worker_can_read(world, autograder):
    """The zip unpacked into /autograder/source (open to every user, as Gradescope leaves it), the kit installed from
    it: a student's module reads every file it can under /autograder, pip's caches and the homes, and finds no
    hidden check and no line of the reference."""
    root, _ = autograder
    submission = root / "submission"
    shutil.rmtree(submission, ignore_errors=True)
    submission.mkdir()
    (submission / "lookup.py").write_text(copies.probe([root]))
    try:
        done = world.run(root / "run_autograder", PYTHONPATH="", SOFTLOOKUP_AUTOGRADER_ROOT=str(root))
    finally:
        shutil.rmtree(submission)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    outputs = " ".join(test.get("output", "") for test in json.loads((root / "results" / "results.json").read_text())["tests"])
    found = copies.findings(outputs)
    assert found["found"] == [], found


def test_check_leaves_no_copy_of_the_hidden_checks_a_worker_can_read(world):
    """The kit that grades, what `check --json` wrote before and the grader's home, read by a student's module."""
    if not world.environment.grades:
        pytest.skip("the files are not confined here: check says so, and grading is refused")
    first = world.python("-m", "grader.cli", "check", world.kit / "solutions", *OPTIONS, "--json",
                         world.out / "earlier.json")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    folder = world.folder("probe")
    (folder / "lookup.py").write_text(copies.probe([world.kit, world.out, world.home]))
    results = world.out / "probe.json"
    done = world.python("-m", "grader.cli", "check", folder, "--exercise", "lookup", "--json", results)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    found = copies.findings(" ".join(test.get("output", "") for test in json.loads(results.read_text())["tests"]))
    assert found["found"] == [], found


def test_nbgrader_step_grades_or_refuses(world):
    course = released_course(world.folder("course"))  # made by the kit here: only grading differs between worlds
    submitted = course / "submitted" / "reference" / ASSIGNMENT
    submitted.mkdir(parents=True)
    hostile = nbformat.read(course / "source" / ASSIGNMENT / "softmax.ipynb", as_version=4)
    for cell in hostile.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution") and "def softmax" in cell.source:
            cell.source = world.hostile("nbgrader")
    nbformat.write(hostile, submitted / "softmax.ipynb")
    shutil.copy(course / "source" / ASSIGNMENT / "lookup.ipynb", submitted)
    for path in [course, *course.rglob("*")]:
        os.chmod(path, os.stat(path).st_mode | 0o007)
    done = world.python("-m", "nbgrader", "autograde", ASSIGNMENT, "--student", "reference", cwd=course)
    log = done.stdout + done.stderr
    if not world.environment.grades:
        assert "reading only its own folder" in log and not world.ran("nbgrader"), log[-3000:]
        return
    assert done.returncode == 0, log[-3000:]
    scores = notebook_scores(course, "reference")
    assert scores["softmax"] == 0 and scores["lookup"] > 0, scores
    assert not world.contained("nbgrader"), world.contained("nbgrader")


def test_nbgrader_leaves_no_copy_of_the_hidden_checks_a_worker_can_read(world):
    """A course made by the kit (its source notebooks hold the reference, other students' work lies beside), open to
    every user: a student's lookup notebook reads every file it can under the course and the grader's home."""
    if not world.environment.grades:
        pytest.skip("the files are not confined here: the step refuses to grade")
    course = released_course(world.folder("probe-course"))
    submitted = course / "submitted" / "probe" / ASSIGNMENT
    submitted.mkdir(parents=True)
    notebook = nbformat.read(course / "release" / ASSIGNMENT / "lookup.ipynb", as_version=4)
    cell = next(cell for cell in notebook.cells if "def soft_lookup" in cell.source)
    cell.source = copies.probe([course, world.home])
    nbformat.write(notebook, submitted / "lookup.ipynb")
    shutil.copy(course / "release" / ASSIGNMENT / "softmax.ipynb", submitted)  # what lookup imports, still a stub
    for path in [course, *course.rglob("*")]:
        os.chmod(path, os.stat(path).st_mode | 0o007)
    done = world.python("-m", "nbgrader", "autograde", ASSIGNMENT, "--student", "probe", cwd=course)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    graded = nbformat.read(course / "autograded" / "probe" / ASSIGNMENT / "lookup.ipynb", as_version=4)
    outputs = json.dumps([cell.get("outputs", []) for cell in graded.cells])
    found = copies.findings(outputs)
    assert found["found"] == [], found


# The attacks that the kernel's part stops, which each environment gives by other means. Those the judge's own
# code stops (forgeries recomputed, a protocol's bounds) run the same code on every kernel: test_attacks.py.
CONFINED = [attack for attack in ATTACKS if attack.defence == "confinement"]


@pytest.fixture(scope="module")
def corpus(world):
    """Every attack of CONFINED as a student of one class, graded by ``softlookup grade`` here: one judge's
    start for all of them, and each attack aims at the students after it too (test_attacks.py grades each alone,
    by a learner's check, on the full kernel)."""
    if not world.environment.grades:
        pytest.skip("the files are not confined here: check says so, and grading is refused")
    return run_class_of_attacks(CONFINED, world.kit, world.folder("corpus"), launcher=tuple(world.environment.launcher()),
                                as_user=tuple(world.environment.as_user()))


def test_honest_students_beside_the_attack_corpus_keep_full_marks(corpus):
    full = sum(registry.exercise(module).max_points for module in {attack.module for attack in CONFINED})
    for name in HONEST_NEIGHBOURS:
        assert corpus[name].score == full and corpus[name].status == "ok", corpus[name].output[-3000:]


def test_a_refused_signal_is_named_in_the_students_feedback(corpus):
    outcome = corpus["SIGKILL to the judge through a pipe's I/O owner"]
    assert "tried to signal a process outside its own worker" in outcome.output, outcome.output[-3000:]


@pytest.mark.parametrize("attack", CONFINED, ids=[attack.name for attack in CONFINED])
def test_the_attack_corpus_holds(world, corpus, attack):
    outcome = corpus[attack.name]
    assert outcome.exit_code == 0 and outcome.score == 0, f"{attack.name}: {outcome.score}\n{outcome.output[-3000:]}"
    assert outcome.status and "grading of this submission stopped" not in outcome.output, outcome.output[-3000:]
    feedback = re.sub(r"\\(.)", r"\1", outcome.output)  # feedback.md escapes Markdown's punctuation: \[Errno 13\]
    assert re.search(attack.refusal(world.kit, world.environment.name), feedback), \
        f"{attack.name} was not refused for {attack.refused!r} here:\n{outcome.output[-3000:]}"
    assert outcome.results_intact and outcome.kit_intact and outcome.site_packages_intact
    assert outcome.neighbour_alive and not outcome.leftovers and outcome.connections == 0, outcome
    assert not outcome.leaked and SECRET not in outcome.output
