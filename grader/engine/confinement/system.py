"""What this operating system gives the engine: how its workers start, whether they are confined, who is root.

Linux forks each worker from a fork server (:mod:`grader.engine.confinement.zygote`) and
confines it (:mod:`grader.engine.confinement.confine`); macOS and Windows spawn each
worker as a fresh interpreter (:mod:`grader.engine.confinement.spawner`) and cannot
confine it: Windows has no ``fork`` at all, and macOS makes forking unsafe
once torch is loaded. Everything here is read from ``sys.platform`` and
``os`` when asked, never at import, and imports nothing of Linux's: the
judge imports this module on every system, and the kit's tests stand in for
the others by changing ``sys.platform`` before the kit loads (tests/standin.py).
"""

from __future__ import annotations

import os
import sys

NAMES = {"darwin": "macOS", "win32": "Windows"}
# The environment of a worker's interpreter (a fork server's, or a worker spawned on its own): of the judge's, only
# what trusted workers may need to find GPT-2; and one thread, since forks are only safe without others. Here, not
# beside the fork server, because every `softlookup check` reads PASSED_ON to name its server, and should not pay
# for the fork server's imports to do so.
PASSED_ON = ("PATH", "LANG", "LC_ALL", "HOME", "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE",
             "HUGGINGFACE_HUB_CACHE", "SOFTLOOKUP_GPT2")
FIXED = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
         "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def name() -> str:
    """This system as a learner knows it: "Linux", "macOS", "Windows"."""
    return "Linux" if sys.platform.startswith("linux") else NAMES.get(sys.platform, sys.platform)


def confines() -> bool:
    """Whether learner code can be confined here, in workers forked from fork servers: Linux only."""
    return sys.platform.startswith("linux")


def root_grader() -> bool:
    """Whether this is Linux's grader running as root, whose workers each get a uid of their own."""
    return confines() and os.geteuid() == 0


def close_to_workers(paths) -> None:
    """Where a root grader's workers rest on file modes, shut ``paths`` to them; elsewhere nothing to do."""
    if root_grader():
        from grader.engine.confinement import confine  # Linux's confinement, imported by Linux alone

        confine.close_to_workers(paths)


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists; True where this cannot be told (a folder of its is then left alone).

    Not ``os.kill(pid, 0)`` on Windows: there signal 0 is CTRL_C_EVENT, sent to a whole process group.
    """
    if sys.platform == "win32":
        return _alive_on_windows(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def start_time(pid: int) -> int | None:
    """When process ``pid`` started, in the kernel's ticks since boot (``/proc/PID/stat``); None where this cannot
    be read (no such process, not Linux). With its pid it names one process for good: a pid is given again."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()  # after the name, which may hold anything
        return int(fields[19])  # starttime, field 22 of stat(5)
    except (OSError, IndexError, ValueError):
        return None


def _alive_on_windows(pid: int) -> bool:
    import ctypes

    try:
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    except (AttributeError, OSError):  # not the real Windows (the kit's stand-in for it): cannot tell
        return True
    query_limited_information, still_active, access_denied = 0x1000, 259, 5
    handle = kernel32.OpenProcess(query_limited_information, False, pid)
    if not handle:
        return ctypes.get_last_error() == access_denied  # someone else's process, alive
    try:
        code = ctypes.c_ulong()
        return not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)) or code.value == still_active
    finally:
        kernel32.CloseHandle(handle)
