"""Work handed in twice: pairs of students whose code for an exercise is alike beyond chance.

Evidence for a person to look at, never a grade: nothing here changes a
score. The fingerprints are copydetect's (winnowed k-grams of the code as
pygments tokenises it, every name made one symbol, comments and whitespace
dropped, every string one symbol), so renamed variables, reordered functions,
changed comments and a reformatting change nothing; a module made from a
notebook (:mod:`grader.engine.submissions.notebooks`) is fingerprinted like any module.

Only the learner's own code counts. Whatever the instructor handed out (the
stub module, its docstrings, the notebook's cells) is boilerplate, removed
from every fingerprint, so two untouched stubs share nothing. And code that
many students wrote alike (``np.exp(x - x.max(...))``) is what the lesson
teaches, not evidence: a fingerprint found in more than :data:`COMMON_SHARE`
of the class (and in more than :data:`COMMON_LEAST` students) is dropped too, as MOSS drops
passages that appear in many submissions. A pair is reported where the code
they share is at least ``threshold`` of either one's remaining code, and at
least :data:`MIN_SHARED` characters of it once names are made symbols.

Sources are read as the judge reads them (:func:`grader.engine.submissions.intake.unpacked`,
notebooks made into modules), never run, never through a link, each capped
at :data:`MAX_SOURCE` bytes.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import stat
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.engine.results import write_atomically
from grader.engine.submissions import intake, notebooks
from grader.engine.submissions.intake import Student

if TYPE_CHECKING:  # numpy is imported where texts are compared, not by the coordinator that imports this module
    import numpy as np

DEFAULT_THRESHOLD = 0.8  # the share of a student's own code found in the other's: `softlookup grade --similarity`
K = 25  # copydetect's noise threshold: a match shorter than this many characters (names made symbols) is no match
WINDOW = 1  # every k-gram kept: the exercises are short, and a winnowing window would only lose matches
COMMON_SHARE = 0.1  # a fingerprint in more than this share of the class (and of COMMON_LEAST students) is common
COMMON_LEAST = 5  # code, not evidence: below it, a ring of copies in a small class would pass for common code
MIN_SHARED = 60  # characters of shared code (names made symbols) below which no pair is reported, however alike
MAX_SOURCE = 1 << 20  # bytes of a module read: a student's file is larger only to be in the way
PER_PROCESS = 100  # texts to tokenise per process started (~0.3 s to start one, ~6 ms a text): fewer, tokenised here
STORE = ".similarity-tokens.json"  # in the class's --out folder: each text's tokens, by digest, for the next run


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
          threshold: float = DEFAULT_THRESHOLD, store: Path | None = None) -> list[Pair]:
    """Every pair of students alike beyond chance in some exercise, the most alike first.

    ``code`` maps each student to their sources by module; ``boilerplate`` maps each module to the texts
    handed out for it (the stub, the notebook's code), whose fingerprints count for nothing. ``store``: a
    folder (the class's --out) where each text's tokens are kept, so that a regrade tokenises only what changed.
    """
    own = {}
    for module in sorted({module for modules in code.values() for module in modules}):
        given = {line.strip() for text in boilerplate.get(module, []) for line in text.splitlines()} - {""}
        own[module] = {student: mine for student, modules in code.items()
                       if module in modules and (mine := _own(modules[module], given)).strip()}
    kept = _kept(store)
    jobs = [(module, written, boilerplate.get(module, []), threshold,
             {digest: kept[digest] for text in [*written.values(), *boilerplate.get(module, [])]
              if (digest := _digest(text)) in kept})
            for module, written in own.items()]
    found, tokens, made_any = [], {}, False
    for module_pairs, module_tokens, made in _each_module(jobs):
        found += module_pairs
        tokens.update(module_tokens)
        made_any = made_any or made
    if store is not None and made_any:
        try:  # this run's texts only: a student's earlier versions go
            write_atomically(store / STORE, json.dumps({"tokeniser": _tokeniser(), "tokens": {
                digest: [filtered, offsets.tolist()] for digest, (filtered, offsets) in tokens.items()}}))
        except OSError:  # a full disk costs the next run its time, never this run its pairs
            pass
    return sorted(found, key=lambda pair: (-pair.score, pair.exercise, pair.students))


def _each_module(jobs: list[tuple]) -> list[tuple[list[Pair], dict, bool]]:
    """:func:`_module_pairs` of each job, in a process per core where there are enough texts to be worth the
    start: an exercise's files are only ever compared with each other, so each exercise is a job of its own,
    fingerprinted and compared in one process (the fingerprints are Python's ``hash``, the same only within
    one interpreter)."""
    texts = sum(len(written) for _, written, *_ in jobs)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    workers = min(cores, len(jobs), texts // PER_PROCESS)
    if workers < 2:
        return [_module_pairs(job) for job in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # forkserver: each process forked from a fresh interpreter that imported copydetect once (half a second:
    # it imports matplotlib), never from this one, whose threads (a pipe's reader) may hold a lock
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["copydetect", "copydetect.utils"])
    biggest_first = sorted(range(len(jobs)), key=lambda index: -sum(map(len, jobs[index][1].values())))
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        done = dict(zip(biggest_first, pool.map(_module_pairs, [jobs[index] for index in biggest_first])))
    return [done[index] for index in range(len(jobs))]


def _module_pairs(job: tuple) -> tuple[list[Pair], dict[str, tuple[str, np.ndarray]], bool]:
    """One exercise's pairs, every one of its texts' tokens by digest, and whether any had to be made."""
    import numpy as np  # as copydetect's offsets are

    module, written, handed_out, threshold, kept = job
    tokens, made = {}, False
    for text in {*written.values(), *handed_out}:
        digest = _digest(text)
        if digest not in kept:
            kept[digest], made = _tokens(text), True
        tokens[text] = (kept[digest][0], np.asarray(kept[digest][1], dtype=np.int64))
    return (_alike(module, written, handed_out, threshold, tokens),
            {_digest(text): made_tokens for text, made_tokens in tokens.items()}, made)


def _digest(text: str) -> str:
    """What a text's tokens are kept under: its SHA-256."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _kept(store: Path | None) -> dict[str, tuple[str, list]]:
    """The tokens an earlier run kept in ``store``, if the same tokeniser made them; {} for anything else."""
    try:
        with open(store / STORE, encoding="utf-8") as handle:
            kept = json.load(handle)
        if kept["tokeniser"] == _tokeniser():
            return {digest: (filtered, offsets) for digest, (filtered, offsets) in kept["tokens"].items()}
    except (TypeError, OSError, ValueError, KeyError):  # none kept (or no store), or not this file's shape
        pass
    return {}


def _tokeniser() -> str:
    """What the tokens depend on besides the text: copydetect's and pygments' versions."""
    from importlib.metadata import version

    return f"copydetect {version('copydetect')}, pygments {version('pygments')}"


def _tokens(text: str) -> tuple[str, np.ndarray]:
    """``text`` tokenised as copydetect tokenises a Python file (its lexer named, not looked up by file name)."""
    from copydetect.utils import filter_code

    return filter_code(text, "module.py", "python")


def _alike(module: str, written: dict[str, str], handed_out: list[str], threshold: float,
           tokens: dict[str, tuple[str, np.ndarray]]) -> list[Pair]:
    """The pairs among ``written`` (each student's own code for ``module``, the handed-out lines blank)."""
    from copydetect import CodeFingerprint, compare_files
    from copydetect.utils import get_token_coverage

    def fingerprint(text: str, ignored=()):
        """copydetect's fingerprint of ``text`` from its tokens: what CodeFingerprint(fp=text) makes, untokenised."""
        filtered, offsets = tokens[text]
        made = CodeFingerprint(f"{module}.py", K, WINDOW, boilerplate=list(ignored), filter=False,
                               fp=io.StringIO(filtered))
        made.raw_code, made.offsets = text, offsets
        return made

    handed = set().union(*(fingerprint(text).hashes for text in handed_out))
    made: dict[str, object] = {}  # own code -> its fingerprint: an untouched stub, or a file handed in twice, once
    prints = {}
    for student, own in written.items():
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
