"""What the releases made from the kit have in common: the package's files, and a pyproject for them.

A student bundle and a Gradescope autograder are each a pip-installable copy
of part of the ``grader`` package. The dependencies come from the kit's own
pyproject.toml (one list to keep up to date), filtered to what each release needs.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

from grader.engine import registry
from grader.usage import Parser

PYPROJECT = '''[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "softlookup"
version = {version}
description = {description}
readme = "README.md"
requires-python = {python}
license = "MIT"
dependencies = [
{dependencies}
]

[project.scripts]
softlookup = "grader.cli:main"

[project.entry-points.pytest11]
softlookup = "grader.engine.plugin"
softlookup-table = "grader.reports.pytest_table"

[tool.setuptools]
py-modules = {modules}

[tool.setuptools.packages.find]
include = ["grader*"]

[tool.setuptools.package-data]
grader = {package_data}
'''


def kit_project() -> dict:
    """The kit's own pyproject.toml, as data."""
    return tomllib.loads((registry.KIT_ROOT / "pyproject.toml").read_text())


def dependencies(names: list[str], pins: dict[str, str] | None = None) -> list[str]:
    """The kit's requirement for each of ``names``, or ``name==pin`` where ``pins`` names a version. A release
    has no extras: it depends on what it needs, be it in the kit's core or in one of its roads' extras."""
    project = kit_project()["project"]
    lines = [*project["dependencies"], *(line for extra in project["optional-dependencies"].values() for line in extra)]
    kit = {Requirement(line).name: line for line in lines}
    pins = pins or {}
    return [f"{name}=={pins[name]}" if name in pins else kit[name] for name in names]


def pyproject(description: str, requirements: list[str], modules: list[str], package_data: list[str]) -> str:
    project = kit_project()["project"]
    return PYPROJECT.format(
        version=json.dumps(project["version"]), description=json.dumps(description),
        python=json.dumps(project["requires-python"]),
        dependencies="\n".join(f"    {json.dumps(line)}," for line in requirements),
        modules=json.dumps(modules), package_data=json.dumps(package_data))


# What commands leave in the kit's folders (Python's, pytest's, Jupyter's caches): never part of a release.
CACHES = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".ipynb_checkpoints")


def copy_files(names: list[str], source: Path, target: Path) -> list[Path]:
    """Copy each relative path in ``names`` (a file, or a folder without its caches) from ``source`` to ``target``."""
    written = []
    for name in names:
        origin, destination = source / name, target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_dir():
            shutil.copytree(origin, destination, ignore=CACHES)
            written += [path for path in destination.rglob("*") if path.is_file()]
        else:
            shutil.copyfile(origin, destination)
            written.append(destination)
    return written


SOLUTIONS_HELP = "the reference solutions to release from (default: the kit's solutions/)"


def release_arguments(prog: str, description: str, target: str, help: str, argv, more=None):
    """``softlookup release NAME TARGET [--solutions DIR]`` parsed: (parser, args); a missing solutions folder refused.
    ``more(parser)`` adds a release's own options."""
    parser = Parser(prog=prog, description=description)
    parser.add_argument(target, type=Path, help=help)
    parser.add_argument("--solutions", type=Path, default=registry.SOLUTIONS_DIR, metavar="DIR", help=SOLUTIONS_HELP)
    if more is not None:
        more(parser)
    args = parser.parse_args(argv)
    if not args.solutions.is_dir():
        parser.error(f"{args.solutions} is not a folder of solutions (give --solutions DIR)")
    return parser, args
