"""A course graded in shares, one after another on this machine, merged, and compared with one run (run by hand).

    python scripts/benchmark_shards.py --students 10000 --shards 20            # the numpy exercises
    python scripts/benchmark_shards.py --students 400 --shards 4 --exercise softmax

The class is benchmark_class.py's generated mix (40% correct, 40% with one
catalogued mistake, 20% hostile). It is graded once whole, then share by
share (``grade --shard K/N``, each into its own folder, as N machines would),
then joined (``merge --class``, which compares the whole class's code as
one run does); grades.csv and summary.md of the merge must equal the whole
run's. Prints a Markdown table, wall and CPU seconds: the whole run, each
share (median, least, most), the merge, and what a course of 100,000 would
take on N machines at the rate the shares measured. Run it on a quiet
machine and read the wall clock: the CPU column (what the kernel counts for
the processes waited for) misses the workers, whose parents are fork servers
that nobody waits for.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmark_class import ENV, NUMPY, ROOT, kit_copy, make_class  # noqa: E402


CPU: list[float] = []  # each timed command's CPU seconds, the judges and workers it waited for included


def timed(*args: str) -> float:
    """The wall seconds of ``softlookup ARGS``; its CPU seconds go to :data:`CPU` (on a loaded machine the wall
    clock is mostly waiting for the other loads, and the CPU time is what a machine of one's own would spend)."""
    started, before = time.monotonic(), _children_cpu()
    done = subprocess.run([sys.executable, "-m", "grader.cli", *args], env=ENV, capture_output=True, text=True,
                          cwd=tempfile.gettempdir())  # never the kit's folder: -m would put it first on sys.path
    if done.returncode not in (0, 1):
        raise SystemExit(f"softlookup {args[0]} failed:\n{done.stderr[-3000:]}")
    CPU.append(_children_cpu() - before)
    return time.monotonic() - started


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


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
    print(f"whole run: {whole:.1f} s, {CPU[-1]:.1f} s of CPU", file=sys.stderr)
    shares = []
    for number in range(1, args.shards + 1):
        shares.append(timed("grade", str(work / "class"), "--out", str(work / f"share-{number}"), "--shard",
                            f"{number}/{args.shards}", *options))
        print(f"share {number}/{args.shards}: {shares[-1]:.1f} s, {CPU[-1]:.1f} s of CPU", file=sys.stderr)
    merge = timed("merge", *(str(work / f"share-{number}") for number in range(1, args.shards + 1)),
                  "--out", str(work / "merged"), "--class", str(work / "class"))
    print(f"merge: {merge:.1f} s, {CPU[-1]:.1f} s of CPU", file=sys.stderr)
    whole_cpu, share_cpu, merge_cpu = CPU[0], CPU[1:-1], CPU[-1]
    # the summary's lines but those that time the run
    same = all(_untimed(work / "merged" / name) == _untimed(work / "whole" / name)
               for name in ("grades.csv", "summary.md"))
    sizes = [len(json.loads((work / f"share-{n}" / "shard.json").read_text())["share"])
             for n in range(1, args.shards + 1)]
    per_student, fixed = _line(sizes, shares)

    cpu_per_student, cpu_fixed = _line(sizes, share_cpu)

    print(f"\n{args.students} students, {', '.join(modules)}, --jobs {args.jobs}, load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; merged (grades.csv, summary.md) equals the whole "
          f"run: {'yes' if same else 'NO'}\n")
    print("| what | wall seconds | CPU seconds |\n| --- | ---: | ---: |")
    print(f"| one run of the whole class | {whole:.1f} | {whole_cpu:.1f} |")
    print(f"| a share of about {args.students // args.shards} (median of {args.shards}) | "
          f"{statistics.median(shares):.1f} (least {min(shares):.1f}, most {max(shares):.1f}) | "
          f"{statistics.median(share_cpu):.1f} (least {min(share_cpu):.1f}, most {max(share_cpu):.1f}) |")
    print(f"| the {args.shards} shares one after another | {sum(shares):.1f} | {sum(share_cpu):.1f} |")
    print(f"| merge, the class compared (--class) | {merge:.1f} | {merge_cpu:.1f} |")
    print(f"| a share's fixed start, and each student (least squares over the shares) | {fixed:.1f}, "
          f"{per_student:.3f} | {cpu_fixed:.1f}, {cpu_per_student:.3f} |")
    rate = sum(shares) / sum(sizes)  # wall seconds a student, their share's start included
    for machines in (20, 100, 500):
        each = rate * 100_000 / machines
        merged = merge * 100_000 / args.students  # as if the merge were all per-student work
        print(f"| 100,000 students on {machines} machines (worked out: a share, then the merge) | about {each:.0f} "
              f"+ {merged:.0f} | |")
    if not same:
        raise SystemExit("the merged grades.csv differs from the whole run's")


def _line(sizes: list[int], seconds: list[float]) -> tuple[float, float]:
    """A share costs a fixed start plus a time per student: the least-squares line through the shares' times,
    as (per student, fixed)."""
    mean_size, mean_time = statistics.mean(sizes), statistics.mean(seconds)
    spread = sum((size - mean_size) ** 2 for size in sizes)
    per_student = (sum((size - mean_size) * (t - mean_time) for size, t in zip(sizes, seconds)) / spread
                   if spread else mean_time / mean_size)
    return per_student, max(0.0, mean_time - per_student * mean_size)


def _untimed(path: Path) -> list[str]:
    """The lines of ``path`` but those that say how long the run took (which differ between any two runs)."""
    return [line for line in path.read_text().splitlines() if "second" not in line and " s " not in line]


if __name__ == "__main__":
    main()
