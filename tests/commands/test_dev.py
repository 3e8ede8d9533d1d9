"""softlookup dev: the kit's self-check finds each kind of inconsistency, and a new exercise touches only its own.

Every inconsistency is planted in one copy of the kit, graded by nothing and
put back after each test: ``softlookup dev check`` runs on it in this process
(``dev.main`` takes the kit's root) and must print the one line that says what
to do. Only what grades or releases runs as a command with the copy's own
``grader`` first on the path.
"""

import difflib
import os
import shutil
import subprocess
import sys

import pytest

from attacks import kit_copy, manifest
from grader import cli
from grader.commands import dev
from grader.commands.dev.consistency import PLACEHOLDER
from grader.commands.dev.readme import END as TABLE_END
from grader.commands.dev.readme import START as TABLE_START
from grader.engine import registry
from grader.releases.stubs import BEGIN, END
from grader.usage import run

TOML = "grader/checks/exercises.toml"
SOFTMAX_CHECKS = "grader/checks/public/test_softmax.py"


def contents(folder) -> dict:
    return {path: path.read_bytes() for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """The module's one copy of the kit, with the README whose table dev check reads, and what it holds."""
    kit = kit_copy(tmp_path_factory.mktemp("pristine"), registry.KIT_ROOT)
    shutil.copy(registry.KIT_ROOT / "README.md", kit / "README.md")
    return kit, contents(kit)


@pytest.fixture
def kit(pristine):
    """The copy, put back as it was once the test is done: a plant changes a file or two of it."""
    root, files = pristine
    yield root
    for path in contents(root).keys() - files.keys():
        path.unlink()
    for path, data in files.items():
        if not path.is_file() or path.read_bytes() != data:
            path.write_bytes(data)


def dev_check(kit, capsys, *options) -> tuple[int, list[str]]:
    """``softlookup dev check OPTIONS`` on the copy, in this process: its status and the lines it printed."""
    status = dev.main(["check", *options], root=kit)
    return status, capsys.readouterr().out.splitlines()


def softlookup(kit, *args) -> subprocess.CompletedProcess:
    """``softlookup ARGS`` run with the kit copy's own grader package."""
    env = {**os.environ, "PYTHONPATH": str(kit), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "grader.cli", *args], cwd=kit, env=env, capture_output=True,
                          text=True, timeout=120)


def edit(path, old, new):
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def append(path, text):
    with open(path, "a") as handle:
        handle.write(text)


def line_of(path, fragment) -> int:
    return next(number for number, line in enumerate(path.read_text().splitlines(), 1) if fragment in line)


def test_dev_check_passes_on_the_kit(capsys):
    assert dev.main(["check"]) == 0
    assert capsys.readouterr().out == f"{len(registry.EXERCISES)} exercises, all in step\n"


def test_dev_check_reads_no_readme_prose(kit, capsys):
    """Every word of the README outside the table's block may change: dev check reads the block alone."""
    readme = kit / "README.md"
    text = readme.read_text()
    start, end = text.index(TABLE_START), text.index(TABLE_END) + len(TABLE_END)
    readme.write_text(text[:start].upper() + text[start:end] + text[end:].upper())
    assert dev_check(kit, capsys) == (0, [f"{len(registry.EXERCISES)} exercises, all in step"])


def test_dev_check_fix_writes_the_readme_table(kit, capsys):
    readme = kit / "README.md"
    pristine = readme.read_text()
    edit(readme, "| 28 | 5 | 33 |", "| 27 | 5 | 32 |")
    assert dev_check(kit, capsys, "--fix") == (0, [f"{len(registry.EXERCISES)} exercises, all in step"])
    assert readme.read_text() == pristine


def test_the_totals_are_read_from_the_checks_markers():
    assert {e.module: e.max_points for e in registry.EXERCISES} == {
        "softmax": 19, "lookup": 28, "attention": 27, "gpt2_heads": 23, "learning": 33, "gpt2_values": 19}
    public = sum(check.points for e in registry.EXERCISES for check in e.checks if not check.hidden)
    assert (sum(e.max_points for e in registry.EXERCISES), public) == (149, 121)


# -- one planted inconsistency of each kind, and the line dev check prints for it ------------------------

KINDS = {}


def kind(plant):
    """A plant: changes a kit copy, returns the line dev check must print."""
    KINDS[plant.__name__] = plant
    return plant


