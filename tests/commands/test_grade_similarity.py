"""Work handed in twice, found by ``softlookup grade`` and said in the class summary (issue 46 §4).

A small class on the numpy exercises: a student who handed in the reference,
one who handed in a renamed copy of it as notebooks (every local variable
renamed, the functions in reverse order, other comments), three
honest students whose code comes from the wild and is written each its own
way, and two untouched stubs. The pair, and only the pair, is in the
summary, in Markdown and HTML, with its score and the lines they share; the
threshold is the instructor's to set, and the section says it is no grade.
"""

import ast
import builtins
import re

import pytest

from classes import ASSIGNMENTS, MAX, NUMPY, cli, graded_class, modules, reference, rows, stubs
from grader.engine import registry
from grader.engine.classes import similarity
from grader.releases.exercise_notebooks import learner_notebook
from wild import (LOOKUP_DICT_LOGADDEXP, LOOKUP_LOOPS_MATH, LOOKUP_SKLEARN_STYLE, SOFTMAX_LOGADDEXP, SOFTMAX_LOGSUMEXP,
                  SOFTMAX_PICOGPT)

HONEST = {"honest-picogpt": {"softmax": SOFTMAX_PICOGPT, "lookup": LOOKUP_LOOPS_MATH},
          "honest-logsumexp": {"softmax": SOFTMAX_LOGSUMEXP, "lookup": LOOKUP_DICT_LOGADDEXP},
          "honest-logaddexp": {"softmax": SOFTMAX_LOGADDEXP, "lookup": LOOKUP_SKLEARN_STYLE}}


class _Renamed(ast.NodeTransformer):
    """Every local variable given another name; the arguments (the contract's) and module-level names kept."""

    def __init__(self, kept: set[str]):
        self.kept = kept

    def visit_Name(self, node):
        node.id = node.id if node.id in self.kept else f"my_{node.id[::-1]}_value"
        return node


def renamed_copy(source: str) -> str:
    """``source`` as a student who copied it hides it: variables renamed, functions reordered, other comments."""
    tree = ast.parse(source)
    kept = {name for node in tree.body for name in _bound(node)} | set(dir(builtins))
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    others = [node for node in tree.body if not isinstance(node, ast.FunctionDef)]
    tree.body = others + [_Renamed(kept | {arg.arg for arg in ast.walk(function) if isinstance(arg, ast.arg)})
                          .visit(function) for function in reversed(functions)]
    text = ast.unparse(tree)
    return re.sub(r"^(def \w+)", r"# my own work, written from scratch\n\1", text, flags=re.M) + "\n"


def _bound(node) -> list[str]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    if isinstance(node, ast.FunctionDef):
        return [node.name]
    return [target.id for target in getattr(node, "targets", []) if isinstance(target, ast.Name)]


def notebooks_of_a_renamed_copy(folder):
    folder.mkdir()
    for name in NUMPY:  # handed in as notebooks: the kit makes them modules, and compares those
        notebook = learner_notebook(registry.exercise(name), renamed_copy(reference(name)), stub=False)
        (folder / f"{name}.ipynb").write_text(notebook)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return graded_class(tmp_path_factory.mktemp("similar"), {
        "original": modules, "renamed-copy": notebooks_of_a_renamed_copy, **HONEST, "stubs-one": stubs,
        "stubs-two": stubs}, "--time-limit", "2")[0]


def test_a_renamed_copy_is_a_full_marks_student_of_its_own():
    for name in NUMPY:  # the copy is not the text it was made from: names, order and comments all differ
        copy = renamed_copy(reference(name))
        assert copy != reference(name) and "my_" in copy and "# my own work" in copy
        compile(copy, name, "exec")


