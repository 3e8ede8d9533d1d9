"""The commands as a learner or an instructor types them."""

import json
import shutil
import signal
import subprocess
import sys
import time

import pytest

from helpers import ASSIGNMENTS, ENV, SOFTLOOKUP, SOLUTIONS, softlookup, with_ctrl_c
from grader.engine import registry
from grader.reports import markup

def test_check_starting_point_lists_every_exercise_at_zero(tmp_path):
    shutil.copytree(ASSIGNMENTS, tmp_path / "assignments")
    done = softlookup("check", cwd=tmp_path)  # the default folder is ./assignments
    assert done.returncode == 1, done.stderr
    for exercise in registry.EXERCISES:
        assert f"{exercise.module}.py" in done.stdout
        assert f"0/{exercise.max_points:g} points, not started" in done.stdout
        assert f"softlookup hint {exercise.module}" in done.stdout


@pytest.mark.parametrize("exercise", registry.EXERCISES, ids=lambda e: e.module)
def test_hint_all_shows_every_hint(tmp_path, exercise):
    done = softlookup("hint", exercise.module, "--all", XDG_STATE_HOME=tmp_path)
    assert done.returncode == 0 and not done.stderr
    assert all(markup.plain(hint) in done.stdout for hint in exercise.hints)
    assert not (tmp_path / "softlookup").exists()  # looking at all of them records nothing


def test_hint_shows_the_next_unseen_hint_one_at_a_time(tmp_path):
    hints = registry.exercise("lookup").hints
    for number, hint in enumerate(hints, 1):
        done = softlookup("hint", "lookup", XDG_STATE_HOME=tmp_path)
        assert done.returncode == 0 and not done.stderr
        assert f"Hint {number} of {len(hints)}: {markup.plain(hint)}" in done.stdout
        assert sum(markup.plain(other) in done.stdout for other in hints) == 1
        left = len(hints) - number
        assert (f"{left} more" if left else "That was the last hint") in done.stdout
    assert json.loads((tmp_path / "softlookup" / "hints.json").read_text()) == {"lookup": list(range(1, len(hints) + 1))}
    done = softlookup("hint", "lookup", XDG_STATE_HOME=tmp_path)
    assert f"seen all {len(hints)} hints" in done.stdout and "--all" in done.stdout
    assert "Hint 1 of" in softlookup("hint", "softmax", XDG_STATE_HOME=tmp_path).stdout  # kept per exercise
    assert softlookup("hint", "lookup", "--reset", XDG_STATE_HOME=tmp_path).returncode == 0
    assert f"Hint 1 of {len(hints)}" in softlookup("hint", "lookup", XDG_STATE_HOME=tmp_path).stdout
    assert json.loads((tmp_path / "softlookup" / "hints.json").read_text()) == {"lookup": [1], "softmax": [1]}


@pytest.mark.parametrize("record", ["{not json", "[1, 2]", '{"lookup": "two"}', "\xff\xfe"])
def test_hint_survives_a_corrupt_record(tmp_path, record):
    (tmp_path / "softlookup").mkdir()
    (tmp_path / "softlookup" / "hints.json").write_text(record)
    done = softlookup("hint", "lookup", XDG_STATE_HOME=tmp_path)
    assert done.returncode == 0
    assert "Hint 1 of" in done.stdout
    assert len(done.stderr.strip().splitlines()) == 1 and "hints.json" in done.stderr
    assert "Hint 2 of" in softlookup("hint", "lookup", XDG_STATE_HOME=tmp_path).stdout  # a fresh record


def test_hint_survives_an_unwritable_state_folder(tmp_path):
    (tmp_path / "not-a-folder").write_text("")
    for _ in range(2):  # nothing can be recorded, so the first hint again
        done = softlookup("hint", "lookup", XDG_STATE_HOME=tmp_path / "not-a-folder")
        assert done.returncode == 0
        assert "Hint 1 of" in done.stdout
        assert len(done.stderr.strip().splitlines()) == 1 and "could not record" in done.stderr


def test_check_solutions_writes_gradescope_json(tmp_path):
    out = tmp_path / "results.json"
    done = softlookup("check", SOLUTIONS, "--json", out)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text())
    assert results["score"] == results["max_score"] == sum(e.max_points for e in registry.EXERCISES)
    assert results["tests"]
    for test in results["tests"]:
        assert set(test) >= {"name", "score", "max_score", "output", "visibility"}
        assert test["visibility"] in ("visible", "after_published")
    assert sum(t["max_score"] for t in results["tests"]) == pytest.approx(results["max_score"])