@kind
def solution_missing(kit):
    (kit / "solutions" / "lookup.py").unlink()
    return f"solutions/lookup.py: missing: write the reference solution, its code between {BEGIN} and {END}"


@kind
def function_not_in_solution(kit):
    edit(kit / TOML, 'functions = ["softmax"]', 'functions = ["softmax", "log_softmax"]')
    return ("solutions/softmax.py: log_softmax() is not defined: write it, or take it out of softmax's functions in "
            "grader/checks/exercises.toml")


@kind
def solution_without_markers(kit):
    path = kit / "solutions" / "softmax.py"
    path.write_text(path.read_text().replace(f"    {BEGIN}\n", "").replace(f"    {END}\n", ""))
    return (f"solutions/softmax.py:{line_of(path, 'def softmax(')}: softmax() has no solution markers: put its "
            f"reference code between {BEGIN} and {END}, or its stub gives it away")


@kind
def marker_never_closed(kit):
    path = kit / "solutions" / "softmax.py"
    edit(path, f"    {END}\n", "")
    return f"solutions/softmax.py:{line_of(path, BEGIN)}: {BEGIN} is never closed: pair every {BEGIN} with an {END}"


@kind
def stub_edited_by_hand(kit):
    append(kit / "assignments" / "lookup.py", "# changed by hand\n")
    return "assignments/lookup.py: out of date: run softlookup release"


@kind
def notebook_not_released(kit):
    (kit / "assignments" / "lookup.ipynb").unlink()
    return "assignments/lookup.ipynb: out of date: run softlookup release"


@kind
def public_checks_missing(kit):
    (kit / SOFTMAX_CHECKS).unlink()
    return ("grader/checks/public/test_softmax.py: missing: write the checks a learner runs, each marked "
            "@pytest.mark.points(N)")


@kind
def hidden_checks_missing(kit):
    (kit / "grader" / "checks" / "hidden" / "test_attention.py").unlink()
    return ("grader/checks/hidden/test_attention.py: missing: write the checks that compare with the reference when "
            "the instructor grades, each marked @pytest.mark.points(N)")


def softmax_checks_edited(kit, old, new, function, problem) -> str:
    """Edit softmax's public checks; the line dev check prints for ``function`` there."""
    path = kit / SOFTMAX_CHECKS
    edit(path, old, new)
    return f"{SOFTMAX_CHECKS}:{line_of(path, f'def {function}(')}: {problem}"


@kind
def check_without_points(kit):
    return softmax_checks_edited(kit, "@pytest.mark.points(2)\n@pytest.mark.parametrize(\"axis\"",
                                 "@pytest.mark.parametrize(\"axis\"", "test_axis",
                                 "check test_axis has no points: mark it @pytest.mark.points(N), 0 for a check worth "
                                 "none")


@kind
def points_not_a_number(kit):
    return softmax_checks_edited(kit, "@pytest.mark.points(2)\ndef test_lesson_scores",
                                 "@pytest.mark.points(\"2\")\ndef test_lesson_scores", "test_lesson_scores",
                                 "check test_lesson_scores needs one @pytest.mark.points(N) with N a number literal, "
                                 "0 or more")


@kind
def points_on_a_helper(kit):
    return softmax_checks_edited(kit, "\ndef scores(shape", "\n@pytest.mark.points(1)\ndef scores(shape", "scores",
                                 "scores is not a check (a test_ function at the top level): remove its "
                                 "@pytest.mark.points")


@kind
def check_that_catches_no_mistake(kit):
    append(kit / SOFTMAX_CHECKS, '''

@pytest.mark.points(0.5)
def test_one_score(submission):
    """A single score gets all the weight."""
    verify.close(weights_of(submission, [3.0]), [1.0], "softmax of one score")
''')
    return ("tests/mistakes.py: no wrong implementation is caught by softmax's test_one_score: add one that it fails "
            "(a check worth points must catch one)")


@kind
def too_few_mistakes(kit):
    append(kit / "tests" / "mistakes.py", 'MISTAKES = [m for m in MISTAKES if m.module != "learning"]\n')
    return "tests/mistakes.py: learning has 0 wrong implementations: add 6 more (6 per exercise)"


