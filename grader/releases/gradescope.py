"""``softlookup release gradescope ZIP``: an autograder to upload to Gradescope.

Gradescope builds an image from the zip once and runs it for each
submission (https://gradescope-autograders.readthedocs.io/en/latest/specs/).
At the zip's root:

* ``setup.sh``, run once as root at build time: a Python 3.11+ venv in
  ``/autograder/venv`` with ``requirements.txt`` (every package that
  grading imports, pinned to the version installed here, torch's CPU build
  among them), then the kit from ``kit/`` and a self-test: the reference
  solutions must earn full marks with every protection in place, or the
  build fails, before any student submits;
* ``run_autograder``, run for each submission: :mod:`grader.commands.autograder`
  grades ``/autograder/submission`` with every check and writes
  ``/autograder/results/results.json``; ``SOFTLOOKUP_AUTOGRADER_ROOT``
  stands in for ``/autograder`` (the kit's tests use a temporary folder);
* ``requirements.txt``; ``kit/``: the grader package, hidden checks
  included, and ``solutions/``.

Gradescope unpacks the zip into ``/autograder/source``, open to every user:
``setup.sh`` removes what the install leaves there and closes it to other
users, and every grading closes the unpacked kit's package, solutions and
build leftovers again (:func:`grader.engine.sandbox.kit_copies`), each
worker checking that it cannot reach them: no worker, running under a uid
of its own, can read a hidden check or the reference there.
"""

from __future__ import annotations

import zipfile
from importlib.metadata import distribution
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from grader.usage import UsageError
from grader.releases import distribution as releases
from grader.engine import registry

GRADING = ["numpy", "pytest", "rich", "torch", "transformers", "nbformat"]  # what grading imports
CPU_INDEX = "https://download.pytorch.org/whl/cpu"

SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image.
set -euo pipefail
ROOT=/autograder

PYTHON=""
for candidate in python3.11 python3.12 python3.13; do
    if command -v "$candidate" >/dev/null; then PYTHON=$candidate; break; fi
done
apt-get update -qq
if [ -z "$PYTHON" ]; then
    apt-get install -y -qq python3.11
    PYTHON=python3.11
fi
apt-get install -y -qq "$PYTHON-venv"  # ensurepip, for the venv

"$PYTHON" -m venv "$ROOT/venv"
"$ROOT/venv/bin/pip" install --no-cache-dir -r "$ROOT/source/requirements.txt"
"$ROOT/venv/bin/pip" install --no-cache-dir --no-deps "$ROOT/source/kit"
# What the install leaves beside the kit's source (setuptools' build/lib and egg-info hold the hidden checks too) goes,
# and the unpacked zip (the kit's source, hidden checks and solutions included) is closed to every other user: the
# workers' uids. The kit closes it again each time it grades, and each worker checks that it cannot reach it.
rm -rf "$ROOT/source/kit/build" "$ROOT/source/kit/"*.egg-info
chmod -R go-rwx "$ROOT/source"
# Gradescope's hosts have no Landlock: each worker runs under a uid of its own, which must be able to import
# from the venv (the kit closes its own folders, the reference's and the results' to it when it grades).
chmod o+x "$ROOT"
chmod -R o+rX "$ROOT/venv"

# Here rather than at a student's submission: the reference must earn full marks, every protection holding.
"$ROOT/venv/bin/python" -I -m grader.commands.autograder selftest "$ROOT"
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for each submission: grade /autograder/submission, write /autograder/results/results.json.
ROOT="${SOFTLOOKUP_AUTOGRADER_ROOT:-/autograder}"
exec "$ROOT/venv/bin/python" -I -m grader.commands.autograder run "$ROOT"
"""

KIT_README = "The softlookup kit as Gradescope's autograder runs it: the grader package and the reference solutions.\n"


def pinned_requirements(names: list[str] = GRADING) -> list[str]:
    """``names`` and everything they need here, each pinned to its installed version; torch's CPU build."""
    pins, todo = {}, list(names)
    while todo:
        found = distribution(todo.pop())
        name = canonicalize_name(found.metadata["Name"])
        if name in pins:
            continue
        pins[name] = found.version
        for line in found.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    pins["torch"] = pins["torch"].split("+")[0] + "+cpu"
    return [f"--extra-index-url {CPU_INDEX}"] + [f"{name}=={pins[name]}" for name in sorted(pins)]


def _add(archive: zipfile.ZipFile, name: str, data: bytes, executable: bool = False):
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (0o755 if executable else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def write_zip(path: Path, solutions: Path):
    kit_files = {"kit/pyproject.toml": releases.pyproject(
                     "The softlookup grader, hidden checks included, as Gradescope runs it",
                     releases.dependencies(GRADING), [],
                     ["data/gpt2/*", "checks/pytest.ini", "checks/exercises.toml"]).encode(),
                 "kit/README.md": KIT_README.encode()}
    package = registry.PACKAGE_DIR
    for source in sorted(package.rglob("*")):
        inside = source.relative_to(package)
        if source.is_file() and not any(part == "__pycache__" or part.startswith(".") for part in inside.parts):
            kit_files[f"kit/grader/{inside}"] = source.read_bytes()  # no cache a command left in the kit
    for exercise in registry.EXERCISES:
        kit_files[f"kit/solutions/{exercise.module}.py"] = (solutions / f"{exercise.module}.py").read_bytes()
    with zipfile.ZipFile(path, "w") as archive:
        _add(archive, "setup.sh", SETUP.encode(), executable=True)
        _add(archive, "run_autograder", RUN_AUTOGRADER.encode(), executable=True)
        _add(archive, "requirements.txt", ("\n".join(pinned_requirements()) + "\n").encode())
        for name, data in kit_files.items():
            _add(archive, name, data)


def main(argv=None) -> int:
    parser, args = releases.release_arguments("softlookup release gradescope", __doc__.splitlines()[0], "zip",
                                              "the zip to write, e.g. autograder.zip", argv)
    if args.zip.is_dir() or not args.zip.parent.is_dir():
        parser.error(f"cannot write {args.zip}: give a file name in an existing folder")
    if args.zip.exists() and not earlier_autograder(args.zip):
        parser.error(f"{args.zip} exists and is not an autograder this command wrote; nothing was written: give the "
                     "name of a new file, e.g. autograder.zip")
    try:
        write_zip(args.zip, args.solutions)
    except FileNotFoundError as error:
        raise UsageError(str(error)) from None
    print(f"{wrote(args.zip)}: upload it as the assignment's autograder")
    return 0


def earlier_autograder(path: Path) -> bool:
    """Whether ``path`` is a zip this release wrote (its run_autograder at the root): the one file it may replace."""
    try:
        with zipfile.ZipFile(path) as archive:
            return {"setup.sh", "run_autograder"} <= set(archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def wrote(path: Path) -> str:
    """What the release says it wrote, and its size (the README quotes it; a test holds it)."""
    return f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)"
