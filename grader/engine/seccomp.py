"""The worker's seccomp filter: the system calls a learner's code is refused, wherever the kernel has seccomp.

Seccomp is the one mechanism every environment the kit runs on was found to
offer (Docker's default profile allows a process to add its own filter, and
so do Kubernetes, Gradescope and Ubuntu 24.04), so it carries three of the
four protections on its own where nothing else does:

* no new processes: ``fork``, ``vfork``, and ``clone`` except for threads;
* no network: no sockets at all (``socket``, ``socketpair``);
* no signals to, or tracing of, any other process: ``kill`` and ``tgkill``
  only with the worker's own pid, no ``tkill``, no queued signals to others,
  no pidfds, no ``ptrace``, no ``process_vm_*``, no ``kcmp``;

and it refuses what no worker needs and attacks often use (io_uring,
keyrings, bpf, perf, userfaultfd, new namespaces, mounts, module loading).

The filter is classic BPF, built here as a list of ``(code, jt, jf, k)``
instructions; x86_64 and aarch64 have tables of their own.
"""

from __future__ import annotations

import ctypes
import errno
import platform

_libc = ctypes.CDLL(None, use_errno=True)

_SYSCALLS = {  # the calls a worker never needs, by architecture, then the ones it may use on itself alone
    "x86_64": dict(fork=57, vfork=58, clone=56, clone3=435, socket=41, socketpair=53, io_uring_setup=425,
                   io_uring_enter=426, io_uring_register=427, prctl=157, ptrace=101, process_vm_readv=310,
                   process_vm_writev=311, keyctl=250, add_key=248, request_key=249, unshare=272, setns=308,
                   mount=165, umount2=166, pivot_root=155, bpf=321, perf_event_open=298, userfaultfd=323,
                   kexec_load=246, init_module=175, finit_module=313, tkill=200, rt_sigqueueinfo=129,
                   rt_tgsigqueueinfo=297, pidfd_open=434, pidfd_send_signal=424, pidfd_getfd=438, kcmp=312,
                   process_madvise=440, kill=62, tgkill=234),
    "aarch64": dict(clone=220, clone3=435, socket=198, socketpair=199, io_uring_setup=425, io_uring_enter=426,
                    io_uring_register=427, prctl=167, ptrace=117, process_vm_readv=270, process_vm_writev=271,
                    keyctl=219, add_key=217, request_key=218, unshare=97, setns=268, mount=40, umount2=39,
                    pivot_root=41, bpf=280, perf_event_open=241, userfaultfd=282, kexec_load=104,
                    init_module=105, finit_module=273, tkill=130, rt_sigqueueinfo=138, rt_tgsigqueueinfo=240,
                    pidfd_open=434, pidfd_send_signal=424, pidfd_getfd=438, kcmp=272, process_madvise=440,
                    kill=129, tgkill=131),
}
_SELF_ONLY = ("kill", "tgkill")  # allowed when their first argument is the worker's own pid
# What changes a file, refused where no Landlock confines writes (a root grader's worker under a uid of its own,
# for which any world-writable folder would otherwise do): file-opening calls by their flags, the rest whole.
_FILE_CHANGES = {
    "x86_64": dict(openat2=437, creat=85, mkdir=83, mkdirat=258, rmdir=84, unlink=87, unlinkat=263, rename=82,
                   renameat=264, renameat2=316, link=86, linkat=265, symlink=88, symlinkat=266, chmod=90, fchmod=91,
                   fchmodat=268, fchmodat2=452, chown=92, fchown=93, lchown=94, fchownat=260, truncate=76,
                   ftruncate=77, mknod=133, mknodat=259, utime=132, utimes=235, utimensat=280, futimesat=261,
                   setxattr=188, lsetxattr=189, fsetxattr=190, removexattr=197, lremovexattr=198,
                   fremovexattr=199, fallocate=285),
    "aarch64": dict(openat2=437, mkdirat=34, unlinkat=35, renameat=38, renameat2=276, linkat=37, symlinkat=36,
                    fchmod=52, fchmodat=53, fchmodat2=452, fchown=55, fchownat=54, truncate=45, ftruncate=46,
                    mknodat=33, utimensat=88, setxattr=5, lsetxattr=6, fsetxattr=7, removexattr=14,
                    lremovexattr=15, fremovexattr=16, fallocate=47),
}
_OPENS = {"x86_64": {2: 24, 257: 32}, "aarch64": {56: 32}}  # open and openat: the offset of their flags argument
_WRITE_FLAGS = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000  # O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF opcodes (word loads, constant jumps)
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (the low half of args[0] on little-endian)
CLONE_THREAD = 0x00010000
PR_SET_PDEATHSIG = 1


