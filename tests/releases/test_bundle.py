"""softlookup release student: the bundle installs on its own, grades the public checks, and holds no answer.

The bundle is made once (the release grades the reference to record GPT-2's
answers), installed into a fresh venv by its own GitHub Classroom workflow's
install step, and graded there. Every file of the bundle and of a wheel built
from it is scanned for the reference's lines and the hidden checks.
"""

import base64
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import copies
from helpers import SOLUTIONS, fresh_venv
from grader.engine import registry
from grader.lesson import lesson
from grader.releases import bundle, leak_scan
from grader.checks.public import test_gpt2_heads as public_gpt2_heads

HIDDEN = {name for names in bundle.hidden_checks().values() for name in names}
PUBLIC_MAX = sum(points for e in registry.EXERCISES for name, points in e.points.items() if name not in HIDDEN)
HIDDEN_MAX = sum(points for e in registry.EXERCISES for name, points in e.points.items() if name in HIDDEN)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "student"
    assert bundle.main([str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def wheel(made, tmp_path_factory):
    dist = tmp_path_factory.mktemp("dist")
    source = shutil.copytree(made, dist / "source")  # setuptools builds in the folder it is given
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w",
                    str(dist), str(source)], check=True)
    return next(dist.glob("*.whl"))


def workflow_steps(made: Path) -> dict[str, dict]:
    workflow = yaml.safe_load((made / ".github" / "workflows" / "classroom.yml").read_text())
    assert workflow["name"] == "Autograding Tests" and list(workflow["jobs"]) == ["run-autograding-tests"]
    return {step["name"]: step for step in workflow["jobs"]["run-autograding-tests"]["steps"]}


