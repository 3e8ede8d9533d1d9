"""What a learner waits for: `softlookup check` in a fresh process, median of 5 runs (run by hand, not in CI).

    python scripts/benchmark.py             # the three cases below, as a Markdown table
    python scripts/benchmark.py --runs 9

Cases: only exercise 1 started (the others still stubs, as on a learner's
first evening), in numpy and with torch.softmax; the three numpy exercises complete; every exercise complete
(torch and transformers imported for GPT-2). Each run is a fresh process, so
interpreter start-up and every import are part of the figure.
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
NUMPY_FAMILIES = ["softmax", "lookup", "attention"]
TORCH_SOFTMAX = "import torch\n\n\ndef softmax(x, axis=-1):\n    return torch.softmax(torch.as_tensor(x), dim=axis)\n"


def median_seconds(command: list[str], runs: int) -> tuple[float, float, float]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, env=env, cwd=ROOT)
        times.append(time.perf_counter() - started)
        if done.returncode not in (0, 1):
            sys.exit(f"{' '.join(command)} failed:\n{done.stderr.decode()[-2000:]}")
    return statistics.median(times), min(times), max(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    check = [sys.executable, "-m", "grader.cli", "check"]
    with tempfile.TemporaryDirectory() as folder:
        first_evening = Path(folder)
        for stub in (ROOT / "assignments").glob("*.py"):
            shutil.copy(stub, first_evening)
        shutil.copy(ROOT / "solutions" / "softmax.py", first_evening)
        with_torch = Path(folder) / "torch"
        shutil.copytree(first_evening, with_torch)
        (with_torch / "softmax.py").write_text(TORCH_SOFTMAX)
        cases = {
            "only exercise 1 started": [*check, str(first_evening)],
            "only exercise 1 started, written with torch": [*check, str(with_torch)],
            "the three numpy exercises": [*check, str(ROOT / "solutions"),
                                          *[f"--exercise={name}" for name in NUMPY_FAMILIES]],
            "every exercise, GPT-2 included": [*check, str(ROOT / "solutions")],
        }
        print(f"| `softlookup check`, {args.runs} fresh runs, {os.cpu_count()} CPUs | median | min | max |")
        print("| --- | --- | --- | --- |")
        for name, command in cases.items():
            median, low, high = median_seconds(command, args.runs)
            print(f"| {name} | {median:.2f} s | {low:.2f} s | {high:.2f} s |")


if __name__ == "__main__":
    main()
