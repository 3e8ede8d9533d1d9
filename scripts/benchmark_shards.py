"""A course graded in shares, one after another on this machine, merged, and compared with one run (run by hand).

    python scripts/benchmark_shards.py --students 10000 --shards 20            # the numpy exercises
    python scripts/benchmark_shards.py --students 400 --shards 4 --exercise softmax

The class is benchmark_class.py's generated mix (40% correct, 40% with one
catalogued mistake, 20% hostile). It is graded once whole, then share by
share (``grade --shard K/N``, each into its own folder, as N machines would),
then joined (``merge``); grades.csv and summary.md of the merge must equal
the whole run's. Prints a Markdown table: the whole run, each share (median,
least, most), the merge, and what a course of 100,000 would take on N
machines at the rate the shares measured.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmark_class import ENV, NUMPY, ROOT, kit_copy, make_class  # noqa: E402


def timed(*args: str) -> float:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "grader.cli", *args], env=ENV, capture_output=True, text=True,
                          cwd=tempfile.gettempdir())  # never the kit's folder: -m would put it first on sys.path
    if done.returncode not in (0, 1):
        raise SystemExit(f"softlookup {args[0]} failed:\n{done.stderr[-3000:]}")
    return time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=10_000)
    parser.add_argument("--shards", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--exercise", action="append", help="the exercises graded (default: the three numpy ones)")
    args = parser.parse_args()
    modules = args.exercise or NUMPY
    options = [f"--exercise={module}" for module in modules] + ["--jobs", str(args.jobs), "--time-limit", "1"]
    work = Path(tempfile.mkdtemp(prefix="softlookup-shards-"))
    kit = kit_copy(work / "kit", ROOT)
    started = time.monotonic()
    make_class(work / "class", args.students, modules, kit)
    print(f"{args.students} students generated in {time.monotonic() - started:.0f} s under {work}", file=sys.stderr)

    whole = timed("grade", str(work / "class"), "--out", str(work / "whole"), *options)
    print(f"whole run: {whole:.1f} s", file=sys.stderr)
    shares = []
    for number in range(1, args.shards + 1):
        shares.append(timed("grade", str(work / "class"), "--out", str(work / f"share-{number}"), "--shard",
                            f"{number}/{args.shards}", *options))
        print(f"share {number}/{args.shards}: {shares[-1]:.1f} s", file=sys.stderr)
    merge = timed("merge", *(str(work / f"share-{number}") for number in range(1, args.shards + 1)),
                  "--out", str(work / "merged"))
    same = all((work / "merged" / name).read_text() == (work / "whole" / name).read_text()
               for name in ("grades.csv",))
    sizes = [len(json.loads((work / f"share-{n}" / "shard.json").read_text())["share"])
             for n in range(1, args.shards + 1)]
    # A share costs a fixed start plus a time per student: the least-squares line through the shares' times.
    mean_size, mean_time = statistics.mean(sizes), statistics.mean(shares)
    spread = sum((size - mean_size) ** 2 for size in sizes)
    per_student = (sum((size - mean_size) * (t - mean_time) for size, t in zip(sizes, shares)) / spread
                   if spread else mean_time / mean_size)
    fixed = max(0.0, mean_time - per_student * mean_size)

    print(f"\n{args.students} students, {', '.join(modules)}, --jobs {args.jobs}; merged equals the whole run: "
          f"{'yes' if same else 'NO'}\n")
    print("| what | seconds |\n| --- | ---: |")
    print(f"| one run of the whole class | {whole:.1f} |")
    print(f"| a share of about {args.students // args.shards} (median of {args.shards}) | "
          f"{statistics.median(shares):.1f} (least {min(shares):.1f}, most {max(shares):.1f}) |")
    print(f"| the {args.shards} shares one after another | {sum(shares):.1f} |")
    print(f"| merge | {merge:.1f} |")
    print(f"| a share's fixed start, and each student (least squares over the shares) | {fixed:.1f}, "
          f"{per_student:.3f} |")
    for machines in (20, 100, 500):
        each = fixed + per_student * 100_000 / machines
        merged = merge * 100_000 / args.students  # as if the merge were all per-student work: an upper bound
        print(f"| 100,000 students on {machines} machines (worked out: a share, then the merge) | about "
              f"{each:.0f} + {merged:.0f} |")
    if not same:
        raise SystemExit("the merged grades.csv differs from the whole run's")


if __name__ == "__main__":
    main()