def supported() -> bool:
    """Whether this architecture has a table here (elsewhere no filter is installed, and the worker says so)."""
    return platform.machine() in _SYSCALLS


def program(arch: str, own_pid: int, read_only: bool = False) -> list[tuple[int, int, int, int]]:
    """The BPF filter as (code, jump if true, jump if false, constant): a list of refusals, then allow.

    Each refusal is a comparison that skips its own return when it does not
    match (a call that matches always returns, so the number stays loaded
    for the next comparison), so the program reads top to bottom with no labels. ``clone`` is
    allowed for threads only; ``clone3`` answers ENOSYS, so that libraries
    fall back to ``clone``, whose flags the filter can see; ``prctl`` may do
    anything but change the parent-death signal the supervisor relies on;
    ``kill`` and ``tgkill`` reach ``own_pid`` only (the kernel reads a pid as
    the low 32 bits of the argument, which is what the filter compares).
    With ``read_only``, no file may be opened for writing, created, removed,
    renamed or changed.
    """
    deny = _ERRNO | errno.EPERM
    code = [(_LD_ABS, 0, 0, _ARCH), (_JEQ, 1, 0, _AUDIT_ARCH[arch]), (_RET, 0, 0, deny),  # no other ABI
            (_LD_ABS, 0, 0, _NR), (_JGE, 0, 1, 0x40000000), (_RET, 0, 0, deny)]  # no x32 aliases
    for name, number in _SYSCALLS[arch].items():
        if name == "clone":
            code += [(_JEQ, 0, 4, number), (_LD_ABS, 0, 0, _ARG0), (_JSET, 0, 1, CLONE_THREAD),
                     (_RET, 0, 0, _ALLOW), (_RET, 0, 0, deny)]
        elif name == "prctl":
            code += [(_JEQ, 0, 4, number), (_LD_ABS, 0, 0, _ARG0), (_JEQ, 0, 1, PR_SET_PDEATHSIG),
                     (_RET, 0, 0, deny), (_RET, 0, 0, _ALLOW)]
        elif name in _SELF_ONLY:
            code += [(_JEQ, 0, 4, number), (_LD_ABS, 0, 0, _ARG0), (_JEQ, 0, 1, own_pid),
                     (_RET, 0, 0, _ALLOW), (_RET, 0, 0, deny)]
        else:
            action = _ERRNO | (errno.ENOSYS if name == "clone3" else errno.EPERM)
            code += [(_JEQ, 0, 1, number), (_RET, 0, 0, action)]
    if read_only:
        for number in _FILE_CHANGES[arch].values():
            code += [(_JEQ, 0, 1, number), (_RET, 0, 0, deny)]
        for number, flags in _OPENS[arch].items():  # a refusal whose test reloads the number afterwards
            code += [(_JEQ, 0, 4, number), (_LD_ABS, 0, 0, flags), (_JSET, 0, 1, _WRITE_FLAGS),
                     (_RET, 0, 0, deny), (_RET, 0, 0, _ALLOW)]
    return code + [(_RET, 0, 0, _ALLOW)]


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def install(own_pid: int, read_only: bool = False) -> str:
    """Install the filter (after no_new_privs); "" once it holds, else why it does not, in words."""
    arch = platform.machine()
    if arch not in _SYSCALLS:
        return f"seccomp: the kit has no system call table for {arch}"
    code = program(arch, own_pid, read_only)
    filters = (_SockFilter * len(code))(*[_SockFilter(*instruction) for instruction in code])
    fprog = _SockFprog(len(code), filters)
    PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return f"seccomp: the kernel refused the filter ({errno.errorcode.get(ctypes.get_errno(), '?')})"
    return ""
