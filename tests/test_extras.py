"""Each road's packages come with its extra: the core grades without them, and a missing one is one line.

A learner checking modules installs the core alone (README's quick start);
JupyterLab comes with ``notebooks``, nbgrader with ``nbgrader``, and the
kit's own tests take every road's extra. Where a road's package is missing,
the command that needs it says which extra to install, in one line.
"""

import subprocess
import sys
import tomllib

import pytest
from packaging.requirements import Requirement

from grader import cli
from grader.engine import registry
from grader.lesson import widgets
from grader.usage import EXTRAS, UsageError
from helpers import ENV, SOLUTIONS, most

PROJECT = tomllib.loads((registry.KIT_ROOT / "pyproject.toml").read_text())["project"]
ROADS = {"notebooks": {"jupyterlab", "ipykernel", "ipywidgets"}, "nbgrader": {"nbgrader"}}
# What no core command may import: every road's package, and what only the kit's tests use.
BLOCKED = ["nbgrader", "jupyterlab", "jupyter_server", "ipykernel", "ipywidgets", "nbclient", "scipy"]


def names(lines) -> set[str]:
    return {Requirement(line).name for line in lines}


def test_each_road_has_its_extra_and_the_core_none_of_them():
    extras = PROJECT["optional-dependencies"]
    for extra, packages in ROADS.items():
        assert names(extras[extra]) == packages
        assert not packages & names(PROJECT["dependencies"])
    assert all(package in ROADS[extra] for package, extra in EXTRAS.items())  # the extra its line names
    assert "softlookup[notebooks,nbgrader]" in extras["test"]  # the kit's tests cover every road


def test_the_core_grades_without_any_roads_package():
    block = f"import sys; sys.modules.update(dict.fromkeys({BLOCKED!r}))"
    done = subprocess.run([sys.executable, "-c", f"{block}; from grader.cli import main; sys.exit(main(sys.argv[1:]))",
                           "check", str(SOLUTIONS), "--exercise", "softmax"],
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert done.returncode == 0 and f"Total: {most('softmax')}/{most('softmax')}" in done.stdout, done.stdout + done.stderr


def test_an_nbgrader_course_without_nbgrader_says_which_extra(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "nbgrader", None)
    assert cli.main(["release", "nbgrader", str(tmp_path / "course")]) == 2
    assert capsys.readouterr().err == ("softlookup release: nbgrader is not installed: in the kit's folder, "
                                       "pip install -e '.[nbgrader]'\n")
    assert not (tmp_path / "course").exists()


@pytest.mark.parametrize("picture", ["house_prices", "two_number_query", "gpt2_head"])
def test_a_picture_without_ipywidgets_says_which_extra(monkeypatch, picture):
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    with pytest.raises(UsageError) as raised:
        getattr(widgets, picture)(*[None] * {"house_prices": 3}.get(picture, 1))
    assert str(raised.value) == "ipywidgets is not installed: in the kit's folder, pip install -e '.[notebooks]'"
