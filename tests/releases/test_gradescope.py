"""softlookup release gradescope: run_autograder on a stand-in for /autograder, with right, wrong and hostile work.

The zip is unpacked as Gradescope unpacks it (``source/``, and
``run_autograder`` copied beside it), and the kit installed from its
``kit/`` into ``ROOT/venv`` as ``setup.sh`` does, in a fresh venv that
inherits this one's packages (``requirements.txt`` pins exactly those, so
nothing is downloaded). ``run_autograder`` then runs as Gradescope runs it,
with ``SOFTLOOKUP_AUTOGRADER_ROOT`` standing in for ``/autograder``, and
every results.json it writes is validated against Gradescope's schema.
"""

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from importlib.metadata import version
from pathlib import Path

import jsonschema
import pytest
from packaging.requirements import Requirement

from attacks import ATTACKS, manifest
from helpers import ASSIGNMENTS, SOLUTIONS, fresh_venv, solved_folder
from grader.engine import registry
from grader.releases import gradescope
from mistakes import MISTAKES

pytestmark = pytest.mark.slow  # a whole road end to end (tests/pytest.ini)

MAX = sum(exercise.max_points for exercise in registry.EXERCISES)
VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
NUMBER = {"type": "number"}
# Gradescope's results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/), without leaderboards.
SCHEMA = {
    "type": "object",
    "properties": {
        "score": NUMBER, "execution_time": NUMBER, "output": {"type": "string"}, "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY, "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "score": NUMBER, "max_score": NUMBER, "status": {"enum": ["passed", "failed"]},
                "name": {"type": "string"}, "number": {"type": "string"}, "output": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}}, "visibility": VISIBILITY,
                "extra_data": {"type": "object"},
            },
            "additionalProperties": False,
        }},
    },
    "anyOf": [{"required": ["score"]}, {"required": ["tests"]}],
    "additionalProperties": False,
}
HOSTILE = [attack for attack in ATTACKS if attack.name in
           ("reference by its path", "daemon that rewrites the results", "ground truth loaded in the worker")]
WRONG = [next(m for m in MISTAKES if m.module == module) for module in ("softmax", "gpt2_heads")]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("gradescope")
    assert gradescope.main([str(work / "autograder.zip")]) == 0
    root = work / "autograder"
    with zipfile.ZipFile(work / "autograder.zip") as archive:
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        archive.extractall(root / "source")
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    os.chmod(root / "run_autograder", 0o755)
    python = fresh_venv(root / "venv")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    root / "source" / "kit"], check=True)
    selftest = subprocess.run([python, "-I", "-m", "grader.commands.autograder", "selftest", root], capture_output=True,
                              text=True, timeout=300)  # setup.sh's last step
    assert selftest.returncode == 0, selftest.stdout[-3000:] + selftest.stderr[-3000:]
    return root


def run_autograder(root: Path, status: int = 0) -> tuple[dict, str, float]:
    """Gradescope's run for the submission now in ``root``: results.json, stdout, seconds."""
    shutil.rmtree(root / "results", ignore_errors=True)
    started = time.monotonic()
    done = subprocess.run([root / "run_autograder"], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "SOFTLOOKUP_AUTOGRADER_ROOT": str(root)})
    seconds = time.monotonic() - started
    assert done.returncode == status, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    assert abs(sum(test["score"] for test in results["tests"]) - results["score"]) < 1e-3
    print(f"run_autograder: {seconds:.1f} s, {results['score']:g}/{MAX:g}", file=sys.stderr)
    return results, done.stdout, seconds


def submit(root: Path) -> Path:
    shutil.rmtree(root / "submission", ignore_errors=True)
    (root / "submission").mkdir()
    return root / "submission"


