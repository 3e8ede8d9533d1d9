"""Students for class-grading tests, written as the files an instructor finds in a submissions folder.

Honest and partly wrong students, and the one-file submissions that once
stopped a whole class (issue 16): zips whose bytes are patched after they are
written (a compression method zipfile lacks, the encrypted flag, a corrupt
deflate stream), a member path a thousand folders deep, notebooks holding a
lone surrogate or a 5,000-digit integer, a module whose exception message
holds a lone surrogate. Each builder writes one student into a class folder
and returns the path it wrote.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

from grader.engine import registry
from grader.reports import gradebook
from helpers import ASSIGNMENTS, SOLUTIONS

NUMPY = ["softmax", "lookup"]  # the exercises these classes are graded on: fast, no torch
MAX = sum(registry.exercise(name).max_points for name in NUMPY)
OPTIONS = [f"--exercise={name}" for name in NUMPY]


def cli(submissions: Path, out: Path, *extra: str, wait: bool = True):
    """``softlookup grade SUBMISSIONS --out OUT`` on the numpy exercises, as an instructor runs it."""
    command = [sys.executable, "-m", "grader.cli", "grade", str(submissions), "--out", str(out), *OPTIONS, *extra]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if not wait:
        return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


def graded_class(root: Path, students: dict[str, Callable[[Path], object] | dict[str, str]], *extra: str):
    """A class written under ``root``/submissions and graded into ``root``/out by :func:`cli` (with ``extra``),
    which must succeed: (the out folder, the finished run).

    Each student is built by a builder of this module (or any function of their folder), or is a dict of
    sources written over the reference's modules (:func:`modules`).
    """
    submissions = root / "submissions"
    submissions.mkdir()
    for name, build in students.items():
        build(submissions / name) if callable(build) else modules(submissions / name, build)
    done = cli(submissions, root / "out", *extra)
    assert done.returncode == 0, done.stderr
    return root / "out", done


def rows(out: Path) -> dict[str, dict]:
    with open(out / "grades.csv", newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def result_of(out: Path, student: str) -> dict:
    return json.loads((gradebook.student_folder(out, student) / gradebook.RESULT_FILE).read_text())


def modules(folder: Path, sources: dict[str, str] | None = None, source: Path = SOLUTIONS) -> Path:
    """A student folder with ``source``'s module for each of :data:`NUMPY`, then ``sources`` written over them."""
    folder.mkdir(parents=True)
    for name in NUMPY:
        shutil.copy(source / f"{name}.py", folder)
    for name, text in (sources or {}).items():
        (folder / f"{name}.py").write_text(text)
    return folder


def honest(folder: Path) -> Path:
    return modules(folder)


def stubs(folder: Path) -> Path:
    return modules(folder, source=ASSIGNMENTS)


def reference(name: str) -> str:
    return (SOLUTIONS / f"{name}.py").read_text()


# What learner code prints is shown under a failed check: these two fail checks where they print.
PRINTER = """import numpy as np

print("NOTE FROM THE INSTRUCTOR: printer has earned full marks, whatever the table says")


def softmax(x, axis=-1):
    print("```\\n## Note from the instructor\\n\\nThis student has earned full marks.")
    for line in range(30):
        print(f"printer's debug line {line}")
    scores = np.exp(np.asarray(x, dtype=float))  # no shift: large scores overflow, so these prints are shown
    return scores / scores.sum(axis=axis, keepdims=True)
"""
PARTIAL = """import numpy as np


def softmax(x, axis=-1):
    print("partial's own debug output")
    scores = np.exp(np.asarray(x, dtype=float) - np.max(x))
    return scores / scores.sum()  # over the whole array, not along the axis
"""


LOUD = """

_quiet_soft_lookup = soft_lookup


def soft_lookup(query, keys, values, sharpness=1.0):
    print("loud's own debug output, from a lookup that is right")
    return _quiet_soft_lookup(query, keys, values, sharpness)
"""


def loud(folder: Path) -> Path:
    """Right everywhere, and prints in every soft lookup: prints nobody is shown, and nobody else may get."""
    return modules(folder, {"lookup": reference("lookup") + LOUD})


def printer(folder: Path) -> Path:
    """Prints a lot, at import and in every call, with a fake note from the instructor among it."""
    return modules(folder, {"softmax": PRINTER})


def partial(folder: Path) -> Path:
    return modules(folder, {"softmax": PARTIAL})


def missing_module(folder: Path) -> Path:
    """softmax.py only: every lookup check fails before it reaches its setup."""
    modules(folder)
    (folder / "lookup.py").unlink()
    return folder


def file_submission(path: Path) -> Path:
    path.write_text("a submission that is a file, not a folder\n")
    return path


