"""Confinement of a learner's worker: what the kernel can forbid, applied before any learner code runs.

This module runs on the worker's side, in trusted code, in two steps:

* :func:`enter_namespaces` (in the worker's supervisor, before it forks the
  worker): new user, mount, PID, network and IPC namespaces. The worker
  becomes PID 1 of its own PID namespace, so every process it could leave
  behind dies with it; it has no network interface but a loopback that is
  down; and a private tmpfs is mounted over its scratch folder, so what it
  writes is capped and vanishes with it.
* :func:`restrict` (in the worker itself): resource limits, no
  capabilities, ``no_new_privs``, a seccomp filter (no new processes, no
  sockets, no io_uring, no keyrings, no ptrace, a parent-death signal that
  stays) and a Landlock ruleset: read-only access to the Python
  installation, the system libraries and the submission's own copy, write
  access to the scratch folder only, no TCP, and no signals to processes
  outside the worker's own domain.

Each layer is used where the kernel offers it; :class:`Protections` reports
which ones hold, so the judge can say so or refuse to grade. All of it is
Linux system calls through ctypes (Landlock ABI 1-7, seccomp BPF on x86_64
and aarch64); nothing here needs root.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import signal
import site
import struct
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long

# -- namespaces ---------------------------------------------------------------------

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_REC, MS_PRIVATE, MS_NOSUID, MS_NODEV = 0x4000, 0x40000, 0x2, 0x4


def _fail(what: str):
    code = ctypes.get_errno()
    raise OSError(code, f"{what}: {os.strerror(code)}")


def _write(path: str, text: str):
    with open(path, "w") as handle:
        handle.write(text)


def enter_namespaces(scratch: str, scratch_bytes: int) -> dict[str, bool]:
    """Unshare what the kernel allows; returns which namespaces are now in force.

    A user namespace comes first, so that no host privilege is needed and none
    is kept: inside it this process is uid 0 with capabilities that count only
    for the namespaces it owns. Without one (some kernels forbid unprivileged
    user namespaces), root can still unshare the rest.
    """
    uid, gid = os.geteuid(), os.getegid()
    others = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
    active = {"user": False, "pid": False, "network": False, "mount": False}
    if _libc.unshare(CLONE_NEWUSER | others) == 0:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")
        active.update(user=True, pid=True, network=True, mount=True)
    elif uid == 0 and _libc.unshare(others) == 0:
        active.update(pid=True, network=True, mount=True)
    else:
        return active
    # Mounts made here stay here; then a capped tmpfs replaces the scratch folder.
    if _libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        _fail("making mounts private")
    options = f"size={scratch_bytes},nr_inodes=4096,mode=0700".encode()
    if _libc.mount(b"tmpfs", os.fsencode(scratch), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        active["mount"] = False
    return active


# -- capabilities and limits ----------------------------------------------------------

PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 1, 24, 38, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_VERSION_3 = 0x20080522


def die_with_parent(sig: int = signal.SIGKILL):
    """Ask Linux to send ``sig`` to this process when its parent dies."""
    _libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)


def drop_capabilities():
    """No capability left, in any set: the worker may not mount, unshare its limits or trace anyone."""
    for cap in range(64):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # fails harmlessly past the last capability
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = struct.pack("Ii", _CAP_VERSION_3, 0)
    data = bytes(24)  # two (effective, permitted, inheritable) triples, all empty
    if _libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data)) != 0:
        _fail("capset")
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail("no_new_privs")


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
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead of killing


# -- seccomp --------------------------------------------------------------------------

_SYSCALLS = {  # the calls a worker never needs, by architecture
    "x86_64": dict(fork=57, vfork=58, clone=56, clone3=435, socket=41, socketpair=53, io_uring_setup=425,
                   io_uring_enter=426, io_uring_register=427, prctl=157, ptrace=101, process_vm_readv=310,
                   process_vm_writev=311, keyctl=250, add_key=248, request_key=249, unshare=272, setns=308,
                   mount=165, umount2=166, pivot_root=155, bpf=321, perf_event_open=298, userfaultfd=323,
                   kexec_load=246, init_module=175, finit_module=313),
    "aarch64": dict(clone=220, clone3=435, socket=198, socketpair=199, io_uring_setup=425, io_uring_enter=426,
                    io_uring_register=427, prctl=167, ptrace=117, process_vm_readv=270, process_vm_writev=271,
                    keyctl=219, add_key=217, request_key=218, unshare=97, setns=268, mount=40, umount2=39,
                    pivot_root=41, bpf=280, perf_event_open=241, userfaultfd=282, kexec_load=104,
                    init_module=105, finit_module=273),
}
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF opcodes (word loads, constant jumps)
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (the low half of args[0] on little-endian)
CLONE_THREAD = 0x00010000


def seccomp_program(arch: str) -> list[tuple[int, int, int, int]]:
    """The BPF filter as (code, jump if true, jump if false, constant): a list of refusals, then allow.

    Each refusal is a comparison that skips its own return when it does not
    match, so the program reads top to bottom with no labels. ``clone`` is
    allowed for threads only; ``clone3`` answers ENOSYS, so that libraries
    fall back to ``clone``, whose flags the filter can see; ``prctl`` may do
    anything but change the parent-death signal the supervisor relies on.
    """
    deny = _ERRNO | errno.EPERM
    program = [(_LD_ABS, 0, 0, _ARCH), (_JEQ, 1, 0, _AUDIT_ARCH[arch]), (_RET, 0, 0, deny),  # no other ABI
               (_LD_ABS, 0, 0, _NR), (_JGE, 0, 1, 0x40000000), (_RET, 0, 0, deny)]  # no x32 aliases
    for name, number in _SYSCALLS[arch].items():
        if name == "clone":
            program += [(_JEQ, 0, 4, number), (_LD_ABS, 0, 0, _ARG0), (_JSET, 0, 1, CLONE_THREAD),
                        (_RET, 0, 0, _ALLOW), (_RET, 0, 0, deny)]
        elif name == "prctl":
            program += [(_JEQ, 0, 4, number), (_LD_ABS, 0, 0, _ARG0), (_JEQ, 0, 1, PR_SET_PDEATHSIG),
                        (_RET, 0, 0, deny), (_RET, 0, 0, _ALLOW)]
        else:
            action = _ERRNO | (errno.ENOSYS if name == "clone3" else errno.EPERM)
            program += [(_JEQ, 0, 1, number), (_RET, 0, 0, action)]
    return program + [(_RET, 0, 0, _ALLOW)]


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def install_seccomp() -> bool:
    """Install the filter (after no_new_privs); False where this architecture has no table here."""
    arch = platform.machine()
    if arch not in _SYSCALLS:
        return False
    program = seccomp_program(arch)
    filters = (_SockFilter * len(program))(*[_SockFilter(*instruction) for instruction in program])
    fprog = _SockFprog(len(program), filters)
    PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
    return _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0


# -- Landlock ---------------------------------------------------------------------------

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_RULE_PATH_BENEATH = 1
_FS_RIGHTS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
TRUNCATE, IOCTL_DEV = 1 << 14, 1 << 15
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the rights a rule on a file may carry
_NET_TCP = 0b11  # bind and connect (ABI 4)
_SCOPES = 0b11  # abstract unix sockets and signals (ABI 6)


def landlock_abi() -> int:
    version = _libc.syscall(_CREATE_RULESET, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    return max(int(version), 0)


def _fs_rights(abi: int) -> int:
    return _FS_RIGHTS_BY_ABI[max(level for level in _FS_RIGHTS_BY_ABI if level <= abi)]


def _allowed_beneath(root: Path, forbidden: list[Path]):
    """``root``, or, where a forbidden folder lies inside it, every part of it but that folder."""
    inside = [f for f in forbidden if f == root or root in f.parents]
    if not inside:
        yield root
        return
    if root in inside or not root.is_dir():
        return
    for entry in root.iterdir():
        if not entry.is_symlink():
            yield from _allowed_beneath(entry, forbidden)


def landlock(read: list[str], write: list[str], forbidden: list[str], abi: int) -> None:
    """Restrict this process (and all it may start) to the folders given.

    ``read`` folders are readable (and executable); ``write`` folders are fully
    usable; ``forbidden`` folders are carved out of any ``read`` folder that
    holds them (the kit installed inside site-packages, say). Everything else
    in the filesystem, TCP, and signals to processes outside this domain are
    refused.
    """
    fs = _fs_rights(abi)
    net = _NET_TCP if abi >= 4 else 0
    scoped = _SCOPES if abi >= 6 else 0
    attr = struct.pack("QQQ", fs, net, scoped)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = _libc.syscall(_CREATE_RULESET, ctypes.c_char_p(attr), size, 0)
    if ruleset < 0:
        _fail("landlock_create_ruleset")
    try:
        blocked = [Path(os.path.realpath(path)) for path in forbidden]
        grants = [(path, READ_FILE | READ_DIR | EXECUTE) for path in read]
        grants += [(path, fs) for path in write]
        for path, rights in grants:
            real = Path(os.path.realpath(path))
            if not real.exists():
                continue
            for allowed in _allowed_beneath(real, blocked) if rights != fs else [real]:
                _add_path_rule(ruleset, allowed, rights & fs)
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            _fail("no_new_privs")
        if _libc.syscall(_RESTRICT_SELF, ruleset, 0) != 0:
            _fail("landlock_restrict_self")
    finally:
        os.close(ruleset)


def _add_path_rule(ruleset: int, path: Path, rights: int):
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS
        attr = struct.pack("=Qi", rights, fd)  # struct landlock_path_beneath_attr is packed
        if _libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.c_char_p(attr), 0) != 0:
            _fail(f"landlock_add_rule {path}")
    finally:
        os.close(fd)


# -- what the worker reports ------------------------------------------------------------


@dataclass
class Protections:
    """Which protections hold in a worker, as it reports them before any learner code runs."""

    landlock_abi: int = 0
    filesystem: bool = False  # Landlock: only the Python installation, its copy and its scratch folder
    signals: bool = False  # no signal or ptrace to a process outside the worker (Landlock scope or PID namespace)
    network: bool = False  # no socket at all (seccomp), or no interface (network namespace)
    processes: bool = False  # no new process (seccomp), or a process limit that binds
    scratch_capped: bool = False  # the scratch folder is a private, size-limited tmpfs
    namespaces: dict = field(default_factory=dict)

    def missing(self) -> list[str]:
        """The protections that do not hold, in words."""
        wanted = {
            "filesystem": "filesystem confinement (Landlock)",
            "signals": "no signals to other processes (Landlock ABI 6 or a PID namespace)",
            "network": "no network (seccomp or a network namespace)",
            "processes": "a process limit (seccomp, or RLIMIT_NPROC for a non-root user)",
        }
        return [words for name, words in wanted.items() if not getattr(self, name)]

    def to_plain(self) -> dict:
        return asdict(self)


def restrict(*, read: list[str], write: list[str], forbidden: list[str], memory_bytes: int, cpu_seconds: int,
             file_bytes: int, host_uid: int, namespaces: dict[str, bool]) -> Protections:
    """Apply every protection this kernel offers to the calling process, and report which hold.

    ``host_uid`` is the uid outside any user namespace: RLIMIT_NPROC never
    binds uid 0, so for root the process cap is the seccomp filter alone.
    """
    set_limits(memory_bytes, cpu_seconds, file_bytes)
    if namespaces.get("user") or os.geteuid() == 0:
        drop_capabilities()
    elif _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail("no_new_privs")
    nproc_binds = host_uid != 0
    if nproc_binds:  # room for this process's threads and its supervisor, not for a fork bomb
        resource.setrlimit(resource.RLIMIT_NPROC, (32, 32))
    seccomp = install_seccomp()
    abi = landlock_abi()
    if abi:
        landlock(read, write, forbidden, abi)
    return Protections(
        landlock_abi=abi,
        filesystem=abi > 0,
        signals=abi >= 6 or namespaces.get("pid", False),
        network=seccomp or namespaces.get("network", False),
        processes=seccomp or nproc_binds,
        scratch_capped=namespaces.get("mount", False),
        namespaces=dict(namespaces),
    )


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
    return sorted(folders | set(DEVICES))


# Devices any library may open: randomness (torch reads it at import, numpy to seed) and a sink for output.
DEVICES = ("/dev/urandom", "/dev/random", "/dev/null", "/dev/zero")
