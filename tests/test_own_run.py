"""The kit's own tests, run where a learner works: their state untouched, their edits and caches no failure.

A clone of the kit whose learner solved exercises in ``assignments/``, left
the caches their commands make (pytest's, Python's, Jupyter's) in the kit's
folders, and has a home of their own with their hint record
(``failing.json``, ``hints.json``) and a runtime folder: the kit's tests that
read the kit's folders, or run the learner's commands (``softlookup check``
records failures, ``softlookup hint`` records hints), are run there with
``pytest tests``, and must pass and leave the learner's home and work exactly
as they were.
"""

import hashlib
import json
import os
import subprocess
import sys

from helpers import learners_clone
import own_folders

# Tests that read assignments/ or grader/checks, or start the learner's commands without a state folder of their own.
WHERE_A_LEARNER_WORKS = [
    "tests/checks/test_kit.py::test_stubs_earn_nothing",
    "tests/checks/test_kit.py::test_every_released_stub_is_recognised_as_untouched",
    "tests/commands/test_cli.py::test_check_starting_point_lists_every_exercise_at_zero",
    "tests/releases/test_bundle.py::test_every_module_of_the_kit_is_shipped_or_kept_back_for_a_reason",
    "tests/releases/test_notebooks.py::test_lookup_says_where_softmax_comes_from",
    "tests/lesson/test_widgets.py",
    "tests/test_own_run.py::test_the_run_has_folders_of_its_own",
]


def manifest(folder) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            for path in sorted(folder.rglob("*"))}


def test_the_run_has_folders_of_its_own():
    home = os.environ["HOME"]
    assert "softlookup-tests-home-" in home
    for variable in own_folders.FOLDERS:
        if variable != "HF_HUB_CACHE" or not os.environ[variable].endswith("/hub"):
            assert os.environ[variable].startswith(home), variable
    from grader.engine import hint_record

    assert str(hint_record.seen_file()).startswith(home) and str(hint_record.failures_file()).startswith(home)


def test_the_suite_leaves_the_learners_state_and_work_alone(tmp_path):
    clone = learners_clone(tmp_path / "softlookup")
    caches = [clone / "grader" / "checks" / ".pytest_cache" / "v" / "cache" / "lastfailed",
              clone / "grader" / "checks" / "public" / "__pycache__" / "test_softmax.cpython-311.pyc",
              clone / "assignments" / ".ipynb_checkpoints" / "softmax-checkpoint.ipynb",
              clone / "assignments" / ".pytest_cache" / "README.md"]
    for cache in caches:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text("{}")
    home, runtime = tmp_path / "learner", tmp_path / "run"
    state = home / ".local" / "state" / "softlookup"
    state.mkdir(parents=True)
    runtime.mkdir(mode=0o700)
    (state / "failing.json").write_text(json.dumps({"lookup": ["soft_lookup"]}))
    (state / "hints.json").write_text(json.dumps({"lookup": [4]}))
    before = {"home": manifest(home), "runtime": manifest(runtime), "assignments": manifest(clone / "assignments")}
    learner = {name: value for name, value in os.environ.items() if name not in own_folders.FOLDERS}
    learner.update(HOME=str(home), XDG_RUNTIME_DIR=str(runtime))
    done = subprocess.run([sys.executable, "-m", "pytest", *WHERE_A_LEARNER_WORKS, "-q", "-p", "no:cacheprovider"],
                          cwd=clone, env=learner, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
    after = {"home": manifest(home), "runtime": manifest(runtime), "assignments": manifest(clone / "assignments")}
    assert after == before
