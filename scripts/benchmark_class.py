"""Grading a class: `softlookup grade` with one judge and with two, beside `nbgrader autograde` (run by hand).

    python scripts/benchmark_class.py                        # numpy exercises, 200 students, nbgrader on 10
    python scripts/benchmark_class.py --gpt2                 # every exercise, GPT-2 included
    python scripts/benchmark_class.py --students 200 --nbgrader-students 20
    python scripts/benchmark_class.py --gpt2 --students 10 --plain-nbgrader   # against nbgrader's own Execute
    python scripts/benchmark_class.py --students 10 --first-result --runs 5   # the start: the first student's result

The class is generated: 40% correct (the reference), 40% partly wrong (one
mistake of tests/mistakes.py each), 20% hostile (the attacks of
tests/attacks.py that target lookup.py). nbgrader grades the first
``--nbgrader-students`` of the same class, as notebooks of the course that
`softlookup release nbgrader` writes, whose test cells call the same checks;
its throughput is measured on that subset (grading all 200 would take it the
better part of an hour). Prints a Markdown table: students per second and
the ratios.
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from attacks import ATTACKS, kit_copy  # noqa: E402
from mistakes import MISTAKES  # noqa: E402

from grader.engine import registry  # noqa: E402
from grader.releases.nbgrader_course import ASSIGNMENT  # noqa: E402

NUMPY = ["softmax", "lookup", "attention"]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def make_class(folder: Path, size: int, modules: list[str], kit: Path) -> list[tuple[str, dict[str, str]]]:
    """``size`` students as (name, {module: source}), written as module folders under ``folder``.

    The hostile ones aim at ``kit``, a disposable copy. The codec-patching attack is left out: under
    nbgrader it would run in the same kernel as the test cells, and stall them to nbgrader's timeout.
    """
    reference = {m: (ROOT / "solutions" / f"{m}.py").read_text() for m in modules}
    stubs = {m: (ROOT / "assignments" / f"{m}.py").read_text() for m in modules}
    mistakes = [m for m in MISTAKES if m.module in modules and not m.code]
    attacks = [a for a in ATTACKS if a.module == "lookup" and not a.links and not a.harmful and "codec" not in a.name]
    students = []
    for number in range(size):
        kind = ("correct", "correct", "partial", "partial", "hostile")[number % 5]
        sources = dict(reference)
        if kind == "partial":
            mistake = mistakes[number % len(mistakes)]
            sources[mistake.module] = sources[mistake.module].replace(mistake.old, mistake.new)
        elif kind == "hostile":
            attack = attacks[number % len(attacks)]
            sources = dict(stubs, lookup=attack.source(kit, os.getpid(), 9, folder / "unused.json"))
        name = f"{kind}-{number:03d}"
        (folder / name).mkdir(parents=True)
        for module, text in sources.items():
            (folder / name / f"{module}.py").write_text(text)
        students.append((name, sources))
    random.Random(0).shuffle(students)
    return students


def timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return time.perf_counter() - started


def nbgrader_seconds(work: Path, students, modules: list[str], plain: bool = False) -> float:
    """Seconds `nbgrader autograde` takes for ``students``, as notebooks of the kit's nbgrader course.

    ``plain``: with nbgrader's own configuration (its Execute runs every notebook in a kernel), as a course
    made by hand would grade the same notebooks, instead of the kit's step.
    """
    import nbformat

    course = work / ("course-plain" if plain else "course")
    exercises = [f"--exercise={m}" for m in modules]
    timed([sys.executable, "-m", "grader.cli", "release", "nbgrader", str(course), *exercises], work)
    if plain:
        (course / "nbgrader_config.py").write_text('c = get_config()  # noqa: F821\nc.CourseDirectory.course_id = '
                                                   '"softlookup"\n')
    timed([sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT], course)
    for name, sources in students:
        folder = course / "submitted" / name / ASSIGNMENT
        folder.mkdir(parents=True)
        for module in modules:
            notebook = nbformat.read(course / "source" / ASSIGNMENT / f"{module}.ipynb", as_version=4)
            solution_cells = [c for c in notebook.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution")]
            solution_cells[0].source = sources[module]  # the student's whole module, where their code goes
            for cell in solution_cells[1:]:
                cell.source = "pass"
            nbformat.write(notebook, folder / f"{module}.ipynb")
    return timed([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT], course)


def first_result(grade: list[str], out: Path, cwd: Path) -> tuple[float, float]:
    """Seconds from the start of ``grade`` to the first student's record written in ``out`` (their feedback, then
    their record: a result a teacher could read), and to the end of the run."""
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    process = subprocess.Popen([*grade, "--out", str(out)], cwd=cwd, env=ENV, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    first = None
    while process.poll() is None:
        if first is None and any(out.glob("*/softlookup.json")):
            first = time.perf_counter() - started
        time.sleep(0.005)
    total = time.perf_counter() - started
    if process.returncode != 0:
        sys.exit(f"{' '.join(grade)} failed:\n{process.stderr.read()[-2000:]}")
    return (first if first is not None else total), total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--nbgrader-students", type=int, default=10)
    parser.add_argument("--gpt2", action="store_true", help="every exercise, GPT-2 included")
    parser.add_argument("--plain-nbgrader", action="store_true",
                        help="also nbgrader with its own Execute step (minutes per student with GPT-2)")
    parser.add_argument("--first-result", action="store_true",
                        help="only `grade --jobs 2`: seconds to the first student's result and to the end")
    parser.add_argument("--runs", type=int, default=5, help="runs of --first-result, their median printed")
    args = parser.parse_args()
    modules = list(registry.BY_MODULE) if args.gpt2 else NUMPY
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        students = make_class(work / "class", args.students, modules, kit_copy(work, ROOT))
        grade = [sys.executable, "-m", "grader.cli", "grade", str(work / "class"), "--time-limit", "1",
                 *[f"--exercise={m}" for m in modules]]
        if args.first_result:
            runs = [first_result([*grade, "--jobs", "2"], work / "out-first", work) for _ in range(args.runs)]
            print(f"| `softlookup grade --jobs 2`, {args.students} students, {', '.join(modules)} ({os.cpu_count()} "
                  f"CPUs), median of {args.runs} | first result | all |")
            print("| --- | --- | --- |")
            print(f"| seconds | {statistics.median(r[0] for r in runs):.2f} | {statistics.median(r[1] for r in runs):.2f} |")
            print("each run (first, all):", ", ".join(f"({first:.2f}, {total:.2f})" for first, total in runs))
            return
        rates = {}
        for jobs in (1, 2):
            seconds = timed([*grade, "--out", str(work / f"out-{jobs}"), "--jobs", str(jobs)], work)
            rates[f"softlookup grade --jobs {jobs}"] = (args.students, seconds)
        subset = students[: args.nbgrader_students]
        rates["nbgrader autograde"] = (len(subset), nbgrader_seconds(work, subset, modules))
        if args.plain_nbgrader:
            rates["plain nbgrader autograde"] = (len(subset), nbgrader_seconds(work, subset, modules, plain=True))
    print(f"| {', '.join(modules)} ({os.cpu_count()} CPUs) | students | seconds | students/s |")
    print("| --- | --- | --- | --- |")
    for name, (count, seconds) in rates.items():
        print(f"| {name} | {count} | {seconds:.1f} | {count / seconds:.2f} |")
    nbgrader_rate = rates["nbgrader autograde"][0] / rates["nbgrader autograde"][1]
    one, two = (rates[f"softlookup grade --jobs {j}"][0] / rates[f"softlookup grade --jobs {j}"][1] for j in (1, 2))
    print(f"\n--jobs 1 is {one / nbgrader_rate:.1f}x nbgrader; --jobs 2 is {two / nbgrader_rate:.1f}x nbgrader "
          f"and {two / one:.2f}x --jobs 1.")
    if "plain nbgrader autograde" in rates:
        plain_rate = rates["plain nbgrader autograde"][0] / rates["plain nbgrader autograde"][1]
        print(f"--jobs 2 is {two / plain_rate:.1f}x plain nbgrader (its own Execute).")


if __name__ == "__main__":
    main()
