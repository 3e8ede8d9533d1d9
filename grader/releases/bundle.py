"""``softlookup release student OUT``: what learners receive, and nothing from which an answer follows.

OUT is a project to hand out (or to make a GitHub Classroom template of):
``pip install OUT`` installs the kit's student edition, and OUT holds the
stubs (``assignments/``, modules and notebooks), a README and a GitHub
Classroom workflow. Its ``grader`` package has the public checks, the
widgets and the learner's commands (check, hint, fetch-gpt2); its registry
finds the public checks' points only, there being no hidden check file to
read them from, and ``data/student_edition.json`` says what the hidden
checks are worth (:mod:`grader.engine.edition`).

Left out, and why (:data:`KEPT_BACK`): the reference solutions, the hidden
checks, the code that computes GPT-2's ground truth (its answers are
recorded instead, :mod:`grader.engine.ground_truth`) and the instructor's commands.
The release scans what it wrote (:mod:`grader.releases.leak_scan`) and fails if any
line of the reference or any hidden check is in it.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

from grader.engine import edition, ground_truth, registry
from grader.engine.options import Options
from grader.releases import classroom, distribution, leak_scan
from grader.releases.assignments import LEARNERS_PYPROJECT, MISSING_PLUGIN, planned
from grader.usage import UsageError

# The grader package's files that learners get.
SHIPPED = [
    "__init__.py", "cli.py", "usage.py",
    *[f"engine/{name}.py" for name in ("__init__", "budget", "edition", "errors", "ground_truth", "hint_record",
                                       "options", "plugin", "promises", "proxies", "registry", "results", "sandbox",
                                       "slot", "verify")],
    *[f"engine/classes/{name}.py" for name in ("__init__", "keeper", "runner")],
    *[f"engine/confinement/{name}.py" for name in ("__init__", "clean", "clock", "codec", "confine", "fork_servers",
                                                   "framing", "landlock", "messages", "model_cache", "pipes",
                                                   "policy", "protections", "reads", "scratch", "seccomp", "spawner",
                                                   "stand_ins", "system", "worker", "zygote")],
    *[f"engine/submissions/{name}.py" for name in ("__init__", "digests", "inspection", "intake", "notebooks")],
    *[f"reports/{name}.py" for name in ("__init__", "classroom", "gradescope", "html_table", "markup",
                                         "pytest_table", "terminal", "verdicts")],
    *[f"warm/{name}.py" for name in ("__init__", "client", "place", "server")],
    *[f"commands/{name}.py" for name in ("__init__", "check", "fetch", "hint")],
    *[f"lesson/{name}.py" for name in ("__init__", "explore", "kernel", "lesson", "models", "widgets")],
    "checks/__init__.py", "checks/exercises.toml", "checks/fixtures.py", "checks/gpt2_readouts.py",
    "checks/promised.py",
    "checks/learning_numpy.py", "checks/learning_results.py", "checks/lookup_weights.py", "checks/attention_weights.py",
    "checks/pytest.ini", "checks/public",
    "data/gpt2",
]
# The rest stays with the instructor; a kit test keeps the two lists complete.
KEPT_BACK = {
    "lesson/gpt2.py": "computes the GPT-2 exercises' answers, close to exercise 4's reference line for line",
    "checks/hidden": "the hidden checks: their inputs and names",
    "releases/nbgrader_step.py": "the nbgrader course's autograde step: grades with the hidden checks",
    "commands/release.py": "the commands that read solutions/",
    "commands/dev": "the kit's self-check and an exercise's scaffold: solution markers, solutions/ and tests/",
    "releases/stubs.py": "the solution markers, and the stubs made from solutions/",
    "releases/assignments.py": "makes assignments/ from solutions/",
    "releases/exercise_notebooks.py": "makes notebooks from the reference solutions",
    "releases/nbgrader_course.py": "makes an nbgrader course, hidden tests included, from the reference solutions",
    "commands/grade.py": "grades a class with the hidden checks",
    "commands/merge.py": "joins the shares of a class that softlookup grade --shard graded",
    "reports/shards.py": "the shares of a class graded on many machines",
    "reports/gradebook.py": "the class gradebook of softlookup grade",
    "reports/feedback.py": "each student's feedback files in the class gradebook of softlookup grade",
    "reports/class_record.py": "the class gradebook's record as softlookup grade writes it",
    "releases/overwrite.py": "keeps a learner's edits from the releases, which read solutions/",
    "reports/inert.py": "student text made inert in the class gradebook's files",
    "commands/report.py": "gpt2-report measures the lesson's figures with gpt2.py",
    "releases/bundle.py": "makes this bundle",
    "releases/gradescope.py": "makes the Gradescope autograder, solutions included",
    "commands/autograder.py": "what the Gradescope autograder runs: every check, hidden ones included",
    "releases/distribution.py": "the releases' shared packaging",
    "releases/leak_scan.py": "lists the reference's lines and the hidden checks it looks for",
    **{f"platforms/{name}.py": "reads course platforms' exports for softlookup grade and writes their imports"
       for name in ("__init__", "detect", "folders", "canvas", "moodle", "blackboard", "gradescope",
                    "github_classroom")},
    "reports/summary.py": "the class summary of softlookup grade",
    "engine/classes/batch.py": "the coordinator of softlookup grade's judges, which grade a class with the hidden checks",
    "engine/classes/judge.py": "a judge of softlookup grade, which grades a class with the hidden checks",
    "releases/__init__.py": "the releases: they read solutions/",
    "releases/classroom.py": "the GitHub Classroom workflow, written into this bundle by the release",
    "engine/classes/similarity.py": "softlookup grade's pairs of students whose code is alike",
    "reports/integrity.py": "the class summary's findings beside the grades: pairs alike, kit files changed",
    "releases/handed_out.py": "what the instructor's kit hands out, as softlookup grade compares a class with it",
}
DEPENDENCIES = ["numpy", "pytest", "rich", "torch", "transformers", "matplotlib", "jupyterlab", "ipykernel",
                "ipywidgets", "nbformat", "nbclient"]


def hidden_checks() -> dict[str, list[str]]:
    """Each exercise's hidden checks, by name."""
    return {exercise.module: [check.name for check in exercise.checks if check.hidden]
            for exercise in registry.EXERCISES}


