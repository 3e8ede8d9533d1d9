"""The similarity pass of `softlookup grade` alone, on a generated class (run by hand).

    python scripts/benchmark_similarity.py                     # 200 students, all six exercises
    python scripts/benchmark_similarity.py --pairs pairs.json  # also write every pair found, to compare two kits

The class is docs/speed.md's: 10% untouched stubs, 40% a right answer
(tests/wild.py's, or the reference), 50% the reference with one catalogued
mistake (tests/mistakes.py), every file with a line of its own so that no
two are the same text. The pass runs as `grade` runs it once the gradebook
is read (grader.commands.grade.findings), in this process, and prints its
CPU time (this process and the processes it started) and its wall time
for each step. ``--store`` keeps the fingerprints' tokens in a folder, as
`grade` keeps them in the class's --out folder: run twice with the same
folder to see what a regrade pays.
"""

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from grader.engine import registry
from grader.engine.classes import similarity
from grader.engine.submissions import intake

ROOT = Path(__file__).resolve().parents[1]


def make_class(folder: Path, size: int, modules: list[str]) -> list[intake.Student]:
    """``size`` students under ``folder``, each a folder of one module per exercise.

    The tests' catalogues are imported here, not at the top: the processes that tokenise import this
    script again (as `grade`'s import the `softlookup` entry point), and should pay what grade's pay.
    """
    sys.path.insert(0, str(ROOT / "tests"))
    from mistakes import MISTAKES
    from wild import RIGHT

    chance = random.Random(0)
    reference = {m: (registry.SOLUTIONS_DIR / f"{m}.py").read_text() for m in modules}
    stubs = {m: (ROOT / "assignments" / f"{m}.py").read_text() for m in modules}
    right = {m: [sources[m] for sources in RIGHT.values() if m in sources] + [reference[m]] for m in modules}
    wrong = {m: [x for x in MISTAKES if x.module == m and not x.code and x.old in reference[m]] for m in modules}
    students = []
    for number in range(size):
        name = f"student-{number:04d}"
        (folder / name).mkdir(parents=True)
        for module in modules:
            roll = chance.random()
            if roll < 0.1:
                text = stubs[module]
            elif roll < 0.5:
                text = chance.choice(right[module])
            else:
                mistake = chance.choice(wrong[module]) if wrong[module] else None
                text = reference[module].replace(mistake.old, mistake.new) if mistake else reference[module]
            if roll >= 0.1:
                text += f"\nNOTE = {number}  # {name}'s own line\n"
            (folder / name / f"{module}.py").write_text(text)
        students.append(intake.Student(name, str(folder / name)))
    return students


class Clock:
    """CPU time of this process and its finished children, and the wall clock, per step."""

    def __init__(self):
        self.rows = []

    def __enter__(self):
        self.cpu, self.wall = self._cpu(), time.perf_counter()
        return self

    def step(self, what: str):
        cpu, wall = self._cpu(), time.perf_counter()
        self.rows.append((what, cpu - self.cpu, wall - self.wall))
        self.cpu, self.wall = cpu, wall

    def __exit__(self, *_):
        return False

    @staticmethod
    def _cpu() -> float:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + Clock._forkserver()

    @staticmethod
    def _forkserver() -> float:
        """CPU seconds of multiprocessing's fork server and the processes it forked and reaped (the tokenisers):
        it lives as long as this process, so RUSAGE_CHILDREN never counts it."""
        from multiprocessing import forkserver

        pid = forkserver._forkserver._forkserver_pid
        if not pid:
            return 0.0
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


def timed_pass(students, modules, exercises, store):
    """The pass as grade runs it, each step timed: (the pairs, the code read, the clock)."""
    from grader.releases import handed_out

    with Clock() as clock:
        code = {student.id: similarity.sources(student, modules) for student in students}
        clock.step("reading every student's files")
        boilerplate = handed_out.boilerplate(registry.SOLUTIONS_DIR, exercises)
        clock.step("the handed-out stubs and notebooks")
        found = similarity.pairs(code, boilerplate, similarity.DEFAULT_THRESHOLD,
                                 **({"store": store} if store else {}))  # as the kit before the store can run it
        clock.step("fingerprinting and comparing")
    return found, code, clock


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--pairs", type=Path, help="write every pair found here, as JSON")
    parser.add_argument("--store", type=Path, help="keep the tokens here (the class's --out folder in grade)")
    args = parser.parse_args()
    exercises = list(registry.EXERCISES)
    modules = [exercise.module for exercise in exercises]
    if args.store:
        args.store.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="softlookup-similarity-benchmark-") as work:
        students = make_class(Path(work) / "class", args.students, modules)
        found, code, clock = timed_pass(students, modules, exercises, args.store)
    load = os.getloadavg()[0]

    print(f"{args.students} students, {sum(map(len, code.values()))} files, {len(found)} pairs; "
          f"load average {load:.1f} on {os.cpu_count()} cores\n")
    print("| step | CPU | wall |\n| --- | ---: | ---: |")
    for what, cpu, wall in clock.rows:
        print(f"| {what} | {cpu:.2f} s | {wall:.2f} s |")
    print(f"| all | {sum(r[1] for r in clock.rows):.2f} s | {sum(r[2] for r in clock.rows):.2f} s |")
    if args.pairs:
        args.pairs.write_text(json.dumps([[p.exercise, p.students, p.score, p.lines, p.excerpt] for p in found],
                                         indent=0))


if __name__ == "__main__":
    main()