def test_failed_check_shows_its_hint(tmp_path):
    folder = tmp_path / "s"
    shutil.copytree(SOLUTIONS, folder)
    with open(folder / "softmax.py", "a") as handle:
        handle.write("\ndef softmax(x, axis=-1):\n    e = np.exp(x)\n    return e / e.sum(axis=axis, keepdims=True)\n")
    done = softlookup("check", folder, "--exercise", "softmax", "--public")
    assert done.returncode == 1
    assert "subtract the largest score" in done.stdout
    assert "(hidden)" not in done.stdout


@pytest.mark.parametrize("args,fragment", [
    (["check", "no-such-folder"], "is not a folder"),
    (["check", "--no-such-option"], "unrecognized arguments"),
    (["check", "--exercise", "nonsense"], "invalid choice"),
    (["check", str(SOLUTIONS), "--json", "/no/such/dir/r.json"], "does not exist"),
    (["check", str(SOLUTIONS), "--json", str(SOLUTIONS)], "is a folder"),
    (["check", str(SOLUTIONS), "--time-limit", "0"], "positive number"),
    (["check", str(SOLUTIONS), "--memory-limit", "-1"], "positive number"),
    (["grade", str(SOLUTIONS), "--out", "/no/such/out", "--import-time-limit", "0"], "--import-time-limit must be"),
    (["check", str(registry.CHECKS_DIR)], "holds none of the exercise modules"),
    (["check", str(SOLUTIONS), "--solutions", "/no/such/solutions"], "is not a folder"),
    (["gpt2-report", "--out", str(SOLUTIONS / "softmax.py")], "is a file"),
    (["frobnicate"], "unknown command"),
    (["hint", "nonsense"], "invalid choice"),
    (["hint", "lookup", "--all", "--reset"], "not allowed with"),
    ([], "usage"),
])
def test_bad_usage_is_one_line_and_exit_2(args, fragment):
    done = softlookup(*args)
    assert done.returncode == 2
    message = (done.stderr or done.stdout).strip()
    assert fragment in message
    if args:
        assert len(message.splitlines()) == 1, message


def test_release_check_reports_stale_assignments(tmp_path):
    shutil.copytree(ASSIGNMENTS, tmp_path / "assignments")
    assert softlookup("release", "--check", "--assignments", tmp_path / "assignments").returncode == 0
    (tmp_path / "assignments" / "lookup.py").write_text("# edited by hand\n")
    done = softlookup("release", "--check", "--assignments", tmp_path / "assignments")
    assert done.returncode == 1 and "lookup.py" in done.stderr
    assert softlookup("release", "--assignments", tmp_path / "assignments").returncode == 2  # an edit: kept
    assert softlookup("release", "--assignments", tmp_path / "assignments", "--force").returncode == 0
    assert softlookup("release", "--check", "--assignments", tmp_path / "assignments").returncode == 0


@pytest.mark.parametrize("folder,code", [(SOLUTIONS, 0), (ASSIGNMENTS, 1)])
def test_plain_pytest_runs_the_same_checks(folder, code):
    done = subprocess.run([sys.executable, "-m", "pytest", str(registry.CHECKS_DIR / "public"),
                           f"--submission={folder}", "-q", "-p", "no:cacheprovider"],
                          capture_output=True, text=True, env=ENV, timeout=600)
    assert done.returncode == code, done.stdout[-2000:]
    assert "Total:" in done.stdout
    if code:
        assert "not started" in done.stdout.strip().splitlines()[-1]  # pytest's own line says what the table says
        assert "Traceback" not in done.stdout


