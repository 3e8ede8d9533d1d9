"""The attack corpus (tests/attacks.py): every attack earns nothing and leaves everything as it found it."""

import csv
import os
import re
import subprocess
import sys

import pytest

import classes
from attacks import ATTACKS, BOUND, CLASS_ATTACKS, SECRET, kit_copy, run_attack
from grader.reports import gradebook
from grader.engine import registry

pytestmark = pytest.mark.slow  # a whole road end to end (tests/pytest.ini)


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    return kit_copy(tmp_path_factory.mktemp("attacked"), registry.KIT_ROOT)


@pytest.mark.parametrize("attack", ATTACKS, ids=[attack.name for attack in ATTACKS])
def test_every_attack_aims_at_what_the_kit_has(attack):
    """An attack on a file that moved would pass while testing nothing: its targets must exist."""
    assert not attack.missing_targets(registry.KIT_ROOT)


def test_an_attack_on_a_moved_file_fails(kit, tmp_path):
    from attacks import Attack

    stale = Attack("stale", "change", "", targets=("grader/registry.py",))
    with pytest.raises(AssertionError, match="no longer has"):
        run_attack(stale, kit, tmp_path)


@pytest.mark.parametrize("attack", ATTACKS, ids=[attack.name for attack in ATTACKS])
def test_attack_achieves_nothing(attack, kit, tmp_path):
    outcome = run_attack(attack, kit, tmp_path)
    assert outcome.exit_code == 1, f"the judge did not finish normally within {BOUND} s:\n{outcome.output[-3000:]}"
    assert outcome.score == 0, f"{attack.name} earned {outcome.score} points:\n{outcome.output[-3000:]}"
    assert re.search(attack.refusal(kit), outcome.output), \
        f"{attack.name} was not refused for {attack.refused!r}:\n{outcome.output[-3000:]}"  # its positive control:
    # tests/adversarial/test_attack_controls.py
    assert outcome.results_intact, "the results file changed after the judge wrote it"
    assert outcome.kit_intact, "the attack changed the kit"
    assert outcome.site_packages_intact, "the attack wrote into site-packages"
    assert outcome.neighbour_alive, "the attack killed an unrelated process"
    assert not outcome.leftovers, f"left behind: {outcome.leftovers}"
    assert outcome.connections == 0, "the attack reached a socket on 127.0.0.1"
    assert not outcome.leaked and SECRET not in outcome.output
    assert "\x1b" not in outcome.output, "control characters reached the terminal"
    assert "could not judge" not in outcome.output, "what the student did was taken for the kit's failure"


HOARDERS = [attack for attack in ATTACKS if "HOARD_GOAL" in attack.code]


@pytest.mark.parametrize("attack", HOARDERS, ids=[attack.name for attack in HOARDERS])
def test_a_hoarder_holds_what_it_aims_at_where_nothing_bounds_it(attack, tmp_path):
    """The hoarders' positive control: run unconfined, in a folder of its own, under an address-space limit of
    256 MB, each one does hold HOARD_GOAL (the memory limit never counted it), so its 0 points above are the
    confinement's doing, not a hoard that never happened."""
    folder = tmp_path / "unconfined"
    folder.mkdir()
    source = attack.source(folder, 0, 0, folder / "results.json") + "\nprint(_holding(), HOARD_GOAL)\n"
    done = subprocess.run([sys.executable, "-c", source], cwd=folder, capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(folder)}, preexec_fn=_address_space_of(256 * 2**20))
    held, goal = map(int, done.stdout.split())
    assert held >= goal, done.stderr[-2000:]


def _address_space_of(extra: int):
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (2**30 + extra,) * 2)  # Python and numpy's own, and the limit
    return limit


def test_an_honest_submission_after_the_attacks_keeps_full_marks(kit, tmp_path):
    """The kit copy that every attack above aimed at still grades the reference at full marks."""
    from attacks import honest

    outcome = run_attack(honest("honest"), kit, tmp_path)
    assert outcome.exit_code == 0 and outcome.score == registry.exercise("lookup").max_points, outcome.output[-3000:]