def run_step(step: dict, checkout: Path, python: Path) -> dict[str, str]:
    """A workflow's ``run:`` step as GitHub runs it (bash -e), in ``checkout``; the outputs it set."""
    outputs = checkout.parent / f"outputs-{checkout.name}"
    outputs.write_text("")
    env = {**os.environ, **step.get("env", {}), "GITHUB_OUTPUT": str(outputs),
           "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=checkout, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return dict(line.split("=", 1) for line in outputs.read_text().splitlines())


@pytest.fixture(scope="module")
def installed(made, tmp_path_factory):
    """A checkout of the bundle, and the python of a fresh venv that its workflow's install step set up."""
    work = tmp_path_factory.mktemp("classroom")
    checkout = work / "checkout"
    shutil.copytree(made, checkout)
    python = fresh_venv(work / "venv")
    run_step(workflow_steps(made)["Install the exercises"], checkout, python)
    return checkout, python


def test_the_bundle_and_its_wheel_hold_no_line_of_the_reference_and_no_hidden_check(made, wheel):
    texts = [*leak_scan.folder_texts(made), *leak_scan.wheel_texts(wheel)]
    assert len(texts) > 60
    assert leak_scan.findings(texts, SOLUTIONS) == []
    names = {name for name, _ in texts}
    assert "grader/gpt2.py" not in names and not any("hidden" in name or "solutions" in name for name in names)


def test_nothing_the_bundle_lays_out_holds_a_hidden_check_or_the_reference(installed, wheel):
    """The checkout its workflow installed (what the install left there included), the venv it installed into and
    its wheel hold none of what a student's module looks for on a grading machine (tests/copies.py): a hidden
    check's name or title as reports print it, a reference line, the solution marker."""
    checkout, python = installed
    texts = [*leak_scan.folder_texts(checkout), *leak_scan.folder_texts(python.parent.parent),
             *leak_scan.wheel_texts(wheel)]
    marks = copies.markers()
    assert len(texts) > 60 and len(marks) > 60
    assert not [(name, mark) for name, text in texts for mark in marks if mark in text]


def test_the_recorded_gpt2_answers_are_those_of_the_public_checks_inputs_only(made):
    """Seed 0 and the public sentences: the hidden checks' models (seeds 1-3) and sentences are not recorded."""
    record = json.loads((made / "grader" / "data" / "gpt2_truth.json").read_text())
    arguments = [json.loads(key)[2]["list"] for key in record["answers"]]
    seeds = {arg["model_spec"]["seed"] for args in arguments for arg in args if isinstance(arg, dict)}
    texts = {arg for args in arguments for arg in args if isinstance(arg, str)}
    assert seeds == {0} and texts == {lesson.SENTENCE, public_gpt2_heads.OTHER, *public_gpt2_heads.EDGE_TEXTS.values()}

def test_the_scan_finds_what_it_looks_for(tmp_path):
    """A reference line, a marker and a hidden check's name, planted in a copy, are each found."""
    assert len(leak_scan.reference_lines(SOLUTIONS)) > 50 and len(HIDDEN) >= len(registry.EXERCISES)
    line = "scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])"
    assert line in leak_scan.reference_lines(SOLUTIONS)
    (tmp_path / "planted.py").write_text(f"    {line}\n### BEGIN SOLUTION\n")
    (tmp_path / "planted.ipynb").write_text(json.dumps({"cells": [{"source": ["def test_fit_matches_reference():"]}]}))
    found = leak_scan.findings(leak_scan.folder_texts(tmp_path), SOLUTIONS)
    assert any("planted.py: a line of the reference" in f for f in found)
    assert any("planted.py: a solution marker" in f for f in found)
    assert any("planted.ipynb: the name of hidden check test_fit_matches_reference" in f for f in found)


def test_every_module_of_the_kit_is_shipped_or_kept_back_for_a_reason():
    package = registry.PACKAGE_DIR
    entries = {str(path.relative_to(package)) for path in package.glob("*.py")}
    entries |= {str(path.relative_to(package)) for path in package.glob("*/*.py") if path.parent.name != "checks"}
    entries |= {str(path.relative_to(package)) for path in package.glob("engine/*/*.py")}  # listed module by module
    entries |= {str(path.relative_to(package)) for path in (package / "checks").iterdir()  # a cache is no module
                if path.name != "__pycache__" and not path.name.startswith(".")}
    entries |= {str(path.parent.relative_to(package)) for path in package.glob("*/*/__init__.py")
                if path.parent.parent.name not in {"checks", "engine"}}  # a command that is a package goes whole
    entries |= {"data/gpt2"}
    assert entries == set(bundle.SHIPPED) | set(bundle.KEPT_BACK)
    assert not set(bundle.SHIPPED) & set(bundle.KEPT_BACK)


def test_the_bundle_registry_has_the_public_points_and_no_other(made):
    points = {e.module: e.points for e in runpy.run_path(str(made / "grader" / "engine" / "registry.py"))["EXERCISES"]}
    assert points == {e.module: {n: p for n, p in e.points.items() if n not in HIDDEN} for e in registry.EXERCISES}
    edition = json.loads((made / "grader" / "data" / "student_edition.json").read_text())
    assert sum(edition["hidden_points"].values()) == HIDDEN_MAX


def test_check_in_the_installed_bundle_grades_the_stubs_at_zero(installed, tmp_path):
    checkout, python = installed
    where = subprocess.run([python, "-c", "import grader; print(grader.__file__)"], capture_output=True, text=True,
                           cwd=tmp_path, check=True).stdout
    assert where.startswith(str(python.parent.parent))  # the bundle installed in the fresh venv, not the kit
    done = subprocess.run([python.parent / "softlookup", "check", "--json", tmp_path / "results.json"], cwd=checkout,
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"}, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    assert (results["score"], results["max_score"]) == (0, PUBLIC_MAX)
    assert f"Total: 0/{PUBLIC_MAX:g}" in done.stdout
    assert f"Hidden checks, worth {HIDDEN_MAX:g} more" in done.stdout
    assert "test_lesson_claim" not in done.stdout  # no GPT-2 ground truth was needed for stubs


@pytest.mark.parametrize("where", [".", "assignments"], ids=["in the checkout", "in assignments/"])
def test_pytest_in_the_installed_bundle_checks_the_learners_exercises(installed, where, tmp_path):
    checkout, python = installed
    work = shutil.copytree(checkout, tmp_path / "checkout")
    shutil.copy(SOLUTIONS / "softmax.py", work / "assignments")  # the learner solved the first exercise
    done = subprocess.run([python, "-m", "pytest"], cwd=work / where, capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"}, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    softmax = registry.exercise("softmax")
    public = sum(points for name, points in softmax.points.items() if name not in HIDDEN)
    assert f"{public:g}/{public:g} points, done" in done.stdout and f"Total: {public:g}/{PUBLIC_MAX:g}" in done.stdout
    assert "lookup.py: Three lookups" in done.stdout and "not started" in done.stdout
    assert "(hidden)" not in done.stdout
    assert not list(work.rglob(".pytest_cache"))


def classroom_points(outputs: dict[str, str]) -> tuple[float, float]:
    """What the Classroom reporter posts as "Points X/Y": its runner result's scores added up."""
    result = json.loads(base64.b64decode(outputs["result"]))
    return sum(test["score"] for test in result["tests"]), result["max_score"]


@pytest.mark.parametrize("work", ["stubs", "reference"])
def test_classroom_reads_the_public_points(installed, work, tmp_path):
    checkout, python = installed
    graded = tmp_path / "checkout"
    shutil.copytree(checkout, graded)
    if work == "reference":
        for source in SOLUTIONS.glob("*.py"):
            shutil.copy(source, graded / "assignments")
    outputs = run_step(workflow_steps(checkout)["Public checks"], graded, python)
    results = json.loads((graded / "results.json").read_text())
    assert classroom_points(outputs) == (results["score"], results["max_score"])
    assert classroom_points(outputs) == ((0 if work == "stubs" else PUBLIC_MAX), PUBLIC_MAX)
    reporter = workflow_steps(checkout)["Autograding Reporter"]
    assert reporter["with"]["runners"] == "softlookup" and "steps.softlookup.outputs.result" in reporter["env"][
        "SOFTLOOKUP_RESULTS"]


# -- what the documents say about the release ----------------------------------------------------------


def lines_named_by_what_they_say(text: str) -> tuple[list[str], list[str]]:
    """The commands of a README's first bash block, and the lines its prose names ("The `pip install torch` line")."""
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.splitlines()]
    return commands, re.findall(r"The `([^`]+)` line", text)


def test_the_instructors_guide_quotes_the_release_as_it_writes_the_bundle(made):
    guide = (registry.KIT_ROOT / "docs" / "instructors.md").read_text()  # "Handing it out: the student bundle"
    assert f'the release prints "{bundle.wrote(made)}"' in guide  # as bundle.main printed it, making `made`
    truth = made / "grader" / "data" / "gpt2_truth.json"
    assert f"(`gpt2_truth.json`, {truth.stat().st_size / 1000:.0f} KB)" in guide
    assert f"for the {len(leak_scan.reference_lines(SOLUTIONS))} non-trivial lines of reference code" in guide


@pytest.mark.parametrize("which", ["the bundle's", "the kit's", "the learners' guide"])
def test_a_readme_names_its_install_lines_by_what_they_say_not_by_count(made, which):
    text = {"the bundle's": made / "README.md", "the kit's": registry.KIT_ROOT / "README.md",
            "the learners' guide": registry.KIT_ROOT / "docs" / "learners.md"}[which].read_text()
    commands, named = lines_named_by_what_they_say(text)
    assert named and all(any(name in command for command in commands) for name in named), (named, commands)
    assert not re.search(r"\b(first|second|third|fourth|fifth) line\b", text, re.IGNORECASE)
