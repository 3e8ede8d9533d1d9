"""A submission made into a folder of modules before the engine grades it, within one set of limits.

Whatever a student handed in (their folder, a zip, a lone zip or subfolder
inside it, a flat export's loose files, a clone of the student bundle) is
made here into the one folder that holds their exercises; the engine then
grades a private, read-only copy of that folder (:func:`copy_submission`),
so a student's workers never see the folder itself. Every road in is held to
the same :data:`MAX_FILES` and :data:`MAX_BYTES`, and nothing is followed
out of the submission: a link that leaves it, a zip member that would land
outside, a path absurdly deep or long are refused with a one-line reason.
No link on the way from the student's entry to the folder graded is
followed either (a clone whose ``assignments`` is a link to a classmate's,
a lone subfolder that is a link to the kit's ``solutions/``): the
submission is refused as ``invalid``, saying which entry is a link.
:func:`submission_files` says which files a graded copy holds, for the copy
and for whatever must tell whether the submission changed.

A :class:`Student` is what the platforms' readers (:mod:`grader.platforms`)
give the batch: where the work lies and who handed it in.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from grader.engine.errors import SubmissionError
from grader.engine.results import ErrorKind
from grader.engine.submissions import notebooks

# What a submission may come to, however it arrives (a folder, a zip, a zip in a zip, a flat export's files).
MAX_FILES = 500
MAX_BYTES = 20 * 2**20
ZIP_DEPTH = 16  # folders a zip member may sit in: an export nests its modules two or three deep
FOLDER_DEPTH = 32  # folders deep a graded copy may go (a package of packages is a few deep)
NAME_BYTES = 255  # the longest file name a file system takes
REASON_CHARS = 300  # a reason written into a student's files is one line of at most this
# What tools leave beside submissions: never a student, so left out (and named in one line before grading).
LITTER = {".DS_Store", "__MACOSX", ".Trashes", ".Spotlight-V100", ".fseventsd", ".TemporaryItems", "Thumbs.db",
          "desktop.ini", ".ipynb_checkpoints", ".git", ".gitignore", ".gitattributes", ".svn", ".hg"}


@dataclass
class Student:
    """One student as the batch grades them: where their work lies and who they are.

    ``path`` is their folder or zip. A platform that exports one flat folder
    of files (Canvas, Blackboard, Moodle's flat download) gives ``files``
    instead, each file under the name the student gave it, and no ``path``:
    the batch grades a folder made of those files alone, empty for a student
    with none. ``problem`` says why the submission cannot be graded at all.
    ``name``, ``email`` and ``late`` are what the export says, where it says it.
    """

    id: str  # clean and printable: the platform's user id, username or the folder's name
    path: str  # "" for a student of a flat export
    problem: str = ""
    zipped: bool = False  # path is a .zip to unpack
    name: str = ""
    email: str = ""
    late: bool = False
    files: dict[str, str] = field(default_factory=dict)  # name to grade the file under -> where it is


def escaped(text: str) -> str:
    """``text`` with every character that does not print (controls, lone surrogates) shown as \\xNN.

    What is left is printable and encodable as UTF-8: fit for any file and any terminal.
    """
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def is_litter(name: str) -> bool:
    """Whether an entry of the submissions folder is what a tool leaves there (macOS's ``._x`` included)."""
    return name in LITTER or name.startswith("._")


def one_line(text, limit: int = REASON_CHARS) -> str:
    """A reason to write into a student's files or onto a terminal: one line, printable, encodable, capped.

    Reasons quote what failed, and what failed may quote the student (an exception's message, a zip member's
    name): any of that may hold line breaks, control characters or a lone surrogate.
    """
    line = escaped(" ".join(str(text).split()))
    return line if len(line) <= limit else line[: limit - 1] + "…"


def described(error: BaseException) -> str:
    """An exception as one line that names it: ``UnicodeEncodeError: ...``, ``zlib.error: ...``."""
    kind = type(error)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    return one_line(f"{name}: {error}")


def exercise_folder(directory: Path) -> Path | None:
    """The folder of ``directory`` that holds exercises (modules or notebooks): itself, or its ``assignments/``.

    Found as it looks, through a link too: :func:`link_on_the_way` then says whether it may be graded.
    """
    for folder in (directory, directory / "assignments"):
        if folder.is_dir() and notebooks.chosen_sources(folder, prefer_notebooks=True):
            return folder
    return None


def link_refused(shown) -> str:
    """Why a link cannot be graded: it may point anywhere on this machine (a classmate's work, the kit's
    solutions), so it is never followed."""
    return (f"{shown} is a link, and no link is followed on the way to the files graded: put the files "
            "themselves there")


def link_on_the_way(top: Path, folder: Path) -> str:
    """Why ``folder`` cannot be graded from ``top``, the folder it was found in: an entry between them
    (``folder`` itself included, ``top`` not) that is a link; "" where none is."""
    place = top
    for part in folder.relative_to(top).parts:
        place = place / part
        if place.is_symlink():
            return link_refused(place.relative_to(top))
    return ""


def unpacked(student: Student, scratch: Path) -> Path:
    """The folder to grade: the student's own, their zip unpacked, or (a flat export's student) their files
    gathered under the names they gave them; then, as deep as an export nests it, the folder that holds the
    exercises.

    Inside, a lone subfolder is entered (student/submission/softmax.py) and a lone zip is unpacked (a
    student who uploaded their work zipped) once; a folder holding ``assignments/`` with the exercises in it
    (a clone of the student bundle) gives that. Raises ValueError, with a one-line reason, for a zip that
    cannot be read, is too large, or has a path that leaves it, goes too deep or is too long, and for a
    link on the way: the student's entry itself, a lone entry inside it, or ``assignments/``.
    """
    folder = Path(student.path)
    if student.files or not student.path:
        folder = _gathered(student.files, scratch / "files")
    elif folder.is_symlink():  # the platforms' readers refuse it first; this holds for any caller
        raise ValueError(link_refused(f"the entry {folder.name}"))
    elif student.zipped:
        folder = scratch / "unzipped"
        _unzip(Path(student.path), folder)
    zip_inside = scratch / "zip-inside"
    for _ in range(ZIP_DEPTH):
        if (found := exercise_folder(folder)) is not None:
            if problem := link_on_the_way(folder, found):
                raise ValueError(problem)
            return found
        entries = [entry for entry in folder.iterdir() if not is_litter(entry.name)
                   and not entry.name.startswith((".", "__"))] if folder.is_dir() else []
        if len(entries) != 1:
            return folder
        if entries[0].is_symlink():
            raise ValueError(link_refused(f"{entries[0].name} (the one entry of the submission's folder)"))
        if entries[0].is_dir():
            folder = entries[0]
        elif entries[0].name.lower().endswith(".zip") and not zip_inside.exists():
            _unzip(entries[0], zip_inside)
            folder = zip_inside
        else:
            return folder
    return folder


def _gathered(files: dict[str, str], folder: Path) -> Path:
    """``folder``, made of ``files`` (each name to grade it under, and where it is), within the limits.

    The names are plain file names (the platforms make sure); a link is never read through.
    """
    folder.mkdir()
    allowed = MAX_BYTES
    for name, path in files.items():
        try:
            with open(path, "rb", opener=lambda place, flags: os.open(place, flags | os.O_NOFOLLOW)) as source:
                allowed -= os.fstat(source.fileno()).st_size
                if allowed < 0:
                    raise ValueError(f"the files come to more than {MAX_BYTES // 2**20} MB")
                with open(folder / name, "wb") as sink:
                    shutil.copyfileobj(source, sink)
        except OSError as error:
            raise ValueError(f"the file {name} cannot be read ({described(error)})") from None
    return folder


class ZipRefused(ValueError):
    """A zip that can be read but is not unpacked: too large, or a path that leaves it or is absurd."""


# What reading an untrusted zip can raise: a broken archive, a compression method zipfile lacks
# (NotImplementedError), an encrypted member (RuntimeError), a corrupt stream (zlib.error, EOFError,
# OSError, lzma.LZMAError, a ValueError), a path the file system refuses (OSError).
ZIP_FAILURES = (zipfile.BadZipFile, NotImplementedError, RuntimeError, EOFError, OSError, ValueError)


def _unzip(path: Path, folder: Path):
    """Unpack the zip at ``path`` into ``folder``, member by member, within the limits.

    Every member's path is checked before anything is written, and every member is read in
    bounded chunks, so a header that lies about the sizes unpacks no more than the limit.
    """
    import lzma
    import zlib

    try:
        if path.stat().st_size > MAX_BYTES:
            raise ZipRefused(f"the zip is larger than {MAX_BYTES // 2**20} MB")
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if len(members) > MAX_FILES or sum(m.file_size for m in members) > MAX_BYTES:
                raise ZipRefused(f"the zip unpacks to more than {MAX_FILES} files or "
                                 f"{MAX_BYTES // 2**20} MB")
            places = [(member, _place(member)) for member in members]
            folder.mkdir()
            written = 0
            for member, parts in places:
                written += _extract(archive, member, folder.joinpath(*parts), MAX_BYTES - written)
    except ZipRefused:
        raise
    except (*ZIP_FAILURES, zlib.error, lzma.LZMAError) as error:
        raise ValueError(f"the zip cannot be read ({described(error)})") from None


def _place(member: zipfile.ZipInfo) -> tuple[str, ...]:
    """Where a member goes, as the folders and name under the unpacked folder; ZipRefused if nowhere safe."""
    shown = one_line(repr(member.filename), 120)
    parts = PurePosixPath(member.filename).parts
    if member.filename.startswith("/") or ".." in parts or (member.external_attr >> 28) == 0o12:
        raise ZipRefused(f"the zip holds {shown}, which would land outside it")
    if len(parts) > ZIP_DEPTH:
        raise ZipRefused(f"the zip holds a path {len(parts) - 1} folders deep ({shown}); at most {ZIP_DEPTH - 1} "
                         "are unpacked")
    if any(len(part.encode("utf-8", errors="replace")) > NAME_BYTES for part in parts):
        raise ZipRefused(f"the zip holds a name longer than {NAME_BYTES} bytes ({shown})")
    return parts


def _extract(archive: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path, allowed: int) -> int:
    """Write one member to ``target`` (a folder for a folder); the bytes written. ZipRefused past ``allowed``."""
    if member.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with archive.open(member) as source, open(target, "wb") as sink:
        while chunk := source.read(2**16):
            written += len(chunk)
            if written > allowed:
                raise ZipRefused(f"the zip unpacks to more than {MAX_BYTES // 2**20} MB")
            sink.write(chunk)
    return written


def submission_files(source: Path) -> list[tuple[Path, Path]]:
    """What a graded copy of the folder ``source`` holds: ``(path inside it, path)`` for every folder and file,
    folders first, ``__pycache__`` and hidden entries left out; a link inside is listed as itself.

    Raises SubmissionError ("invalid") past :data:`MAX_FILES` entries or :data:`FOLDER_DEPTH` folders deep: a
    submission that large is refused anyway, and nothing reads more of it than that.
    """
    found = []
    for folder, subfolders, names in os.walk(source, followlinks=False):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__" and not name.startswith("."))
        relative = Path(folder).relative_to(source)
        if subfolders and len(relative.parts) >= FOLDER_DEPTH:
            raise SubmissionError(ErrorKind.INVALID, f"{source} holds folders more than {FOLDER_DEPTH} deep: "
                                  "submit only your modules")
        found += [(relative / name, Path(folder) / name) for name in [*subfolders, *sorted(names)]
                  if not name.startswith(".")]
        if len(found) > 2 * MAX_FILES:  # folders count too, and a copy holds at most MAX_FILES files
            raise SubmissionError(ErrorKind.INVALID, f"{source} holds more than {MAX_FILES} files: submit only "
                                  "your modules")
    return found


def copy_submission(source: Path, target: Path):
    """Copy the folder ``source`` into ``target``: no link that leaves it, no hidden file, within the limits."""
    entries = submission_files(source)
    for relative, path in entries:
        if path.is_symlink():
            real = path.resolve()
            if real != source.resolve() and source.resolve() not in real.parents:
                raise SubmissionError(ErrorKind.INVALID, f"{relative} in {source} is a link to {real}, outside "
                                      "the folder: put the file itself there")
    files, size = 0, 0
    for relative, path in entries:
        if path.is_dir():  # a folder, or a link to one inside: made empty, as no link is followed
            (target / relative).mkdir()
            continue
        if not path.is_file():
            continue
        files, size = files + 1, size + path.stat().st_size
        if files > MAX_FILES or size > MAX_BYTES:
            raise SubmissionError(ErrorKind.INVALID, f"{source} holds more than {MAX_FILES} files or "
                                  f"{MAX_BYTES // 2**20} MB: submit only your modules")
        shutil.copyfile(path, target / relative)