def test_the_renamed_copies_are_the_one_pair(graded):
    text = (graded / "summary.md").read_text()
    section = text.split("## Work that looks handed in twice", 1)[1]
    found = re.findall(r"^- \*\*(\w+)\.py\*\*: (\S+) and (\S+), score ([\d.]+)", section, flags=re.M)
    assert {(exercise, first, second) for exercise, first, second, _ in found} == {
        (name, "original", "renamed-copy") for name in NUMPY}, section
    assert all(float(score) >= 0.8 for *_, score in found), found
    assert "evidence for a person to look at, never a grade" in section
    assert re.search(r"lines [\d–, ]+ of original's, [\d–, ]+ of renamed-copy's", section), section
    page = (graded / "summary.html").read_text()
    assert "<h2>Work that looks handed in twice</h2>" in page and page.count("original and renamed-copy") == 2
    assert "stubs-one" not in text and "honest-" not in section
    marks = {student: float(row["score"]) for student, row in rows(graded).items()}
    assert marks["renamed-copy"] == marks["original"] == MAX and all(marks[s] == MAX for s in HONEST), marks


def test_the_threshold_is_the_instructors(graded, tmp_path):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    modules(submissions / "original")
    modules(submissions / "half", {"lookup": HONEST["honest-picogpt"]["lookup"]})  # softmax copied, lookup not
    strict = cli(submissions, tmp_path / "strict", "--similarity", "1")
    assert strict.returncode == 0, strict.stderr
    said = (tmp_path / "strict" / "summary.md").read_text()
    assert "- **softmax.py**: half and original, score 1.00" in said and "**lookup.py**" not in said
    off = cli(submissions, tmp_path / "off", "--similarity", "0")
    assert "Not compared (`--similarity 0`)." in (tmp_path / "off" / "summary.md").read_text()
    wrong = cli(submissions, tmp_path / "wrong", "--similarity", "80")
    assert wrong.returncode == 2 and "--similarity" in wrong.stderr and len(wrong.stderr.strip().splitlines()) == 1


def _small_class() -> tuple[dict[str, dict[str, str]], dict[str, list[str]]]:
    """The fixture's class as similarity.pairs takes it: each student's sources, and the stubs handed out."""
    code = {"original": {name: reference(name) for name in NUMPY},
            "renamed-copy": {name: renamed_copy(reference(name)) for name in NUMPY}, **HONEST,
            "stubs-one": {name: (ASSIGNMENTS / f"{name}.py").read_text() for name in NUMPY}}
    return code, {name: [code["stubs-one"][name]] for name in NUMPY}


def test_tokens_made_in_other_processes_find_the_same_pairs(monkeypatch):
    code, handed_out = _small_class()
    here = similarity.pairs(code, handed_out)
    assert {(pair.exercise, pair.students) for pair in here} == {(name, ("original", "renamed-copy")) for name in NUMPY}
    monkeypatch.setattr(similarity, "PER_PROCESS", 1)  # a process per core for even these few texts
    monkeypatch.setattr(similarity.os, "sched_getaffinity", lambda _: {0, 1}, raising=False)
    assert similarity.pairs(code, handed_out) == here  # scores, lines and excerpts alike


def test_a_regrade_tokenises_only_what_changed(monkeypatch, tmp_path):
    code, handed_out = _small_class()
    first = similarity.pairs(code, handed_out, store=tmp_path)
    assert (tmp_path / similarity.STORE).is_file()
    tokenised = []
    made_here = similarity._tokens
    monkeypatch.setattr(similarity, "_tokens", lambda text: tokenised.append(text) or made_here(text))
    assert similarity.pairs(code, handed_out, store=tmp_path) == first and tokenised == []
    code["honest-picogpt"]["softmax"] += "\n# checked once more\nCHECKED = True\n"
    again = similarity.pairs(code, handed_out, store=tmp_path)
    assert len(tokenised) == 1 and "CHECKED = True" in tokenised[0]
    assert again == first
    monkeypatch.setattr(similarity, "_tokeniser", lambda: "another pygments")  # kept by another tokeniser: unread
    assert similarity.pairs(code, handed_out, store=tmp_path) == first and len(tokenised) > 1
    (tmp_path / similarity.STORE).write_text("{not json")
    assert similarity.pairs(code, handed_out, store=tmp_path) == first
