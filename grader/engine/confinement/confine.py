"""Confinement of a learner's worker: four protections, each by whichever mechanism this machine offers.

Grading needs four protections, not any one mechanism:

========== ===================================================================================
filesystem Landlock; or, where the grader is root, a uid of the worker's own, with the kit's
           files, other students' copies and the results closed to it by their modes
signals    sessions of their own (worker, supervisor, fork server: no group signal reaches the
           judge); seccomp (no other route to a signal outside the worker); Landlock's scope
           (ABI 6); a PID namespace; a uid of its own
network    seccomp (no sockets); a network namespace
processes  seccomp (no fork, no clone but threads); RLIMIT_NPROC for a uid other than root's
========== ===================================================================================

This module runs on the worker's side, in trusted code, in two steps:

* :func:`enter_namespaces` (in the worker's supervisor, before it forks the
  worker): new PID, network, mount and IPC namespaces where the kernel lets
  this process make them (inside a new user namespace unless the worker is
  to get a uid of its own), and a capped tmpfs over the scratch folder. A
  forked probe tries each step first (:func:`namespace_support`): a machine
  that lets ``unshare`` succeed and then refuses the uid map (Ubuntu 24.04)
  costs the namespaces, never the worker.
* :func:`restrict` (in the worker itself): resource limits, its own uid
  where it has one, no capabilities, ``no_new_privs``, the seccomp filter
  (:mod:`grader.engine.confinement.seccomp`) and the Landlock ruleset
  (:mod:`grader.engine.confinement.landlock`).

Nothing a machine refuses raises: each step that fails becomes a note, and
:class:`~grader.engine.confinement.protections.Protections` says which mechanism holds
each protection, measured in the worker before any learner code runs, so that
the judge can name them or refuse to grade. All of it is Linux system calls
through ctypes; nothing here needs root, and as root it gives up root. Only
Linux's side of the engine imports this module (the fork server, the
supervisor and the worker, and a root grader's judge through
:mod:`grader.engine.confinement.system`): macOS and Windows have none of these
mechanisms, nor ``resource`` or ``prctl`` (Windows), and their workers are
spawned instead (:mod:`grader.engine.confinement.spawner`).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import resource
import signal
import site
import stat
import struct
import sys
from pathlib import Path

from grader.engine.confinement import landlock, seccomp
from grader.engine.confinement.policy import CORE_BYTES, CPU_GRACE, NPROC_LIMIT, OPEN_FILES
from grader.engine.confinement.protections import PROTECTIONS, Protections

_libc = ctypes.CDLL(None, use_errno=True)

# -- namespaces ---------------------------------------------------------------------

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
_OTHERS = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
MS_REC, MS_PRIVATE, MS_NOSUID, MS_NODEV = 0x4000, 0x40000, 0x2, 0x4


def _fail(what: str):
    code = ctypes.get_errno()
    raise OSError(code, f"{what}: {os.strerror(code)}")


def _write(path: str, text: str):
    with open(path, "w") as handle:
        handle.write(text)


def _unshare(with_user: bool):
    """Enter new namespaces, the user namespace first (and mapped) if ``with_user``; raise OSError where refused."""
    uid, gid = os.geteuid(), os.getegid()
    if with_user:
        if _libc.unshare(CLONE_NEWUSER) != 0:
            _fail("a user namespace")
        try:
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"0 {uid} 1")
            _write("/proc/self/gid_map", f"0 {gid} 1")
        except OSError as error:
            raise OSError(error.errno, "a user namespace was made but its uid map was refused") from None
    if _libc.unshare(_OTHERS) != 0:
        _fail("PID, network and mount namespaces")
    if _libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:  # mounts made here stay here
        _fail("private mounts")


_support: dict[bool, str] = {}  # with a user namespace -> "" where it works, else why not


def namespace_support(with_user: bool) -> str:
    """"" where this process may make the worker's namespaces, else why not, tried once in a forked child.

    The answer is kept for this process's life: the fork server asks once,
    and every supervisor forked from it inherits the answer.
    """
    if with_user not in _support:
        read, write = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(read)
            try:
                _unshare(with_user)
                why = ""
            except OSError as error:
                why = error.strerror or str(error)
            os.write(write, why.encode()[:200])
            os._exit(0)
        os.close(write)
        why = os.read(read, 256).decode(errors="replace")
        os.close(read)
        os.waitpid(child, 0)
        _support[with_user] = why
    return _support[with_user]


def prepare():
    """Find out once, in the fork server, what every supervisor forked from it would otherwise try again."""
    namespace_support(True)
    if os.geteuid() == 0:
        namespace_support(False)
        own_uid_obstacle()


def enter_namespaces(scratch: str, scratch_bytes: int, scratch_files: int, own_ids: tuple[int, int] | None) -> dict:
    """Unshare what the kernel allows; returns which namespaces are now in force, and why others are not.

    Without ``own_ids``, a user namespace comes first, so that no host
    privilege is needed and none is kept: inside it this process is uid 0
    with capabilities that count only for the namespaces it owns. With
    ``own_ids`` (a root grader whose worker will drop to a uid of its own)
    there is none, since a user namespace maps only the uid that made it.
    """
    active = {"user": False, "pid": False, "network": False, "mount": False, "notes": []}
    if own_ids:
        ways = [False]
    else:  # without a user namespace only root may make the others
        ways = [True, False] if os.geteuid() == 0 else [True]
    refused = []
    for with_user in ways:
        why = namespace_support(with_user)
        if why:
            refused.append(why)
            continue
        try:
            _unshare(with_user)
        except OSError as error:  # refused now though the probe was let through: go on without
            refused.append(error.strerror or str(error))
            break
        active.update(user=with_user, pid=True, network=True, mount=True)
        break
    if not active["pid"]:
        active["notes"].append("no namespaces (" + "; ".join(refused) + ")")
        return active
    owner = f",uid={own_ids[0]},gid={own_ids[1]}" if own_ids else ""
    options = f"size={scratch_bytes},nr_inodes={scratch_files},mode=0700{owner}".encode()
    if _libc.mount(b"tmpfs", os.fsencode(scratch), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        active["mount"] = False
        active["notes"].append("the scratch folder could not be a capped tmpfs")
    return active


# -- a uid of the worker's own --------------------------------------------------------------

UID_BASE = 0x60000000  # + the supervisor's pid: unique among live workers, far above any real account
GID_BASE = 0x20000000  # + (judge's pid, copy's number): one group per learner's copy, see share_with_group


def own_ids(supervisor_pid: int, group: int | None) -> tuple[int, int]:
    return UID_BASE + supervisor_pid, group if group is not None else UID_BASE + supervisor_pid


def group_for(judge_pid: int, number: int) -> int:
    """The group of a learner's private copy: unique among the copies of every judge alive on this machine."""
    return GID_BASE + (judge_pid << 8) + number % 256