def record_ground_truth(solutions: Path) -> dict:
    """Every answer the public GPT-2 checks ask the kit for, recorded while they grade the reference."""
    from grader.engine.classes.runner import run_checks  # pytest, imported only when a bundle is made

    record: dict = {}

    class _Record:
        @staticmethod
        def pytest_configure(config):
            config.stash[ground_truth.RECORD] = record

    exercises = [exercise for exercise in registry.EXERCISES if exercise.needs == "transformers"]
    result = run_checks(solutions, exercises, Options(public=True), plugins=[_Record()])
    if not result.full_marks:
        raise RuntimeError(f"the reference solutions earn {result.score:g}/{result.max_score:g} on the public GPT-2 "
                           "checks, so their answers cannot be recorded")
    return record


NO_CONTACT = "your instructor"  # whom the bundle's README names for a hole, where release gave no --contact
MAX_CONTACT = 200


def readme(hidden: dict[str, list[str]], torch: str, contact: str = NO_CONTACT) -> str:
    rows = "\n".join(
        f"| `{e.module}.py` | {e.title} | {sum(p for n, p in e.points.items() if n not in hidden[e.module]):g} "
        f"| {sum(e.points[n] for n in hidden[e.module]):g} |" for e in registry.EXERCISES)
    return README.format(rows=rows, torch=torch, missing=MISSING_PLUGIN, contact=contact)


def contact_problem(contact: str) -> str | None:
    """Why ``--contact`` cannot stand in the README's line, or None: it is one line of the instructor's own."""
    if not contact.strip() or "\n" in contact or "\r" in contact or len(contact) > MAX_CONTACT:
        return (f"--contact: give one line of at most {MAX_CONTACT} characters, e.g. "
                "--contact 'Dr. Ada Lovelace <ada@example.edu>'")
    return None


README = """\
# softlookup: attention as a soft lookup

Six exercises that build attention from a lookup table up to a head of
GPT-2. Each one is a module in `assignments/` (and the same exercise as a
notebook beside it): every function says what it must do in its docstring,
and raises `NotImplementedError` until you write it.

## Setting up

With Python 3.11 or later, in this folder:

```bash
python3 -m venv .venv --system-site-packages   # sees a torch you have installed already
source .venv/bin/activate                      # on Windows: .venv\\Scripts\\activate
python -c "import torch"                       # torch 2.6 to 2.13 there? Then skip the next line.
pip install torch=={torch} --index-url https://download.pytorch.org/whl/cpu
pip install .
```

The `pip install torch` line is only for a machine without torch: it fetches torch's small
CPU build (needs the internet; on Linux a plain `pip install torch` may pick
a GPU build of several GB). `pip install .` then uses the torch it finds.

On macOS that line is `pip install torch=={torch}`: PyPI's build for
macOS has no CUDA in it (and is for Apple silicon only). On Windows (PowerShell
or cmd), make the venv with `py -m venv .venv --system-site-packages` and
enter it with `.venv\\Scripts\\activate`; the other lines are the same.
On macOS and Windows `softlookup check` says in one line that your code runs
without the confinement your instructor's grading uses: that is fine for
checking your own work.

## Working

In each new shell, activate the venv first, as above; then:

```bash
softlookup check                      # grade everything in assignments/
softlookup check --exercise softmax   # one exercise
softlookup check --watch              # grade again each time you save
softlookup hint lookup                # the next hint for an exercise
python -m pytest                      # the same checks, here or in assignments/
```

Type `python -m pytest`, not a bare `pytest`: where the Python you made the
venv from has a pytest of its own, `pytest` may be that one, which cannot see
this folder's checks and says `{missing}`.

Prefer notebooks? Run `jupyter lab`, open `assignments/softmax.ipynb` and
so on: the last cell of each checks what the notebook has run, and the
house-price and attention widgets draw what your own functions compute.
Work in the module or in the notebook of an exercise, not both:
`softlookup check` grades the module once you have changed it, and the
notebook while the module is still the untouched stub.

A failed check says what it expected, what it received and the mistake that
usually causes the difference. `softlookup check` exits 0 at full marks.

## Points

| exercise | | public checks | hidden checks |
| --- | --- | --- | --- |
{rows}

`softlookup check` runs the public checks: its total is out of their
points. The hidden checks run your functions on other inputs, against the
reference solutions, when your instructor grades; they are not in this
folder.

Pushing to a GitHub Classroom repository runs the public checks there too
(`.github/workflows/classroom.yml`), and Classroom records their points.

## Found a way around the checks?

A way to earn points your code did not earn, or to see what you should not
(the hidden checks, a classmate's work): tell {contact} privately, not in a
public issue, forum or chat, where every classmate would read it first.
"""