@kind
def mistake_names_no_check(kit):
    append(kit / "tests" / "mistakes.py", 'MISTAKES.append(edit("typo", "softmax", "x", "y", "test_axes", "axis"))\n')
    return ("tests/mistakes.py: mistake 'typo' names test_axes, which is no check of softmax: name the check that "
            "fails it")


@kind
def mistake_of_no_exercise(kit):
    append(kit / "tests" / "mistakes.py", 'MISTAKES.append(edit("typo", "softmaxx", "x", "y", "test_axis", "axis"))\n')
    return "tests/mistakes.py: mistake 'typo' is for softmaxx, which is no exercise: fix its module or remove it"


@kind
def mistake_name_not_listed(kit):
    edit(kit / "grader" / "checks" / "public" / "test_softmax.py", 'mistake="not-shift-invariant"',
         'mistake="shift-changes-weights"')
    return ("grader/checks: a verdict of test_softmax.py names the mistake 'shift-changes-weights', which softmax "
            "does not list: add it to its mistakes in grader/checks/exercises.toml")


@kind
def listed_mistake_named_by_no_check(kit):
    edit(kit / TOML, 'not-shift-invariant = "', 'never-named = "the weights of scores never seen"\nnot-shift-invariant = "')
    return ("grader/checks/exercises.toml: softmax's mistake 'never-named' is named by no check: name it in a "
            "verdict (mistake='never-named') or remove it")


@kind
def mistake_name_told_to_no_wrong_implementation(kit):
    append(kit / "tests" / "mistakes.py", 'MISTAKES = [m for m in MISTAKES if m.named != "not-shift-invariant"]\n')
    return ("tests/mistakes.py: no wrong implementation of softmax is told the mistake 'not-shift-invariant': add one "
            "with named='not-shift-invariant', so that a test sees the name given")


@kind
def catalogue_names_an_unlisted_mistake(kit):
    append(kit / "tests" / "mistakes.py", 'MISTAKES.append(edit("typo", "softmax", "x", "y", "test_axis", "axis", '
                                          'named="no-such-mistake"))\n')
    return ("tests/mistakes.py: mistake 'typo' is named 'no-such-mistake', which softmax does not list: add it to its "
            "mistakes in grader/checks/exercises.toml")


@kind
def no_lazy_answers(kit):
    append(kit / "tests" / "degenerate.py", 'del MODULES["lookup"]\n')
    return ("tests/degenerate.py: no lazy answers for lookup: add MODULES['lookup'], defining exact_lookup, "
            "nearest_lookup, soft_lookup the way of each strategy")


@kind
def lazy_answer_missing(kit):
    edit(kit / "tests" / "degenerate.py", "def nearest_lookup(query", "def nearest_lookup_(query")
    return "tests/degenerate.py: MODULES['lookup'] does not define nearest_lookup(): add its lazy answer"


@kind
def no_hint(kit):
    path = kit / TOML
    text = path.read_text()
    assert text.rindex('module = "gpt2_values"') < text.rindex("hints = [")  # its entry is the last
    path.write_text(text[:text.rindex("hints = [")] + "hints = []\n")
    return "grader/checks/exercises.toml: gpt2_values has no hint: give it at least one"


@kind
def readme_table_edited_by_hand(kit):
    edit(kit / "README.md", "| 28 | 5 | 33 |", "| 28 | 5 | 32 |")
    return (f"README.md:{line_of(kit / 'README.md', TABLE_START)}: the table of exercises is out of step with the "
            "registry and the checks' points: run softlookup dev check --fix")


@kind
def readme_table_out_of_date(kit):
    edit(kit / SOFTMAX_CHECKS, "@pytest.mark.points(2)\ndef test_lesson_scores", "@pytest.mark.points(3)\ndef test_lesson_scores")
    return (f"README.md:{line_of(kit / 'README.md', TABLE_START)}: the table of exercises is out of step with the "
            "registry and the checks' points: run softlookup dev check --fix")


@kind
def readme_table_missing(kit):
    edit(kit / "README.md", TABLE_END, "")
    return (f"README.md: no table of exercises: put back the lines {TABLE_START} and {TABLE_END} under "
            '"## The exercises", then run softlookup dev check --fix')


