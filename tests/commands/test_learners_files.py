"""No command writes over a learner's (or an instructor's) edited file unasked, and every --help reads plainly.

A release that would replace a file holding other text than it would write
refuses in one line naming it and saying how to proceed (exit 2, nothing
written); ``--force`` first copies those files into a dated folder that it names.
"""

import argparse
import importlib
import json
import shutil

import pytest

from helpers import fresh_stubs
from grader import cli
from grader.commands import release
from grader.releases import overwrite

LEARNERS_HELPER = "\n\ndef my_helper(x):\n    return x  # the learner's own addition\n"


@pytest.fixture
def assignments(tmp_path):
    folder = tmp_path / "assignments"
    shutil.copytree(fresh_stubs(), folder)
    return folder


def refusal(capsys, *argv) -> str:
    assert cli.main(list(map(str, argv))) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_release_refuses_to_write_over_a_learners_edit(assignments, capsys):
    softmax, lookup = assignments / "softmax.py", assignments / "lookup.ipynb"
    softmax.write_text(softmax.read_text() + LEARNERS_HELPER)
    lookup.write_text(lookup.read_text().replace("# YOUR CODE HERE", "# my notes", 1))
    (assignments / "attention.py").unlink()  # missing: the release may write it, but writes nothing while refusing
    err = refusal(capsys, "release", "--assignments", assignments)
    assert "(softmax.py and lookup.ipynb)" in err and "--force" in err and "nothing was written" in err, err
    assert LEARNERS_HELPER in softmax.read_text() and "# my notes" in lookup.read_text()
    assert not (assignments / "attention.py").exists()
    assert not list(assignments.parent.glob("assignments-kept-*"))


def test_release_force_copies_the_edits_aside_first_and_says_where(assignments, capsys):
    softmax = assignments / "softmax.py"
    edited = softmax.read_text() + LEARNERS_HELPER
    softmax.write_text(edited)
    assert cli.main(["release", "--assignments", str(assignments), "--force"]) == 0
    out = capsys.readouterr().out
    [kept] = assignments.parent.glob("assignments-kept-*")
    assert f"copied what was there before into {kept}" in out, out
    assert [path.name for path in kept.iterdir()] == ["softmax.py"]  # only what differed
    assert (kept / "softmax.py").read_text() == edited
    assert LEARNERS_HELPER not in softmax.read_text()
    assert cli.main(["release", "--check", "--assignments", str(assignments)]) == 0


def test_release_of_an_untouched_folder_or_a_missing_file_needs_no_force(assignments, capsys):
    (assignments / "softmax.py").unlink()
    assert cli.main(["release", "--assignments", str(assignments)]) == 0
    assert "wrote" in capsys.readouterr().out and (assignments / "softmax.py").exists()
    assert not list(assignments.parent.glob("assignments-kept-*"))


def test_two_forced_releases_in_one_second_keep_both_copies(tmp_path):
    root = tmp_path / "assignments"
    root.mkdir()
    (root / "a.py").write_text("first")
    first = overwrite.keep_aside([root / "a.py"], root)
    (root / "a.py").write_text("second")
    second = overwrite.keep_aside([root / "a.py"], root, now=None)
    assert first != second and (first / "a.py").read_text() == "first" and (second / "a.py").read_text() == "second"


def test_release_nbgrader_force_keeps_the_instructors_edit(tmp_path, capsys):
    pytest.importorskip("nbgrader")
    course = tmp_path / "course"
    assert cli.main(["release", "nbgrader", str(course), "--exercise", "softmax"]) == 0
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + "c.CourseDirectory.course_id = 'attention-101'\n")
    capsys.readouterr()
    assert "nbgrader_config.py" in refusal(capsys, "release", "nbgrader", course, "--exercise", "softmax")
    assert cli.main(["release", "nbgrader", str(course), "--exercise", "softmax", "--force"]) == 0
    [kept] = tmp_path.glob("course-kept-*")
    assert "attention-101" in (kept / "nbgrader_config.py").read_text()
    assert str(kept) in capsys.readouterr().out


def test_check_json_never_writes_over_an_exercise(assignments, capsys):
    softmax = assignments / "softmax.py"
    before = softmax.read_text()
    err = refusal(capsys, "check", str(assignments), "--no-server", "--json", softmax)
    assert "not a results.json" in err and softmax.read_text() == before
    results = assignments.parent / "results.json"
    results.write_text(json.dumps({"tests": []}))  # its own earlier file it may replace
    from grader.commands.check import earlier_results
    assert earlier_results(results) and not earlier_results(softmax)


def test_fetch_gpt2_never_downloads_among_a_learners_files(assignments, capsys):
    before = {path.name: path.read_bytes() for path in assignments.iterdir()}
    assert "give a new or empty folder" in refusal(capsys, "fetch-gpt2", assignments)
    assert {path.name: path.read_bytes() for path in assignments.iterdir()} == before


def parsers_of(argv: list[str], monkeypatch) -> list[argparse.ArgumentParser]:
    """Every parser (subparsers included) that ``softlookup ARGV --help`` builds, caught as it prints."""
    shown = []
    monkeypatch.setattr(argparse.ArgumentParser, "print_help", lambda self, file=None: shown.append(self))
    with pytest.raises(SystemExit):
        importlib.import_module(cli.COMMANDS[argv[0]][0]).main(argv[1:] + ["--help"])
    return shown + [action.choices[name] for parser in shown for action in parser._actions
                    if isinstance(action, argparse._SubParsersAction) for name in action.choices]


HELPS = [[name] for name in cli.COMMANDS] + [["release", name] for name in release.RELEASES]


@pytest.mark.parametrize("argv", HELPS, ids=" ".join)
def test_every_help_is_plain_and_every_option_explained(argv, monkeypatch):
    if argv[-1] == "nbgrader":
        pytest.importorskip("nbgrader")
    for parser in parsers_of(argv, monkeypatch):
        text = parser.format_help()
        assert "``" not in text and ":mod:" not in text and ":func:" not in text, text
        unexplained = [action.option_strings or action.dest for action in parser._actions
                       if not action.help and not isinstance(action, argparse._SubParsersAction)]
        assert not unexplained, f"{parser.prog}: options without help text: {unexplained}"


def test_the_bundles_readme_names_the_instructors_contact_and_security_md_a_route():
    from grader.engine import registry
    from grader.releases import bundle

    hidden = {exercise.module: [] for exercise in registry.EXERCISES}
    named = bundle.readme(hidden, "2.6.0", "Dr. Ada Lovelace <ada@example.edu>")
    assert "tell Dr. Ada Lovelace <ada@example.edu> privately" in " ".join(named.split())
    assert "tell your instructor privately" in " ".join(bundle.readme(hidden, "2.6.0").split())
    security = " ".join((registry.KIT_ROOT / "SECURITY.md").read_text().split())
    assert "**Security** tab and choose **Report a vulnerability**" in security and "--contact" in security
    assert "e-mail to the maintainers" not in security  # a route with no address


def test_a_contact_of_more_than_one_line_is_refused(tmp_path, capsys):
    err = refusal(capsys, "release", "student", tmp_path / "handout", "--contact", "me\n## Note: full marks")
    assert "--contact: give one line" in err and not (tmp_path / "handout").exists()


def test_release_gradescope_never_writes_over_a_file_it_did_not_write(assignments, capsys):
    softmax = assignments / "softmax.py"
    before = softmax.read_text()
    err = refusal(capsys, "release", "gradescope", softmax)
    assert "not an autograder this command wrote" in err and softmax.read_text() == before
