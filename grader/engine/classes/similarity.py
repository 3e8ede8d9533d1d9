"""Work handed in twice: pairs of students whose code for an exercise is alike beyond chance.

Evidence for a person to look at, never a grade: nothing here changes a
score. The fingerprints are copydetect's (winnowed k-grams of the code as
pygments tokenises it, every name made one symbol, comments and whitespace
dropped, every string one symbol), so renamed variables, reordered functions,
changed comments and a reformatting change nothing; a module made from a
notebook (:mod:`grader.engine.notebooks`) is fingerprinted like any module.

Only the learner's own code counts. Whatever the instructor handed out (the
stub module, its docstrings, the notebook's cells) is boilerplate, removed
from every fingerprint, so two untouched stubs share nothing. And code that
many students wrote alike (``np.exp(x - x.max(...))``) is what the lesson
teaches, not evidence: a fingerprint found in more than :data:`COMMON_SHARE`
of the class (and in more than :data:`COMMON_LEAST` students) is dropped too, as MOSS drops
passages that appear in many submissions. A pair is reported where the code
they share is at least ``threshold`` of either one's remaining code, and at
least :data:`MIN_SHARED` characters of it once names are made symbols.

Sources are read as the judge reads them (:func:`grader.engine.intake.unpacked`,
notebooks made into modules), never run, never through a link, each capped
at :data:`MAX_SOURCE` bytes.
"""

from __future__ import annotations

import io
import itertools
import os
import stat
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from grader.engine import intake, notebooks
from grader.engine.intake import Student

DEFAULT_THRESHOLD = 0.8  # the share of a student's own code found in the other's: `softlookup grade --similarity`
K = 25  # copydetect's noise threshold: a match shorter than this many characters (names made symbols) is no match
WINDOW = 1  # every k-gram kept: the exercises are short, and a winnowing window would only lose matches
COMMON_SHARE = 0.1  # a fingerprint in more than this share of the class (and of COMMON_LEAST students) is common
COMMON_LEAST = 5  # code, not evidence: below it, a ring of copies in a small class would pass for common code
MIN_SHARED = 60  # characters of shared code (names made symbols) below which no pair is reported, however alike
MAX_SOURCE = 1 << 20  # bytes of a module read: a student's file is larger only to be in the way


@dataclass
class Pair:
    """Two students whose code for ``exercise`` is alike: the score, and the lines each has of what they share."""

    exercise: str
    students: tuple[str, str]
    score: float  # the larger of the two shares: how much of one student's own code the other's holds
    lines: tuple[list[tuple[int, int]], list[tuple[int, int]]]  # each student's shared line ranges, from 1
    excerpt: str  # the longest shared passage, as the first student wrote it


def sources(student: Student, modules: list[str]) -> dict[str, str]:
    """The student's code for each of ``modules`` that they handed in, as the judge grades it ({} where none
    can be read: the gradebook says why)."""
    found = {}
    with tempfile.TemporaryDirectory(prefix="softlookup-similar-", ignore_cleanup_errors=True) as scratch:
        try:
            folder = intake.unpacked(student, Path(scratch)) if not student.problem else None
        except ValueError:
            folder = None
        if folder is None:
            return found
        try:
            with notebooks.module_folder(folder, keep_going=True) as made:
                for module in modules:
                    if (text := _read(Path(made) / f"{module}.py")) is not None:
                        found[module] = text
        except (OSError, ValueError, notebooks.NotebookError):
            return found
    return found


