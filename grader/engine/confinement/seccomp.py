"""The worker's seccomp filter: every system call, and every argument of one, that a learner's code is refused.

Seccomp is the one mechanism every environment the kit runs on was found to
offer (Docker's default profile allows a process to add its own filter, and
so do Kubernetes, Gradescope and Ubuntu 24.04), so it carries three of the
four protections on its own where nothing else does (no new processes, no
network, no signal to any process outside the worker), and it keeps memory
from being held where the address-space limit does not count it.

:data:`~grader.engine.confinement.policy.REFUSALS` is the whole filter, one
row per rule with its reason, declared with every resource limit in
:mod:`~grader.engine.confinement.policy`: a reviewer reads it in a sitting,
and this module makes it a filter. Where a protection can hold by construction
it does so first (the worker, its supervisor and its fork server each lead
a session and a process group of their own, so that no group, session or
terminal signal reaches the judge; a PID namespace or a uid of its own where the machine
gives one); the rows are what holds where nothing else does. The kernel
itself keeps some routes to the caller alone, and they need no row: a POSIX
timer's signal reaches only a thread of the caller's own process
(``timer_create`` refuses any other ``SIGEV_THREAD_ID`` with EINVAL:
``tests/adversarial/test_attacks.py`` shows it, unconfined), and ``mq_notify``
and ``F_NOTIFY`` signal only the process that asked; ``O_ASYNC`` given to
``open`` is ignored by Linux (only ``fcntl`` turns it on).

A refusal answers with an errno, so that the call fails the way a library
expects a refused call to fail. Routes to another process's signals, and
memory held outside the worker, answer with errnos of the kit's own
(:data:`~grader.engine.confinement.protections.SIGNAL_REFUSED`,
:data:`~grader.engine.confinement.protections.MEMORY_REFUSED`), which the worker names in
the learner's feedback.

The filter is classic BPF, compiled here from the table into ``(code, jt,
jf, k)`` instructions; x86_64 and aarch64 number the calls differently
(:data:`NUMBERS`); a call an architecture does not have is left out there.
"""

from __future__ import annotations

import ctypes
import errno
import platform

from grader.engine.confinement.policy import OWN_PID, REFUSALS, Refusal

NUMBERS = {  # every call the table names, by architecture (aarch64 has no fork, open, mkdir, ... of its own)
    "x86_64": dict(
        fork=57, vfork=58, clone=56, clone3=435, socket=41, socketpair=53, kill=62, tgkill=234, tkill=200,
        rt_sigqueueinfo=129, rt_tgsigqueueinfo=297, pidfd_open=434, pidfd_send_signal=424, fcntl=72, ioctl=16,
        prctl=157, ptrace=101, process_vm_readv=310, process_vm_writev=311, kcmp=312, process_madvise=440,
        pidfd_getfd=438, memfd_create=319, memfd_secret=447, shmget=29, shmat=30, msgget=68, mq_open=240,
        io_uring_setup=425, io_uring_enter=426, io_uring_register=427, keyctl=250, add_key=248, request_key=249,
        unshare=272, setns=308, mount=165, umount2=166, pivot_root=155, bpf=321, perf_event_open=298,
        userfaultfd=323, kexec_load=246, init_module=175, finit_module=313,
        openat2=437, creat=85, mkdir=83, mkdirat=258, rmdir=84, unlink=87, unlinkat=263, rename=82, renameat=264,
        renameat2=316, link=86, linkat=265, symlink=88, symlinkat=266, chmod=90, fchmod=91, fchmodat=268,
        fchmodat2=452, chown=92, fchown=93, lchown=94, fchownat=260, truncate=76, ftruncate=77, mknod=133,
        mknodat=259, utime=132, utimes=235, utimensat=280, futimesat=261, setxattr=188, lsetxattr=189,
        fsetxattr=190, removexattr=197, lremovexattr=198, fremovexattr=199, fallocate=285, open=2, openat=257),
    "aarch64": dict(
        clone=220, clone3=435, socket=198, socketpair=199, kill=129, tgkill=131, tkill=130, rt_sigqueueinfo=138,
        rt_tgsigqueueinfo=240, pidfd_open=434, pidfd_send_signal=424, fcntl=25, ioctl=29, prctl=167, ptrace=117,
        process_vm_readv=270, process_vm_writev=271, kcmp=272, process_madvise=440, pidfd_getfd=438,
        memfd_create=279, memfd_secret=447, shmget=194, shmat=196, msgget=186, mq_open=180, io_uring_setup=425,
        io_uring_enter=426, io_uring_register=427, keyctl=219, add_key=217, request_key=218, unshare=97, setns=268,
        mount=40, umount2=39, pivot_root=41, bpf=280, perf_event_open=241, userfaultfd=282, kexec_load=104,
        init_module=105, finit_module=273,
        openat2=437, mkdirat=34, unlinkat=35, renameat=38, renameat2=276, linkat=37, symlinkat=36, fchmod=52,
        fchmodat=53, fchmodat2=452, fchown=55, fchownat=54, truncate=45, ftruncate=46, mknodat=33, utimensat=88,
        setxattr=5, lsetxattr=6, fsetxattr=7, removexattr=14, lremovexattr=15, fremovexattr=16, fallocate=47,
        openat=56),
}
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF opcodes (word loads, constant jumps)
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_NR, _ARCH, _ARGS = 0, 4, 16  # offsets in struct seccomp_data (an argument's low half on little-endian)