GITIGNORE = ".venv/\n__pycache__/\n*.egg-info/\nbuild/\nresults.json\n.ipynb_checkpoints/\n"


def write_bundle(out: Path, solutions: Path, contact: str = NO_CONTACT):
    """Write the student bundle into the empty folder ``out``."""
    hidden = hidden_checks()
    package = out / "grader"
    distribution.copy_files(SHIPPED, registry.PACKAGE_DIR, package)
    edition.write(package, {module: sum(registry.exercise(module).points[n] for n in names)
                            for module, names in hidden.items()})
    record = record_ground_truth(solutions)
    truth = package / ground_truth.TRUTH_FILE.relative_to(registry.PACKAGE_DIR)
    truth.write_text(json.dumps(record, sort_keys=True) + "\n")
    plan = planned(solutions, out / "assignments")
    (out / "assignments").mkdir()
    for path, text in plan.items():
        path.write_text(text)
    workflow = out / ".github" / "workflows" / "classroom.yml"
    workflow.parent.mkdir(parents=True)
    python, torch = f"{sys.version_info.major}.{sys.version_info.minor}", record["made_with"]["torch"].split("+")[0]
    workflow.write_text(classroom.workflow(python, torch))
    requirements = distribution.dependencies(DEPENDENCIES, pins={"transformers": version("transformers")})
    files = {
        "pyproject.toml": distribution.pyproject(
            "Exercises on attention as a soft lookup, with their public checks", requirements, ["softlookup"],
            ["data/gpt2/*", "data/*.json", "checks/pytest.ini", "checks/exercises.toml"]) + LEARNERS_PYPROJECT,
        "README.md": readme(hidden, torch, contact),
        ".gitignore": GITIGNORE,
        "softlookup.py": (registry.KIT_ROOT / "softlookup.py").read_text(),
    }
    for name, text in files.items():
        (out / name).write_text(text)


def main(argv=None) -> int:
    parser, args = distribution.release_arguments(
        "softlookup release student", __doc__.splitlines()[0], "out", "the folder to write (new, or empty)", argv,
        lambda parser: parser.add_argument(
            "--contact", default=NO_CONTACT, metavar="WHO",
            help="whom learners tell, privately, of a way around the checks: one line for the bundle's README, "
                 "e.g. 'Dr. Ada Lovelace <ada@example.edu>' (default: your instructor)"))
    if problem := contact_problem(args.contact):
        parser.error(problem)
    if args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())):
        parser.error(f"{args.out} exists and is not an empty folder; give a new one")
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        write_bundle(args.out, args.solutions, args.contact)
    except (ValueError, OSError, RuntimeError) as error:  # MarkerError is a ValueError
        raise UsageError(str(error)) from None
    leaks = leak_scan.findings(leak_scan.folder_texts(args.out), args.solutions)
    if leaks:
        print("softlookup release student: the bundle would leak; nothing in it is safe to hand out:", file=sys.stderr)
        for leak in leaks:
            print(f"  {leak}", file=sys.stderr)
        return 1
    print(f"{wrote(args.out)} to {args.out}; scanned: no line of the reference, no hidden check")
    return 0


def wrote(out: Path) -> str:
    """What the release says it wrote: how many files, and their size (the README quotes it; a test holds it)."""
    files = [path for path in out.rglob("*") if path.is_file()]
    return f"wrote {len(files)} files ({sum(path.stat().st_size for path in files) / 1e6:.1f} MB)"
