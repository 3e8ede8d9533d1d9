"""What a learner waits for: `softlookup check`, the first of a session and the ones after (run by hand, not in CI).

    python scripts/benchmark.py             # a Markdown table, median of 5 runs per figure
    python scripts/benchmark.py --runs 9
    python scripts/benchmark.py --per-exercise   # the edit-then-check loop, one exercise at a time
    python scripts/benchmark.py --whole-check    # all six checked after an edit to one file, beside that one alone
    python scripts/benchmark.py --looping        # a softmax that never returns: check and grade of it

Each row is a learner's folder at one point of the course: exercises 1 to k
solved, the rest still stubs (and exercise 1 written with torch.softmax).
Columns, each the median of fresh `softlookup check` processes, so that
interpreter start-up and every import are part of the figure:

* without the server: `--no-server`, grading in the process, as before the warm server;
* first check: a new private runtime folder, so the check starts the server and is served by it;
* after an edit: the server warm, the last solved exercise's file just changed (the exercises whose grading
  read it are graded again: that one, and those that import it);
* unchanged: the server warm, nothing changed since the last check.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.engine import registry  # noqa: E402
from grader.warm import client  # noqa: E402

TORCH_SOFTMAX = "import torch\n\n\ndef softmax(x, axis=-1):\n    return torch.softmax(torch.as_tensor(x), dim=axis)\n"
LOOPING_SOFTMAX = "def softmax(x, axis=-1):\n    while True:\n        pass\n"


def folder_with(parent: Path, solved: int, torch_softmax: bool = False) -> Path:
    """A learner's folder: the first ``solved`` exercises solved, the others their stubs."""
    folder = Path(tempfile.mkdtemp(dir=parent))
    for number, exercise in enumerate(registry.EXERCISES):
        source = ROOT / ("solutions" if number < solved else "assignments") / f"{exercise.module}.py"
        shutil.copy(source, folder)
    if torch_softmax:
        (folder / "softmax.py").write_text(TORCH_SOFTMAX)
    return folder


def seconds(command: list[str], env: dict) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr.decode()[-2000:]}")
    return elapsed


def stop_server(env: dict):
    """Tell the server of this runtime folder to exit (the client reads the folder from the environment)."""
    before = dict(os.environ)
    os.environ.update(env)
    try:
        client.request({"stop": True}, start=False)
    except (client.Unavailable, OSError, ValueError):
        pass
    finally:
        os.environ.clear()
        os.environ.update(before)


def learner_env() -> dict:
    """The environment a learner checks in: offline, the server allowed."""
    base = {**os.environ, "HF_HUB_OFFLINE": "1"}
    base.pop("SOFTLOOKUP_NO_SERVER", None)
    return base


def after_edits(check: list[str], env: dict, edited: Path, runs: int) -> list[float]:
    """Seconds of ``check`` after each of ``runs`` edits of ``edited`` (a comment appended)."""
    times = []
    for run in range(runs):
        with open(edited, "a") as handle:
            handle.write(f"# edit {run}\n")
        times.append(seconds(check, env))
    return times


def figures(folder: Path, edited: Path, runs: int) -> list[float]:
    """Medians of the four columns for one folder."""
    check = [sys.executable, "-m", "grader.cli", "check", str(folder)]
    base = learner_env()
    alone = [seconds([*check, "--no-server"], base) for _ in range(runs)]
    first = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="sl-bench-") as runtime:
            env = {**base, "XDG_RUNTIME_DIR": runtime}
            first.append(seconds(check, env))
            stop_server(env)
    with tempfile.TemporaryDirectory(prefix="sl-bench-") as runtime:
        env = {**base, "XDG_RUNTIME_DIR": runtime}
        seconds(check, env)
        after_edit = after_edits(check, env, edited, runs)
        unchanged = [seconds(check, env) for _ in range(runs)]
        stop_server(env)
    return [statistics.median(times) for times in (alone, first, after_edit, unchanged)]


def per_exercise(parent: Path, runs: int):
    """The learner's loop: every exercise solved, the server warm, one file edited, then `check --exercise` of it."""
    folder = folder_with(parent, len(registry.EXERCISES))
    base = learner_env()
    print(f"| after an edit, median of {runs} fresh processes, {os.cpu_count()} CPUs | seconds |")
    print("| --- | --- |")
    with tempfile.TemporaryDirectory(prefix="sl-bench-") as runtime:
        env = {**base, "XDG_RUNTIME_DIR": runtime}
        for exercise in registry.EXERCISES:
            check = [sys.executable, "-m", "grader.cli", "check", str(folder), "--exercise", exercise.module]
            seconds(check, env)  # the server's first grading of this exercise: what a learner pays once
            times = after_edits(check, env, folder / f"{exercise.module}.py", runs)
            print(f"| `{exercise.module}` | {statistics.median(times):.2f} |", flush=True)
        stop_server(env)