def test_a_refused_signal_is_named_in_the_feedback(kit, tmp_path):
    outcome = run_attack(next(a for a in ATTACKS if a.name == "SIGKILL to the judge through a pipe's I/O owner"), kit,
                         tmp_path)
    assert "tried to signal a process outside its own worker" in outcome.output, outcome.output[-3000:]


# -- a class under attack: students who aim at the rest of the class (issue 16) -----------------

HONEST = ("honest-a", "honest-b", "honest-z")  # graded before, between and after the attackers
STUDENT_FILES = ("results.json", "feedback.md", "feedback.html")  # what a student is shown
MAX_FILE_BYTES = 2**20  # a student's file, however much their code printed


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """A class of honest students and every attacker of :data:`CLASS_ATTACKS`, graded by ``softlookup grade``."""
    root = tmp_path_factory.mktemp("class") / "submissions"
    root.mkdir()
    for name in HONEST:
        classes.honest(root / name)
    for name, attack in CLASS_ATTACKS.items():
        attack.build(root / name)
    out = root.parent / "out"
    graded = classes.cli(root, out, "--jobs", "2")
    assert graded.returncode == 0, graded.stderr[-3000:]
    return out


def _text(out, student: str, names=STUDENT_FILES + (gradebook.RESULT_FILE,)) -> dict[str, str]:
    folder = gradebook.student_folder(out, student)
    return {name: (folder / name).read_text(encoding="utf-8") for name in names}


def test_honest_students_keep_full_marks_beside_every_attacker(attacked):
    rows = classes.rows(attacked)
    for name in HONEST:
        assert float(rows[name]["score"]) == classes.MAX and rows[name]["status"] == "ok", rows[name]


@pytest.mark.parametrize("name", CLASS_ATTACKS, ids=[f"{a.kind}: {n}" for n, a in CLASS_ATTACKS.items()])
def test_a_class_attack_stays_in_its_own_row(attacked, name):
    attack, name = CLASS_ATTACKS[name], name.removesuffix(".zip")
    row = next(row for student, row in classes.rows(attacked).items() if student.lstrip("'") == name)
    assert row["status"] in attack.statuses, row
    others = [student for student in [*HONEST, *CLASS_ATTACKS] if student.removesuffix(".zip") != name]
    for other in others:  # nothing it printed or planted reaches anyone else's files
        for file, text in _text(attacked, other.removesuffix(".zip")).items():
            assert not [plant for plant in attack.plants if plant in text], (other, file)
    for file, text in _text(attacked, name, STUDENT_FILES).items():
        assert len(text.encode()) < MAX_FILE_BYTES, file


def test_a_spreadsheet_takes_no_student_id_for_a_formula(attacked):
    with open(attacked / "grades.csv", newline="") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    assert "'=HYPERLINK(\"x\",\"y\")" in cells
    assert not [cell for cell in cells if cell.lstrip(" ").startswith(("=", "+", "@"))]


def test_a_looping_softmax_keeps_the_points_that_do_not_need_softmax(attacked):
    checks = {check["check"]: check for exercise in classes.result_of(attacked, "looping")["exercises"]
              for check in exercise["checks"]}
    assert checks["test_exact_lookup_finds_key"]["outcome"] == checks["test_nearest_lookup"]["outcome"] == "passed"


def test_what_a_hidden_check_saw_reaches_the_instructor_alone(attacked):
    record = classes.result_of(attacked, "probe")
    hidden = [check for exercise in record["exercises"] for check in exercise["checks"]
              if check["hidden"] and check["outcome"] == "failed"]
    assert hidden and any("REDACTION-PROBE" in check["printed"] for check in hidden)
    secrets = {check["message"] for check in hidden} | {
        line for check in hidden for line in check["printed"].splitlines() if "REDACTION-PROBE" in line}
    for file, text in _text(attacked, "probe", STUDENT_FILES).items():
        assert not [secret for secret in secrets if secret in text], file


# -- positive controls: tests/adversarial/test_attack_controls.py runs every attack above where nothing stops it.