def test_the_requirements_pin_what_the_kit_is_tested_with_and_torch_for_the_cpu(root):
    lines = (root / "source" / "requirements.txt").read_text().splitlines()
    assert lines[0] == f"--extra-index-url {gradescope.CPU_INDEX}"
    pins = {requirement.name: str(requirement.specifier) for requirement in map(Requirement, lines[1:])}
    assert set(gradescope.GRADING) <= set(pins)
    for name, pin in pins.items():
        expected = version(name).split("+")[0] + "+cpu" if name == "torch" else version(name)
        assert pin == f"=={expected}", name


def test_a_right_submission_of_notebooks_earns_every_point(root):
    """Notebooks in the folder a bundle pushed from GitHub holds, untouched module stubs beside them."""
    work = solved_folder(submit(root) / "assignments")
    for stub in ASSIGNMENTS.glob("*.py"):
        shutil.copy(stub, work)
    (root / "submission" / "README.md").write_text("my work\n")
    results, stdout, _ = run_autograder(root)
    assert results["score"] == MAX, stdout[-3000:]
    hidden = [test for test in results["tests"] if test["visibility"] == "after_published"]
    assert hidden and all("matches the reference" in test["name"] or "match the reference" in test["name"]
                          or "recovers" in test["name"] for test in hidden)
    assert "Public checks:" in results["output"]


def test_a_wrong_submission_loses_the_points_of_its_mistakes_and_is_told_why(root):
    work = submit(root)
    for source in SOLUTIONS.glob("*.py"):
        shutil.copy(source, work)
    for mistake in WRONG:
        mistake.apply(work)
    results, _, _ = run_autograder(root)
    assert 0 < results["score"] < MAX
    for mistake in WRONG:
        failed = [t for t in results["tests"] if t["name"].startswith(f"{mistake.module}: ") and t["score"] < t["max_score"]]
        assert any(mistake.hint in test["output"] and test["visibility"] == "visible" for test in failed), mistake.id


@pytest.mark.parametrize("attack", HOSTILE, ids=[attack.name for attack in HOSTILE])
def test_a_hostile_submission_earns_nothing_and_changes_nothing(root, attack):
    work = submit(root)
    for stub in ASSIGNMENTS.glob("*.py"):
        shutil.copy(stub, work)
    results_file = root / "results" / "results.json"
    (work / f"{attack.module}.py").write_text(attack.source(root / "source" / "kit", os.getpid(), 9, results_file))
    before = manifest(root / "source")
    results, stdout, _ = run_autograder(root)
    written = results_file.read_text()
    time.sleep(attack.settle)  # long enough for a process that outlived the grading to strike
    assert results["score"] == 0, stdout[-3000:]
    assert results_file.read_text() == written and manifest(root / "source") == before


def test_a_submission_that_cannot_be_graded_still_gets_results_that_say_why(root):
    work = submit(root)
    shutil.copy(SOLUTIONS / "softmax.py", work)
    solutions = root / "source" / "kit" / "solutions"
    solutions.rename(solutions.with_name("elsewhere"))  # an autograder built wrong: the hidden checks cannot run
    try:
        results, stdout, _ = run_autograder(root, status=1)
    finally:
        solutions.with_name("elsewhere").rename(solutions)
    assert results["score"] == 0 and results["output"].startswith("The autograder could not grade this submission")
    assert "reference solutions" in stdout
    # Recorded in the result model like any grading: every exercise lost, each saying why.
    assert [test["name"].split(":")[0] for test in results["tests"]] == [e.module for e in registry.EXERCISES]
    assert all(test["score"] == 0 and test["output"].startswith("the grading of this submission stopped")
               for test in results["tests"])


def test_the_instructors_guide_quotes_the_zip_as_the_release_writes_it(tmp_path, capsys):
    assert gradescope.main([str(tmp_path / "autograder.zip")]) == 0
    printed = capsys.readouterr().out.split(":")[0].replace(str(tmp_path / "autograder.zip"), "autograder.zip")
    assert printed.startswith("wrote autograder.zip (")
    assert f'the release prints "{printed}"' in (registry.KIT_ROOT / "docs" / "instructors.md").read_text()