def whole_check(parent: Path, runs: int):
    """A learner's whole check after an edit: every exercise solved, the server warm, one file edited, then a
    plain `check` of all six; beside it, `check --exercise M` after the same edit, what that exercise alone costs."""
    folder = folder_with(parent, len(registry.EXERCISES))
    base = learner_env()
    print(f"| edited, median of {runs} fresh processes, {os.cpu_count()} CPUs | `check` (all six) | `check --exercise` "
          "of it alone |")
    print("| --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="sl-bench-") as runtime:
        env = {**base, "XDG_RUNTIME_DIR": runtime}
        whole = [sys.executable, "-m", "grader.cli", "check", str(folder)]
        for exercise in registry.EXERCISES:
            edited = folder / f"{exercise.module}.py"
            seconds(whole, env)  # nothing left to grade again from the rows before
            all_six = after_edits(whole, env, edited, runs)
            alone = after_edits([*whole, "--exercise", exercise.module], env, edited, runs)
            print(f"| `{edited.name}` | {statistics.median(all_six):.2f} s | {statistics.median(alone):.2f} s |",
                  flush=True)
        stop_server(env)


def looping(parent: Path, runs: int):
    """A hostile case a learner and an instructor wait for: every exercise solved but a softmax that loops.

    `check` after an edit (the server warm, every exercise graded again) and `grade` of that one student in a
    class of its own (a judge's whole start included), and `grade` of an honest student beside it.
    """
    looping = folder_with(parent, len(registry.EXERCISES))
    (looping / "softmax.py").write_text(LOOPING_SOFTMAX)
    honest = folder_with(parent, len(registry.EXERCISES))
    base = learner_env()
    print(f"| a looping softmax, median of {runs} fresh processes, {os.cpu_count()} CPUs | seconds |")
    print("| --- | --- |")
    with tempfile.TemporaryDirectory(prefix="sl-bench-") as runtime:
        env = {**base, "XDG_RUNTIME_DIR": runtime}
        check = [sys.executable, "-m", "grader.cli", "check", str(looping)]
        seconds(check, env)
        times = after_edits(check, env, looping / "lookup.py", runs)
        stop_server(env)
    print(f"| `softlookup check` of all six, after an edit | {statistics.median(times):.2f} |")
    for name, folder in (("the looping student", looping), ("an honest student", honest)):
        times = []
        for run in range(runs):
            with tempfile.TemporaryDirectory(dir=parent) as work:
                shutil.copytree(folder, Path(work) / "class" / "student")
                grade = [sys.executable, "-m", "grader.cli", "grade", str(Path(work) / "class"), "--out",
                         str(Path(work) / "out")]
                times.append(seconds(grade, base))
        print(f"| `softlookup grade` of {name} alone | {statistics.median(times):.2f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--per-exercise", action="store_true", help="the edit-then-check loop of each exercise")
    parser.add_argument("--looping", action="store_true", help="check and grade of a softmax that never returns")
    parser.add_argument("--whole-check", action="store_true", help="all six checked after an edit to one file")
    args = parser.parse_args()
    mode = per_exercise if args.per_exercise else looping if args.looping else whole_check if args.whole_check else None
    if mode:
        with tempfile.TemporaryDirectory() as parent:
            mode(Path(parent), args.runs)
        return
    print(f"| `softlookup check`, median of {args.runs} fresh processes, {os.cpu_count()} CPUs | without the server "
          "| first check | after an edit | unchanged |")
    print("| --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as parent:
        rows = [(f"exercises 1 to {solved} solved", solved, False) for solved in range(1, len(registry.EXERCISES) + 1)]
        rows.insert(1, ("exercise 1 solved with torch.softmax", 1, True))
        for name, solved, with_torch in rows:
            folder = folder_with(Path(parent), solved, with_torch)
            edited = folder / f"{registry.EXERCISES[solved - 1].module}.py"
            cells = " | ".join(f"{value:.2f} s" for value in figures(folder, edited, args.runs))
            print(f"| {name} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
