"""What workers leave on disk: a scratch folder bounded while its worker runs, and everything removed after.

Each worker works in a scratch folder of its own. Where the worker gets a
mount namespace, the folder is a tmpfs capped in bytes and files
(:func:`grader.engine.confinement.confine.enter_namespaces`): the kernel holds the bound.
Where it gets none (Docker's default profile, a non-root pod, Ubuntu 24.04 as
a user) the folder is a plain one on the grader's disk, where only the size
of each file is limited (RLIMIT_FSIZE), so the judge measures it instead
(:class:`ScratchBound`): what the folder holds, and what the worker holds open
in it after removing its name, while it waits on the worker and when a call
ends, at most every :data:`LOOK_EVERY` seconds; a worker past the bound is
stopped, and its check says why.

Whatever a worker left, however it set the modes (a folder with every right
taken off, read-only files), :func:`remove_tree` removes it; what a run killed
outright could not remove, a later run does (:func:`remove_abandoned`), found
by the pid and start time of the process that made it, never a live run's.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

from grader.engine.confinement import system
from grader.engine.confinement.policy import SCRATCH_BYTES, SCRATCH_FILES

LOOK_EVERY = 0.1  # seconds between two measurements while the judge waits on a worker
# At a call's end the judge looks again once this much time has passed since its last look: a fast disk takes
# about 10 MB in 2 ms, so a worker can never be more than that past its bound unseen, however quick its calls;
# many quick calls in a row still share one look.
LOOK_AT_THE_END_AFTER = 0.002
PREFIX = "softlookup-"


def run_prefix(kind: str = "") -> str:
    """The name a temporary folder of this run's starts with (``softlookup-PID-START-[KIND-]``), so that a later
    run may remove it once this process is gone: the pid and its start time name the run, so a pid given to
    another process later does not keep the folder alive."""
    return f"{PREFIX}{os.getpid()}-{system.start_time(os.getpid()) or 0}-{kind + '-' if kind else ''}"


def run_folder(kind: str = "") -> Path:
    """A new temporary folder of this run's (:func:`run_prefix`)."""
    return Path(tempfile.mkdtemp(prefix=run_prefix(kind)))


def remove_abandoned():
    """Remove the folders of runs whose process is gone (killed before it could clean up), never a live run's."""
    for folder in Path(tempfile.gettempdir()).glob(PREFIX + "*-*"):
        parts = folder.name.split("-")
        if not parts[1].isdigit():
            continue  # not a run's folder (a test's, another tool's)
        started = int(parts[2]) if len(parts) > 3 and parts[2].isdigit() else None
        if _run_over(int(parts[1]), started):
            remove_tree(folder)


def _run_over(pid: int, started: int | None) -> bool:
    if not system.alive(pid):
        return True
    now = system.start_time(pid)
    return bool(started) and now is not None and now != started  # the pid now names another process


def remove_tree(path: Path) -> bool:
    """Remove ``path`` whole, whatever modes a worker set on what it left; False where something stayed (a later
    run tries again). Never raises: a folder that cannot be removed is no student's failure, and no one else's."""
    for opened in (False, True):
        if opened:  # the first try met a folder the worker closed: every folder's rights given back, once
            _open_up(path)
        try:
            shutil.rmtree(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            continue
    return False


def _open_up(path: Path):
    """Give the owner every right on each folder under ``path``, so that it can be listed and emptied: a worker
    runs as the grader's uid (or root grades), so the grader owns them or needs no rights at all."""
    folders = [str(path)]
    while folders:
        folder = folders.pop()
        try:
            os.chmod(folder, stat.S_IRWXU)
            with os.scandir(folder) as entries:
                folders += [entry.path for entry in entries if entry.is_dir(follow_symlinks=False)]
        except OSError:
            continue


def _listing(folder: str):
    """``os.scandir(folder)``; where the worker took the rights off a folder of its own, given back first."""
    try:
        return os.scandir(folder)
    except PermissionError:
        _open_up(Path(folder))
        return os.scandir(folder)


class ScratchBound:
    """The judge's bound on one worker's scratch folder where no kernel holds one: :meth:`exceeded` says, in
    words, what the worker holds past :data:`SCRATCH_BYTES` or :data:`SCRATCH_FILES`, or "" while within them.

    What it counts: every file and folder under the scratch folder, by the blocks each takes on disk, and the
    files the worker holds open there with their names removed (``/proc/PID/fd``). A file it maps into memory
    counts against its memory limit (RLIMIT_AS) instead.
    """

    def __init__(self, folder: Path, pid: int | None, max_bytes: int = SCRATCH_BYTES,
                 max_files: int = SCRATCH_FILES):
        self.folder, self.pid, self.max_bytes, self.max_files = folder, pid, max_bytes, max_files
        self.looked_at = 0.0

    def due(self, every: float = LOOK_EVERY) -> bool:
        """Whether ``every`` seconds have passed since the last look: a look costs a walk of the folder and of the
        worker's descriptors (45 µs), a tenth of a short call, so calls in quick succession share one."""
        return time.monotonic() - self.looked_at >= every

    def watching(self, meter) -> "Watched":
        """A call's deadline (a :class:`~grader.engine.confinement.clock.Meter`) that also ends once the folder is
        past the bound: the judge looks each time it waits on the worker, at most every :data:`LOOK_EVERY` seconds."""
        return Watched(meter, self)

    def exceeded(self) -> str:
        self.looked_at = time.monotonic()
        opened = self._held_open()
        if opened is None:
            return "hid the files it holds open from the grader, which could not measure its scratch folder"
        held, files = opened
        if held > self.max_bytes or files > self.max_files:
            return self._words()
        folders = [str(self.folder)]
        while folders:
            folder = folders.pop()
            try:
                entries = _listing(folder)
            except OSError:
                continue
            with entries:
                for entry in entries:  # one by one: a folder of a million names is not read whole
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    held, files = held + info.st_blocks * 512, files + 1
                    if stat.S_ISDIR(info.st_mode):
                        folders.append(entry.path)
                    if held > self.max_bytes or files > self.max_files:
                        return self._words()
        return ""

    def _held_open(self) -> tuple[int, int] | None:
        """(bytes, files) of the files the worker holds open with every name of theirs removed; None where the
        worker hid its descriptors (a process that made itself undumpable shows them to root alone)."""
        held = files = 0
        if not self.pid:
            return held, files
        try:
            descriptors = os.listdir(f"/proc/{self.pid}/fd")
        except PermissionError:
            return None
        except OSError:  # gone, or no /proc (not Linux)
            return held, files
        for descriptor in descriptors:
            try:
                info = os.stat(f"/proc/{self.pid}/fd/{descriptor}")
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_nlink == 0:
                held, files = held + info.st_blocks * 512, files + 1
        return held, files

    def _words(self) -> str:
        return (f"wrote more than {self.max_bytes // 2**20} MB or {self.max_files:,} files to its scratch folder "
                "(its working folder), more than a worker may keep there")


class Watched:
    """A deadline that says "no time left" once the worker's scratch is past its bound; :attr:`why` says how."""

    def __init__(self, meter, bound: ScratchBound):
        self.meter, self.bound, self.why = meter, bound, ""

    def left(self) -> float:
        if self.bound.due():
            self.why = self.bound.exceeded()
            if self.why:
                return 0.0
        return self.meter.left()