def _open_to_others(path: str) -> bool:
    """Whether a user with no relation to the owner can reach ``path`` (every folder on the way searchable)."""
    real = Path(os.path.realpath(path))
    for folder in [*reversed(real.parents), real]:
        try:
            mode = os.stat(folder).st_mode
        except OSError:
            return False
        if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
            return False
    return True


@functools.cache
def own_uid_obstacle() -> str:
    """"" where a worker can run under a uid of its own, else why not, in words."""
    if os.geteuid() != 0:
        return "the grader is not root, so it cannot give workers a uid of their own"
    needed = [os.path.dirname(os.__file__), *site.getsitepackages()]
    closed = [path for path in needed if os.path.isdir(path) and not _open_to_others(path)]
    if closed:
        return (f"the Python installation ({closed[0]}) is closed to other users, so a worker under a uid of its "
                "own could not import from it")
    return ""


def share_with_group(folder: Path, group: int):
    """A learner's copy, readable by its workers' group alone: owned by root, group ``group``, no rights for others."""
    for root, folders, files in os.walk(folder):
        os.chown(root, 0, group)
        os.chmod(root, 0o750)
        for name in files:
            os.chown(os.path.join(root, name), 0, group)
            os.chmod(os.path.join(root, name), 0o640)


def close_to_workers(paths) -> None:
    """Where the files rest on their modes (a root grader without Landlock), take every right of other users
    from each folder of ``paths``: the kit's, the class's, the results'. Elsewhere, leave them as they are."""
    if os.geteuid() != 0 or landlock.abi() != 0:
        return
    for path in paths:
        try:
            os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) & ~0o007)
        except OSError:
            continue


def _drop_to(ids: tuple[int, int]) -> str:
    """Become ``ids`` for good (root only); "" once done, else why not."""
    try:
        os.setgroups([])
        os.setgid(ids[1])
        os.setuid(ids[0])
    except OSError as error:
        return f"this machine refused the worker a uid of its own ({errno.errorcode.get(error.errno, error)})"
    return ""


def _reachable(paths) -> list[str]:
    """The folders of ``paths`` this process can still read or list (after dropping to its own uid)."""
    found = []
    for path in paths:
        if os.path.exists(path) and (os.access(path, os.R_OK) or os.access(path, os.X_OK)):
            found.append(path)
    return found


# -- capabilities and limits ----------------------------------------------------------

PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 1, 24, 38, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_VERSION_3 = 0x20080522


def die_with_parent(sig: int = signal.SIGKILL):
    """Ask Linux to send ``sig`` to this process when its parent dies."""
    _libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)


def _drop_bounding_set():
    for cap in range(64):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # fails harmlessly past the last capability
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def _clear_capabilities():
    header = struct.pack("Ii", _CAP_VERSION_3, 0)
    data = bytes(24)  # two (effective, permitted, inheritable) triples, all empty
    if _libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data)) != 0:
        _fail("capset")