def _read(path: Path) -> str | None:
    """A regular file's text, never through a link, capped; None for anything else."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        return handle.read(MAX_SOURCE).decode("utf-8", "replace")


def pairs(code: dict[str, dict[str, str]], boilerplate: dict[str, list[str]],
          threshold: float = DEFAULT_THRESHOLD) -> list[Pair]:
    """Every pair of students alike beyond chance in some exercise, the most alike first.

    ``code`` maps each student to their sources by module; ``boilerplate`` maps each module to the texts
    handed out for it (the stub, the notebook's code), whose fingerprints count for nothing.
    """
    found = []
    for module in sorted({module for modules in code.values() for module in modules}):
        written = {student: modules[module] for student, modules in code.items() if module in modules}
        found += _alike(module, written, boilerplate.get(module, []), threshold)
    return sorted(found, key=lambda pair: (-pair.score, pair.exercise, pair.students))


def _alike(module: str, written: dict[str, str], handed_out: list[str], threshold: float) -> list[Pair]:
    from copydetect import CodeFingerprint, compare_files
    from copydetect.utils import get_token_coverage

    def fingerprint(text: str, ignored=()):  # Python's tokeniser named, not looked up by file name (1 ms a file)
        return CodeFingerprint(f"{module}.py", K, WINDOW, boilerplate=list(ignored), fp=io.StringIO(text),
                               language="python")

    handed = set().union(*(fingerprint(text).hashes for text in handed_out))
    given = {line.strip() for text in handed_out for line in text.splitlines()} - {""}
    made: dict[str, object] = {}  # own code -> its fingerprint: an untouched stub, or a file handed in twice, once
    prints = {}
    for student, text in written.items():
        if (own := _own(text, given)).strip():
            if own not in made:
                made[own] = fingerprint(own, handed)
            prints[student] = made[own]
    counts = Counter(digest for print_ in prints.values() for digest in print_.hashes)
    common = {digest for digest, many in counts.items() if many > max(COMMON_LEAST, COMMON_SHARE * len(prints))}
    for print_ in prints.values():  # as if common code were boilerplate too
        print_.hashes -= common
        print_.hash_idx = {digest: where for digest, where in print_.hash_idx.items() if digest not in common}
        print_.token_coverage = get_token_coverage(print_.hash_idx, K, len(print_.filtered_code))
    holders: dict[int, list[str]] = {}
    for student, print_ in prints.items():
        for digest in print_.hashes:
            holders.setdefault(digest, []).append(student)
    candidates = Counter(pair for students in holders.values() for pair in itertools.combinations(sorted(students), 2))
    found, compared = [], {}  # the same two texts (handed in by several students) compared once
    for (first, second), shared in candidates.items():  # only students who share a fingerprint are compared
        one, other = prints[first], prints[second]
        if shared < threshold / 2 * min(len(one.hashes), len(other.hashes)):  # far fewer than a pair could share
            continue
        if (id(one), id(other)) not in compared:
            compared[id(one), id(other)] = compare_files(one, other)
        overlap, shares, slices = compared[id(one), id(other)]
        score = float(max(shares))
        if score >= threshold and overlap >= MIN_SHARED:
            found.append(Pair(module, (first, second), score,
                              (_line_ranges(one.raw_code, slices[0]), _line_ranges(other.raw_code, slices[1])),
                              _excerpt(one.raw_code, slices[0])))
    return found


def _own(text: str, given: set[str]) -> str:
    """``text`` with every line the instructor handed out blank (the docstrings, the signatures): what is left
    is the learner's own, on the lines where they wrote it, and the tokeniser reads a third as much."""
    return "\n".join("" if line.strip() in given else line for line in text.split("\n"))


def _line_ranges(text: str, slices) -> list[tuple[int, int]]:
    """The lines of ``text`` that copydetect's slices (character starts, then ends) cover, merged, from 1."""
    ranges: list[tuple[int, int]] = []
    for start, end in sorted(zip(slices[0], slices[1])):
        first, last = text.count("\n", 0, int(start)) + 1, text.count("\n", 0, max(int(end) - 1, int(start))) + 1
        if ranges and first <= ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], last))
        else:
            ranges.append((first, last))
    return ranges


def _excerpt(text: str, slices, lines: int = 8) -> str:
    """The longest shared passage of ``text``, whole lines, at most ``lines`` of them."""
    start, end = max(zip(slices[0], slices[1]), key=lambda span: span[1] - span[0])
    begin = text.rfind("\n", 0, int(start)) + 1
    return "\n".join(text[begin:int(end)].splitlines()[:lines])
