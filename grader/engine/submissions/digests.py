"""What a student's work is, by content: the fingerprint of a folder and the digest of a whole submission.

A kept result (:mod:`grader.engine.classes.keeper`) holds while the
:func:`fingerprint` of the folder graded is as it was: the name, size and
content digest of every file a graded copy holds, per
:func:`~grader.engine.submissions.intake.submission_files`, the links inside
it as links. A class run's record holds while the student's
:func:`work_digest` is: what their graded files hold, by content alone (a
clone made again, with new times, is the same work). Neither needs pytest
nor numpy: a class's coordinator computes digests while its judges grade.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from pathlib import Path

from grader.engine.errors import SubmissionError
from grader.engine.submissions.intake import MAX_BYTES, Student, submission_files

# A file written this recently may be written again within the file system's clock tick, keeping its size and
# time: its content is read each time. An older one is read again only when its size or times change.
RACY_SECONDS = 2.0
_DIGESTS: dict[tuple, str] = {}  # (path, device, inode, size, mtime, ctime) -> the content's digest
MAX_DIGESTS = 10_000


def fingerprint(folder: Path, times: bool = True) -> dict[str, tuple]:
    """Every entry a graded copy of ``folder`` holds, by its path inside it: what tells that anything changed.

    Reads at most what a copy may hold (:data:`~grader.engine.submissions.intake.MAX_FILES` files, :data:`MAX_BYTES`);
    a folder past that is refused when graded, and its fingerprint says only that. Without ``times``, a
    file is its size and content alone.
    """
    try:
        entries = submission_files(folder)
    except (SubmissionError, OSError) as error:
        return {"": ("unreadable", str(error))}
    found, budget = {}, MAX_BYTES
    for relative, path in entries:
        try:
            status = os.lstat(path)
            if stat.S_ISLNK(status.st_mode):
                found[str(relative)] = ("link", os.readlink(path))
            elif stat.S_ISDIR(status.st_mode):
                found[str(relative)] = ("folder",)
            elif stat.S_ISREG(status.st_mode):
                budget -= status.st_size
                digest = _digest(path, status) if budget >= 0 else "too large"
                content = (status.st_size, digest)
                found[str(relative)] = (status.st_size, status.st_mtime_ns, digest) if times else content
            else:
                found[str(relative)] = ("other", stat.S_IFMT(status.st_mode))
        except OSError as error:
            found[str(relative)] = ("unreadable", error.errno)
    return found


def work_digest(student: Student) -> str:
    """A digest of everything of ``student``'s that grading reads, by content: the files of their folder (as
    :func:`fingerprint` lists them, without times), their zip's bytes, or a flat export's files under the
    names they are graded by; and why they cannot be graded at all, where the export says so."""
    if student.files or not student.path:
        read = {name: _file_digest(Path(path)) for name, path in sorted(student.files.items())}
    elif Path(student.path).is_dir() and not Path(student.path).is_symlink():
        read = {"folder": sorted(fingerprint(Path(student.path), times=False).items())}
    else:
        read = {"entry": _file_digest(Path(student.path))}
    read["problem"], read["zipped"] = student.problem, student.zipped
    return hashlib.sha256(json.dumps(read, sort_keys=True, default=str).encode("utf-8", "surrogateescape")).hexdigest()


def _file_digest(path: Path) -> tuple:
    """One file of a student's by content: a link as itself, never followed; what cannot be read, as why."""
    try:
        status = os.lstat(path)
        if stat.S_ISLNK(status.st_mode):
            return "link", os.readlink(path)
        return (status.st_size, _digest(path, status)) if stat.S_ISREG(status.st_mode) else ("other",)
    except OSError as error:
        return "unreadable", error.errno


# Never through a link, never waiting on a pipe, bytes as they are. Windows has only O_BINARY
# (without it CRLF would be read as LF); there the lstat before has told a file from a link.
_RAW_NEVER_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def _digest(path: Path, status: os.stat_result) -> str:
    """The digest of a regular file's content, read again unless an older read still holds."""
    key = (str(path), status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    if key in _DIGESTS:
        return _DIGESTS[key]
    hashed = hashlib.sha256()
    descriptor = os.open(path, os.O_RDONLY | _RAW_NEVER_FOLLOW)
    with open(descriptor, "rb") as handle:
        while chunk := handle.read(2**16):
            hashed.update(chunk)
    digest = hashed.hexdigest()
    if time.time() - status.st_mtime_ns / 1e9 > RACY_SECONDS:
        if len(_DIGESTS) >= MAX_DIGESTS:
            _DIGESTS.clear()
        _DIGESTS[key] = digest
    return digest