def address_space_now() -> int:
    try:
        with open("/proc/self/status") as status:  # Linux; elsewhere the limit counts from 0
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def set_limits(memory_bytes: int, cpu_seconds: int, file_bytes: int):
    """Resource limits; the memory limit is counted on top of what this process already maps."""
    limit = address_space_now() + memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + CPU_GRACE))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (CORE_BYTES, CORE_BYTES))
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead of killing


def restrict(*, read: list[str], write: list[str], forbidden: list[str], closed: list[str], unlisted: list[str],
             memory_bytes: int, cpu_seconds: int, file_bytes: int, host_uid: int, ids: tuple[int, int] | None,
             namespaces: dict) -> Protections:
    """Apply every protection this kernel offers to the calling process, and report which mechanism holds each.

    ``ids`` is the uid and gid of the worker's own, for a root grader
    (:func:`own_uid_obstacle` says whether it may have them); ``closed`` are
    the folders that uid must find shut (the kit's) and ``unlisted`` those it
    may pass through but not list (the sandbox's, which holds every learner's
    copy), for it to count as the filesystem's protection where no Landlock
    does; seccomp then refuses every write. ``host_uid`` is the uid outside
    any user namespace: RLIMIT_NPROC never binds uid 0.
    """
    notes = list(namespaces.get("notes", []))
    held = {name: [] for name in PROTECTIONS}
    set_limits(memory_bytes, cpu_seconds, file_bytes)
    privileged = namespaces.get("user") or os.geteuid() == 0
    if privileged:
        _drop_bounding_set()
    own = False
    if ids is not None:
        why = _drop_to(ids)
        if why:
            notes.append(why)
        else:
            own, host_uid = True, ids[0]
    if privileged and not own:
        _clear_capabilities()
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail("no_new_privs")
    if host_uid != 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (NPROC_LIMIT, NPROC_LIMIT))
        held["processes"].append("RLIMIT_NPROC")
    abi = landlock.abi()
    if abi:
        try:
            landlock.restrict_self(read, write, forbidden, abi)
            held["filesystem"].append(f"Landlock ABI {abi}")
            if abi >= landlock.SCOPE_ABI:
                held["signals"].append("Landlock")
        except OSError as error:
            notes.append(f"Landlock ABI {abi} refused its ruleset ({error.strerror or error})")
            abi = 0
    read_only = own and not abi  # no Landlock keeps writes to the scratch folder: seccomp refuses them all
    why = seccomp.install(os.getpid(), read_only)
    if why:
        notes.append(why)
    else:
        for name in ("signals", "network", "processes"):
            held[name].append("seccomp")
    if own:
        held["signals"].append("a uid of its own")
    if read_only:
        still_open = _reachable(closed) + [path for path in unlisted if os.access(path, os.R_OK)]
        if still_open:
            notes.append(f"{still_open[0]} is open to other users, so a uid of its own does not confine the files")
        elif not why:
            held["filesystem"].append("a uid of its own, writing nothing (seccomp)")
    if namespaces.get("pid"):
        held["signals"].append("a PID namespace")
    if namespaces.get("network"):
        held["network"].append("a network namespace")
    return Protections(held=held, landlock_abi=abi, scratch_capped=namespaces.get("mount", False),
                       namespaces={name: value for name, value in namespaces.items() if name != "notes"}, notes=notes)


def python_installation(forbidden: list[str]) -> list[str]:
    """The folders a Python process needs to read: the interpreter, its libraries and the system's.

    Besides the installation's own prefixes, every folder on ``sys.path``
    (site-packages, the user's, folders that ``.pth`` files add), so that a
    lazy import works, except a folder that holds a ``forbidden`` one: the
    kit's own checkout is on the path of an editable install, and its
    ``.git`` keeps every version of the solutions.
    """
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
               os.path.dirname(os.path.realpath(sys.executable)), *site.getsitepackages()}
    blocked = [Path(os.path.realpath(path)) for path in forbidden]
    for entry in sys.path:
        real = Path(os.path.realpath(entry or "."))
        if entry and real.is_dir() and not any(real == path or real in path.parents for path in blocked):
            folders.add(str(real))
    folders |= {"/usr", "/lib", "/lib64", "/etc/ld.so.cache", "/etc/localtime"}
    return sorted(folders | set(DEVICES) | set(MACHINE_DESCRIPTION))


# Devices any library may open: randomness (torch reads it at import, numpy to seed) and a sink for output.
DEVICES = ("/dev/urandom", "/dev/random", "/dev/null", "/dev/zero")
# What numerical libraries read to learn the machine (torch's cpuinfo at first use, OpenBLAS and numpy's CPU
# feature detection): read-only descriptions of the processors, holding nothing of anyone's work.
MACHINE_DESCRIPTION = ("/proc/cpuinfo", "/sys/devices/system/cpu", "/sys/fs/cgroup/cpu.max")