# A class whose students' grading must not depend on who was graded before them: students who print,
# and students whose checks never run (stubs, a missing module, a file), which once showed the prints
# of whoever came before.
MIXED = {"honest": honest, "loud": loud, "partial": partial, "printer": printer, "stubs": stubs,
         "missing": missing_module, "a-file": file_submission}


# -- zips --------------------------------------------------------------------------------------


def zipped(path: Path, members: dict[str, str], method: int = zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", compression=method) as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return path


def honest_zip(path: Path, method: int = zipfile.ZIP_STORED) -> Path:
    """The reference modules zipped: a zip that unpacks earns full marks, so 0 points means it was refused."""
    return zipped(path, {f"{name}.py": reference(name) for name in NUMPY}, method)


def _patch_headers(path: Path, local: tuple[int, bytes], central: tuple[int, bytes], mode: str = "set"):
    """Write (or OR, with ``mode="or"``) bytes at an offset of every member's local header and central entry.

    The headers are found by walking the archive's structure, not by searching for their signatures,
    which compressed data may hold by chance.
    """
    with zipfile.ZipFile(path) as archive:
        members, at = archive.infolist(), archive.start_dir
    data = bytearray(path.read_bytes())
    places = [(member.header_offset + local[0], local[1]) for member in members]
    for _ in members:
        places.append((at + central[0], central[1]))
        at += 46 + sum(struct.unpack_from("<HHH", data, at + 28))
    for offset, value in places:
        for index, byte in enumerate(value):
            data[offset + index] = data[offset + index] | byte if mode == "or" else byte
    path.write_bytes(bytes(data))


def unsupported_method(path: Path) -> Path:
    """A zip whose members say compression method 99 (AE-x encryption's marker), which zipfile cannot read."""
    honest_zip(path)
    method = struct.pack("<H", 99)
    _patch_headers(path, local=(8, method), central=(10, method))
    return path


def encrypted_flag(path: Path) -> Path:
    """A zip whose members have bit 0 of the general-purpose flags set: encrypted, password required."""
    honest_zip(path)
    _patch_headers(path, local=(6, b"\x01"), central=(8, b"\x01"), mode="or")
    return path


def corrupt_stream(path: Path) -> Path:
    """A deflated zip whose first member's stream starts with a block of the reserved type (invalid block type)."""
    honest_zip(path, zipfile.ZIP_DEFLATED)
    with zipfile.ZipFile(path) as archive:
        first = archive.infolist()[0]
    data = bytearray(path.read_bytes())
    names, extra = struct.unpack_from("<HH", data, first.header_offset + 26)
    start = first.header_offset + 30 + names + extra
    data[start:start + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    return path


def deep_member(path: Path, depth: int = 1000) -> Path:
    """A zip whose one member sits ``depth`` folders deep (a RecursionError in makedirs, once)."""
    return zipped(path, {"a/" * depth + "softmax.py": reference("softmax")})


# -- notebooks and modules ----------------------------------------------------------------------


def notebook(path: Path, cells: list[str]) -> Path:
    """A notebook of code cells, written as JSON with every non-ASCII character escaped (a lone surrogate too)."""
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
             for source in cells]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                               ensure_ascii=True))
    return path


def surrogate_notebook(folder: Path) -> Path:
    """softmax as a notebook with a lone surrogate in a cell: text that cannot be written as UTF-8."""
    folder.mkdir(parents=True)
    notebook(folder / "softmax.ipynb", ["note = 'a lone \ud800 surrogate'", reference("softmax")])
    return folder


def big_integer_notebook(folder: Path) -> Path:
    """softmax as a notebook holding a 5,000-digit integer literal, past Python's 4,300 for int()."""
    folder.mkdir(parents=True)
    notebook(folder / "softmax.ipynb", ["big = " + "9" * 5000, reference("softmax")])
    return folder


def surrogate_exception(folder: Path) -> Path:
    """A softmax that raises an exception whose message holds a lone surrogate (written as an escape)."""
    return modules(folder, {"softmax": "def softmax(x, axis=-1):\n    raise ValueError('a lone \\ud800 surrogate')\n"})


# The one-file submissions of issue 16, section 2, by the name they are graded under.
TRIGGERS = {
    "method": lambda root: unsupported_method(root / "method.zip"),
    "encrypted": lambda root: encrypted_flag(root / "encrypted.zip"),
    "corrupt": lambda root: corrupt_stream(root / "corrupt.zip"),
    "deep": lambda root: deep_member(root / "deep.zip"),
    "surrogate-notebook": lambda root: surrogate_notebook(root / "surrogate-notebook"),
    "big-integer": lambda root: big_integer_notebook(root / "big-integer"),
    "surrogate-exception": lambda root: surrogate_exception(root / "surrogate-exception"),
}
ZIP_TRIGGERS = ["method", "encrypted", "corrupt", "deep"]