def supported() -> bool:
    """Whether this architecture has a table here (elsewhere no filter is installed, and the worker says so)."""
    return platform.machine() in NUMBERS


def _test(argument: int, relation: str, value, skip: int, own_pid: int) -> list[tuple[int, int, int, int]]:
    """Load ``argument`` and jump ``skip`` instructions past the end of the test unless it holds."""
    values = [own_pid if item == OWN_PID else item for item in (value if relation == "in" else (value,))]
    code = [(_LD_ABS, 0, 0, _ARGS + 8 * argument)]
    if relation == "in":  # any one of them: on to the next test; none: skip
        for left, item in enumerate(reversed(values)):
            code.append((_JEQ, left, 0, item) if left else (_JEQ, 0, skip, item))
        return code[:1] + code[:0:-1]
    operation, holds = {"is": (_JEQ, True), "is not": (_JEQ, False), "has": (_JSET, True),
                        "lacks": (_JSET, False)}[relation]
    return code + [(operation, 0, skip, values[0]) if holds else (operation, skip, 0, values[0])]


def _rule(number: int, rule: Refusal, own_pid: int) -> list[tuple[int, int, int, int]]:
    """One call's refusal: the call's number still loaded on the way in and on the way out.

    A test that fails jumps to the last instruction, which loads the number
    again for the next rule; a call that does not match skips all of it.
    """
    tests = []
    for argument, relation, value in reversed(rule.when):  # built from the end, each knowing how far it is
        tests = _test(argument, relation, value, len(tests) + 1, own_pid) + tests
    refuse = [(_RET, 0, 0, _ERRNO | rule.errno)]
    reload = [(_LD_ABS, 0, 0, _NR)] if tests else []
    return [(_JEQ, 0, len(tests) + 1 + len(reload), number), *tests, *refuse, *reload]


def program(arch: str, own_pid: int, read_only: bool = False) -> list[tuple[int, int, int, int]]:
    """The BPF filter for :data:`REFUSALS` as (code, jump if true, jump if false, constant), then allow."""
    code = [(_LD_ABS, 0, 0, _ARCH), (_JEQ, 1, 0, _AUDIT_ARCH[arch]), (_RET, 0, 0, _ERRNO | errno.EPERM),  # no other ABI
            (_LD_ABS, 0, 0, _NR), (_JGE, 0, 1, 0x40000000), (_RET, 0, 0, _ERRNO | errno.EPERM)]  # no x32 aliases
    for rule in REFUSALS:
        if rule.read_only and not read_only:
            continue
        for call in rule.calls:
            if call in NUMBERS[arch]:
                code += _rule(NUMBERS[arch][call], rule, own_pid)
    return code + [(_RET, 0, 0, _ALLOW)]


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def install(own_pid: int, read_only: bool = False) -> str:
    """Install the filter (after no_new_privs); "" once it holds, else why it does not, in words."""
    arch = platform.machine()
    if arch not in NUMBERS:
        return f"seccomp: the kit has no system call table for {arch}"
    code = program(arch, own_pid, read_only)
    filters = (_SockFilter * len(code))(*[_SockFilter(*instruction) for instruction in code])
    fprog = _SockFprog(len(code), filters)
    PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return f"seccomp: the kernel refused the filter ({errno.errorcode.get(ctypes.get_errno(), '?')})"
    return ""