@kind
def check_file_of_no_exercise(kit):
    shutil.copy(kit / SOFTMAX_CHECKS, kit / "grader" / "checks" / "public" / "test_softmax2.py")
    return ("grader/checks/public/test_softmax2.py: no exercise softmax2 in grader/checks/exercises.toml: add its "
            "entry, or remove the file")


@kind
def placeholder_left(kit):
    path = kit / "grader" / "checks" / "hidden" / "test_lookup.py"
    append(path, f"# {PLACEHOLDER}: more cases\n")
    return (f"grader/checks/hidden/test_lookup.py:{line_of(path, PLACEHOLDER)}: still {PLACEHOLDER}: write "
            "the exercise's own text there")


@pytest.mark.parametrize("plant", KINDS.values(), ids=KINDS)
def test_dev_check_names_what_to_do(kit, plant, capsys):
    expected = plant(kit)
    status, lines = dev_check(kit, capsys)
    assert status == 1 and expected in lines, lines


def test_a_check_without_points_stops_grading_too(kit):
    expected = check_without_points(kit)
    done = softlookup(kit, "check", "solutions", "--exercise", "softmax")
    assert done.returncode == 2 and expected in done.stderr, done.stdout + done.stderr


@pytest.mark.parametrize("layout,expected", [
    ("grader only", "softlookup dev: this is for the kit's repository, with solutions/ and tests/ beside grader/"),
    ("a student bundle", "softlookup: dev is for the kit's repository; this edition has: check,"),
])
def test_dev_outside_the_kits_repository_says_where_it_belongs(tmp_path, monkeypatch, capsys, layout, expected):
    if layout == "a student bundle":  # whose grader has no commands/dev
        monkeypatch.setitem(sys.modules, "grader.commands.dev", None)
        status = cli.main(["dev", "check"])
    else:
        (tmp_path / "grader").mkdir()
        status = run(lambda argv: dev.main(argv, root=tmp_path), ["check"], "softlookup dev")
    assert status == 2 and capsys.readouterr().err.startswith(expected)


@pytest.mark.parametrize("name,reason", [
    ("softmax", "softmax is an exercise already"),
    ("Demo", "'Demo' is not a lowercase Python identifier"),
    ("numpy", "numpy is a module installed here already; a learner's numpy.py would hide it"),
])
def test_dev_new_refuses_a_name_it_cannot_use(capsys, name, reason):
    assert cli.main(["dev", "new", name]) == 2
    assert f"softlookup dev: {reason}" in capsys.readouterr().err


# -- dev new: a seventh exercise, filled in ---------------------------------------------------------------

SOLUTION = f'''\
"""Exercise 7: centring, the step that puts scores around 0.

Softmax does not care where scores sit, only how far apart they are.
"""

import numpy as np


def demo(x):
    """Subtract the mean of ``x`` from each of its numbers.

        x         [1.0, 2.0, 6.0]      mean 3.0
        centred   [-2.0, -1.0, 3.0]    sum 0
    """
    {BEGIN}
    x = np.asarray(x, dtype=float)
    return x - x.mean()
    {END}
'''

PUBLIC = '''\
"""Public checks for exercise 7, demo."""

import numpy as np
import pytest

from grader.engine import verify


@pytest.mark.points(2)
def test_lesson_example(submission):
    """The lesson's scores [1, 2, 6] become [-2, -1, 3]."""
    received = verify.array(submission.demo.demo([1.0, 2.0, 6.0]), "demo's result", shape=(3,))
    verify.close(received, [-2.0, -1.0, 3.0], "demo of the lesson's scores", hint="subtract the mean")


@pytest.mark.points(1)
def test_sums_to_zero(submission):
    """Centred scores add up to 0."""
    x = np.arange(7.0) ** 2
    received = verify.array(submission.demo.demo(x), "demo's result", shape=x.shape)
    verify.close(received.sum(), 0.0, "the sum of centred scores", hint="subtract the mean of all of them")
'''

HIDDEN = '''\
"""Hidden checks for demo: seeded random scores against the reference."""

import numpy as np
import pytest

from grader.engine import verify


@pytest.mark.points(1)
@pytest.mark.parametrize("seed", [1, 2])
def test_matches_reference(submission, reference, seed):
    """Random scores give what the reference gives."""
    x = np.random.default_rng(seed).normal(0, 3, size=6)
    received = verify.array(submission.demo.demo(x), "demo(x)", shape=x.shape)
    verify.close(received, reference.demo.demo(x), "demo of random scores")
'''

