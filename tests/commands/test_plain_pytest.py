"""A learner's bare ``pytest``, as the README and every stub's docstring tell them to type it.

In a fresh clone of the kit whose learner has solved ``softmax``, made the
lesson's sign mistake in ``soft_lookup`` and not started the rest: ``pytest``
in the clone's root and in its ``assignments/`` checks those exercises, with
the same table and total as ``softlookup check``, and leaves no cache among
the learner's files or the kit's. (The student bundle's ``pytest`` is
tested with the bundle, in ``tests/releases/test_bundle.py``.)
"""

import json
import re
import subprocess
import sys

import pytest

from helpers import ASSIGNMENTS, ENV, fresh_stubs, learners_clone, most, softlookup
from grader.engine import registry
from grader.releases import assignments, bundle
from grader.releases.distribution import kit_project

DOCS = registry.KIT_ROOT / "docs"


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    return learners_clone(tmp_path_factory.mktemp("learner") / "softlookup")


@pytest.fixture(scope="module")
def checked(clone):
    """What ``softlookup check`` says about the clone's assignments/: the lines pytest must say too."""
    done = softlookup("check", cwd=clone)
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stdout


def learners_pytest(where, *args, **env):
    """``pytest`` typed in ``where`` (``python -m pytest``: this venv has no pytest script of its own)."""
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=where, capture_output=True, text=True,
                          env={**ENV, **env}, timeout=600)


@pytest.mark.parametrize("where", [".", "assignments"], ids=["in the clone", "in assignments/"])
def test_pytest_checks_the_learners_exercises_as_check_does(clone, checked, where):
    done = learners_pytest(clone / where)
    assert done.returncode == 1, done.stdout + done.stderr  # below full marks, as softlookup check
    assert "softmax.py: Softmax: scores into weights" in done.stdout and f"{most('softmax')}/{most('softmax')} points, done" in done.stdout
    assert "sign of the score is flipped" in done.stdout  # the verdict, in the lesson's words
    assert f"attention.py: Queries, keys and values: 0/{most('attention')} points, not started" in done.stdout
    assert "(hidden)" in done.stdout  # the hidden checks too, as softlookup check runs them beside solutions/
    total = next(line for line in checked.splitlines() if line.startswith("Total:")).split(" (")[0]
    assert re.fullmatch(rf"Total: [0-9.]+/{sum(exercise.max_points for exercise in registry.EXERCISES):g}", total)
    assert total in done.stdout  # the same score as softlookup check gives
    verdicts = [line.strip() for line in checked.splitlines() if line.strip().startswith("✗")]
    assert verdicts and all(verdict.split(":")[0] in done.stdout for verdict in verdicts)
    assert "tests/" not in done.stdout  # not one of the kit's own tests ran
    assert "--cases" not in done.stdout  # softlookup check's option; pytest's own way is named instead
    assert "(and 2 more cases with other messages: pytest -k test_soft_weights_sum_to_one --tb=short" in done.stdout
    assert not list(clone.rglob(".pytest_cache")), "pytest left a cache in the learner's clone"


def test_the_kits_pyproject_and_the_learners_ini_configure_pytest_alike():
    options = kit_project()["tool"]["pytest"]["ini_options"]
    assert options == {"softlookup_exercises": True, "required_plugins": assignments.LEARNERS_REQUIRED,
                       "addopts": assignments.LEARNERS_ADDOPTS}
    assert (ASSIGNMENTS / "pytest.ini").read_text() == assignments.LEARNERS_PYTEST_INI


@pytest.mark.parametrize("where", [".", "assignments"], ids=["in the clone", "in assignments/"])
def test_a_pytest_without_the_plugin_says_so_and_the_readmes_say_what_to_type(clone, where):
    """Another Python's pytest (a venv made with --system-site-packages can run the base's) reads the option but
    has no plugin: it stops with the error the bundle's README and docs/learners.md answer, not a warning and
    nothing run. PYTEST_DISABLE_PLUGIN_AUTOLOAD stands in for it: pytest without softlookup's entry points."""
    done = learners_pytest(clone / where, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert assignments.MISSING_PLUGIN in done.stdout + done.stderr
    readme = bundle.readme({exercise.module: [] for exercise in registry.EXERCISES}, "2.6.0")
    assert "\npython -m pytest " in readme and f"says `{assignments.MISSING_PLUGIN}`" in readme
    assert f"`{assignments.MISSING_PLUGIN}`" in (DOCS / "learners.md").read_text()


def summary_counts(output: str) -> dict[str, int]:
    """pytest's own last line ("3 failed, 29 passed, 187 not started in 1.75s") as {"failed": 3, ...}."""
    last = output.strip().splitlines()[-1]
    return {word: int(number) for number, word in re.findall(r"(\d+) (failed|passed|not started|skipped)", last)}


@pytest.mark.parametrize("work", ["untouched stubs", "a clone at work"])
def test_pytests_own_summary_agrees_with_the_table(clone, work):
    """The table says "not started" of an exercise whose stubs are untouched: pytest's summary line counts its
    checks as not started, not as failures, and its progress reaches 100% (it stopped at 96%, with checks of
    the same name in two files sharing one node id)."""
    done = learners_pytest(fresh_stubs() if work == "untouched stubs" else clone / "assignments")
    assert done.returncode == 1, done.stdout + done.stderr  # below full marks, whatever the words
    counts = summary_counts(done.stdout)
    progress = "".join(line.split(" [")[0].strip() for line in done.stdout.splitlines()
                       if re.search(r" \[ *\d+%\]$", line))
    assert "[100%]" in done.stdout and not re.search(r"^ +\[ *\d+%\]$", done.stdout, re.MULTILINE), done.stdout
    assert counts["not started"] == progress.count("o") > 0, done.stdout
    started = [line for line in done.stdout.splitlines() if line.endswith("not started") or "not started (" in line]
    if work == "untouched stubs":
        assert counts == {"not started": len(progress)} and len(started) == len(registry.EXERCISES)
    else:
        assert counts["failed"] == progress.count("F") and counts["passed"] == progress.count(".")


def test_the_way_pytest_names_shows_every_case(clone):
    done = learners_pytest(clone, "-k", "test_soft_weights_sum_to_one", "--tb=short")
    failures = done.stdout.split("= FAILURES =")[1].split("lookup.py: Three lookups")[0]  # before the table
    assert failures.count("the sign of the score is flipped") == 3, done.stdout  # each case, its message


def test_the_next_hint_follows_what_pytest_found(clone, tmp_path):
    """As after softlookup check: the hints about the function whose checks failed come first."""
    state = {"XDG_STATE_HOME": str(tmp_path / "state")}
    assert learners_pytest(clone, **state).returncode == 1
    failing = json.loads((tmp_path / "state" / "softlookup" / "failing.json").read_text())
    assert failing["lookup"] == ["soft_lookup"] and failing["softmax"] == []
    hint = softlookup("hint", "lookup", cwd=clone, **state)
    assert "Your last check failed in soft_lookup only" in hint.stdout, hint.stdout + hint.stderr
