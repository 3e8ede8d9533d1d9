"""Wall time of `softlookup check solutions/`, median of 5 runs (run by hand, not in CI).

    python scripts/benchmark.py            # all exercises
    python scripts/benchmark.py --numpy    # softmax, lookup and attention only

Each run is a fresh process, so interpreter start-up and every import (torch
and transformers too, when GPT-2 is graded) are part of the figure.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMPY_FAMILIES = ["softmax", "lookup", "attention"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--numpy", action="store_true", help="only the three numpy families")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    command = [sys.executable, "-m", "grader.cli", "check", str(ROOT / "solutions")]
    if args.numpy:
        command += [f"--exercise={name}" for name in NUMPY_FAMILIES]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    times = []
    for _ in range(args.runs):
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, env=env, cwd=ROOT)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            sys.exit(f"the reference solutions did not earn full marks:\n{done.stdout.decode()[-2000:]}")
    print(f"{' '.join(command[2:])}: median {statistics.median(times):.2f} s "
          f"(min {min(times):.2f}, max {max(times):.2f}, {args.runs} runs, {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