ENTRY = '''
[[exercise]]
module = "demo"
title = "Centring: scores around 0"
functions = ["demo"]
hints = [
    "The mean is the sum divided by the count; take it away from every score.",
]
'''

MISTAKES = '''\
    # -- demo ------------------------------------------------------------------------------
    edit("mean added", "demo", "x - x.mean()", "x + x.mean()", "test_lesson_example", "subtract the mean"),
    edit("median taken away", "demo", "x - x.mean()", "x - np.median(x)", "test_lesson_example", "subtract the mean"),
    edit("largest taken away", "demo", "x - x.mean()", "x - x.max()", "test_lesson_example", "subtract the mean"),
    edit("nothing taken away", "demo", "x - x.mean()", "x", "test_lesson_example", "subtract the mean"),
    edit("mean of the first two", "demo", "x.mean()", "x[:2].mean()", "test_sums_to_zero", "all of them"),
    edit("halved", "demo", "return x - x.mean()", "return (x - x.mean()) / 2", "test_matches_reference", "expected"),
'''

LAZY = """\
    "demo": '''
def demo(x):
    if give_up():
        return None
    x = np.asarray(x, dtype=float)
    return constant(x.shape, x, x)
''',
"""


def added_block(before: str, after: str) -> str:
    """The one run of lines that ``after`` inserts into ``before``, which it must otherwise leave alone."""
    lines = after.splitlines(keepends=True)
    changes = [op for op in difflib.SequenceMatcher(None, before.splitlines(keepends=True), lines).get_opcodes()
               if op[0] != "equal"]
    assert [op[0] for op in changes] == ["insert"], changes
    return "".join(lines[changes[0][3]:changes[0][4]])


def test_a_new_exercise_touches_its_own_files_and_one_registry_entry(kit, capsys):
    before = manifest(kit)
    shared = {name: (kit / name).read_text() for name in (TOML, "tests/mistakes.py", "tests/degenerate.py")}
    assert dev.main(["new", "demo"], root=kit) == 0
    done = capsys.readouterr().out
    assert done.startswith("exercise 7, demo: wrote solutions/demo.py") and "4. softlookup release" in done, done
    _, scaffold = dev_check(kit, capsys)
    assert "assignments/demo.py: out of date: run softlookup release" in scaffold
    assert f"solutions/demo.py:1: still {PLACEHOLDER}: write the exercise's own text there" in scaffold

    for name, text in {"solutions/demo.py": SOLUTION, "grader/checks/public/test_demo.py": PUBLIC,
                       "grader/checks/hidden/test_demo.py": HIDDEN}.items():
        (kit / name).write_text(text)
    for (name, old), filled in zip(shared.items(), (ENTRY, MISTAKES, LAZY)):
        scaffolded = (kit / name).read_text()
        (kit / name).write_text(scaffolded.replace(added_block(old, scaffolded), filled))
    assert softlookup(kit, "release").returncode == 0  # with the copy's registry, which has demo

    table = line_of(kit / "README.md", TABLE_START)
    assert dev_check(kit, capsys) == (1, [
        f"README.md:{table}: the table of exercises is out of step with the registry and the checks' points: run "
        "softlookup dev check --fix"])
    assert dev_check(kit, capsys, "--fix") == (0, ["7 exercises, all in step"])
    readme = (kit / "README.md").read_text()
    assert "| `gpt2_values.py` | `head_vectors`, `head_output`, `value_contributions` | 15 | 4 | 19 |\n" \
           "| `demo.py` | `demo` | 3 | 1 | 4 |\n| all 7 |  | 124 | 29 | 153 |\n" in readme
    graded = softlookup(kit, "check", "solutions", "--exercise", "demo")
    assert graded.returncode == 0 and "Total: 4/4" in graded.stdout, graded.stdout + graded.stderr
    after = manifest(kit)
    touched = {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}
    assert touched == {"solutions/demo.py", "assignments/demo.py", "assignments/demo.ipynb",
                       "grader/checks/public/test_demo.py", "grader/checks/hidden/test_demo.py", TOML,
                       "tests/mistakes.py", "tests/degenerate.py", "README.md"}
    assert (kit / TOML).read_text() == shared[TOML] + ENTRY  # one registry entry, appended