def test_gpt2_report_on_the_tiny_model(tmp_path):
    done = softlookup("gpt2-report", "--out", tmp_path / "report", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("GPT-2 small's weights are not on this machine")
    for convention in ("as Hugging Face tokenizes it", "with <|endoftext|> first"):
        assert f"{convention}:" in done.stdout and "claims reproduced" in done.stdout
    pngs = sorted(p.name for p in (tmp_path / "report").iterdir())
    assert pngs == ["layer4-head3-endoftext.png", "layer4-head3.png"]
    assert all((tmp_path / "report" / name).read_bytes()[:4] == b"\x89PNG" for name in pngs)


def test_fetch_gpt2_offline_fails_in_one_line(tmp_path):
    done = softlookup("fetch-gpt2", tmp_path / "gpt2")
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and "online" in done.stderr


def test_the_judge_never_imports_torch():
    """GPT-2 is graded in workers; the process that judges stays light and torch-free."""
    script = ("import sys; from grader.engine import registry; from grader.engine.classes.runner import run_checks; "
              f"result = run_checks(registry.KIT_ROOT / 'solutions', list(registry.EXERCISES)); "
              "assert result.full_marks; print('torch' in sys.modules, 'transformers' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=ENV, timeout=600)
    assert done.stdout.split() == ["False", "False"], done.stdout + done.stderr


def test_an_exercise_not_started_costs_nothing(tmp_path):
    """Only softmax started: GPT-2's checks fail at once, and torch's fork server never starts."""
    folder = tmp_path / "work"
    shutil.copytree(ASSIGNMENTS, folder)
    shutil.copy(SOLUTIONS / "softmax.py", folder)
    script = ("from grader.engine import registry; from grader.engine.confinement import fork_servers; "
              "from grader.engine.classes.runner import run_checks; "
              f"result = run_checks({str(folder)!r}, list(registry.EXERCISES)); "
              "print(result.score, sorted(fork_servers._servers), [e.status for e in result.exercises])")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=ENV, timeout=600)
    score, kinds, statuses = done.stdout.strip().split(" ", 2)
    assert float(score) == registry.exercise("softmax").max_points, done.stderr
    assert kinds == "['numpy']"
    assert statuses == str(["done"] + ["not started"] * (len(registry.EXERCISES) - 1))


def test_check_without_a_folder_uses_this_one_when_it_holds_modules(tmp_path):
    shutil.copytree(SOLUTIONS, tmp_path / "mine")
    done = softlookup("check", "--exercise", "softmax", cwd=tmp_path / "mine")
    full = registry.exercise("softmax").max_points
    assert done.returncode == 0 and f"{full:g}/{full:g}" in done.stdout, done.stderr


def test_hidden_checks_without_their_reference_are_an_error(tmp_path):
    done = softlookup("check", SOLUTIONS, "--exercise", "softmax", "--solutions", tmp_path / "absent")
    assert done.returncode == 2 and "is not a folder" in done.stderr


def test_a_failed_check_shows_what_the_code_printed(tmp_path):
    folder = tmp_path / "s"
    shutil.copytree(SOLUTIONS, folder)
    with open(folder / "softmax.py", "a") as handle:
        handle.write("\ndef softmax(x, axis=-1):\n    for i in range(30):\n        print('debug line', i)\n"
                     "    return np.ones_like(np.asarray(x, dtype=float))\n")
    done = softlookup("check", folder, "--exercise", "softmax", "--public")
    assert "softmax.softmax() printed:" in done.stdout and "debug line 19" in done.stdout
    assert "debug line 20" not in done.stdout and "more lines" in done.stdout
    verbose = softlookup("check", folder, "--exercise", "softmax", "--public", "-v")
    assert "debug line 29" in verbose.stdout
    assert verbose.stdout.count("Total:") == 1  # the table is printed once


def test_watch_grades_again_on_save_and_stops_on_ctrl_c(tmp_path):
    folder = tmp_path / "work"
    shutil.copytree(ASSIGNMENTS, folder)
    watcher = subprocess.Popen([*SOFTLOOKUP, "check", str(folder), "--watch", "--exercise", "softmax",
                                "--exercise", "lookup"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=ENV, preexec_fn=with_ctrl_c)
    seen = []

    def wait_for(fragment):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = watcher.stdout.readline()
            seen.append(line)
            if fragment in line:
                return
        pytest.fail(f"never saw {fragment!r} in:\n{''.join(seen)}")

    try:
        wait_for("Watching")
        assert any("softmax.py" in line and "not started" in line for line in seen)
        shutil.copy(SOLUTIONS / "softmax.py", folder / "softmax.py")  # the learner saves exercise 1
        full = registry.exercise("softmax").max_points
        wait_for(f"{full:g}/{full:g} done")  # its line on the watch screen
        wait_for("Watching")
        watcher.send_signal(signal.SIGINT)
        assert watcher.wait(30) == 0
        assert "Stopped watching." in watcher.stdout.read()
    finally:
        watcher.kill()
