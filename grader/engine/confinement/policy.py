"""What a learner's worker may do, declared in one place: every system-call rule and every resource limit, with why.

The mechanisms read this module and declare no rule or limit of their own:
:mod:`~grader.engine.confinement.seccomp` compiles :data:`REFUSALS` into its
filter, :mod:`~grader.engine.confinement.confine` sets the resource limits
(``setrlimit``), :mod:`~grader.engine.confinement.scratch` bounds the scratch
folder, the judge (:mod:`~grader.engine.slot`, :mod:`~grader.engine.options`)
holds each call to its time and memory, and
:mod:`~grader.engine.confinement.codec` bounds every message it decodes. A
reviewer reads here what a worker is refused; the mechanisms' modules say how.

Two rules are not numbers, and their modules state them: the files a
confined worker may read (Python's installation and the learner's copy, not
the kit) and write (its scratch folder alone) are Landlock's ruleset, built
in :func:`grader.engine.confinement.worker.serve`; the environment it sees
(nothing of the grader's) is ``LEARNER_ENVIRONMENT`` there. A call's own time
limit is its exercise's (``time_limit`` in ``grader/checks/exercises.toml``,
5 s of CPU time unless it says otherwise): the lesson knows what its reference takes.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass

from grader.engine.confinement.protections import MEMORY_REFUSED, SIGNAL_REFUSED

# -- time -------------------------------------------------------------------------------------------------------------
WAITING_FACTOR = 2.0  # a call may wait (sleep, block) for this many times its limit before it is stopped
# Seconds of CPU time to import a learner's module, at least its exercise's call limit: room for a library that
# the fork server did not import beforehand (scipy, say). A module that loops at import costs this much, once.
IMPORT_TIME_LIMIT = 30.0
# Seconds that all the calls of one submission may take together, counted as each call's limit is (its CPU time,
# or its own waiting where that is longer; see grader.engine.confinement.clock), so a busy machine does not spend it.
# The reference solutions' calls take 2.4 s for all six exercises on an idle 2-core machine (0.14 to 0.7 s for the
# three numpy ones): 150 s leaves room for slow but honest code and a hang or two, and bounds a submission whose
# every call stops just short of its limit (about 440 calls) to minutes instead of an hour.
TIME_BUDGET = 150.0
CPU_BACKSTOP = 900  # seconds of CPU for a whole worker (RLIMIT_CPU), in case the judge dies and cannot stop it
CPU_GRACE = 5  # seconds between RLIMIT_CPU's soft limit (SIGXCPU, which code may catch) and its hard one (SIGKILL)

# -- memory -----------------------------------------------------------------------------------------------------------
MEMORY_LIMIT = 2048.0  # MB a learner's worker may add to its address space (RLIMIT_AS, on top of what it maps)

# -- processes and files ----------------------------------------------------------------------------------------------
NPROC_LIMIT = 32  # RLIMIT_NPROC (a uid other than root's): room for a worker's threads and supervisor, not a fork bomb
OPEN_FILES = 256  # RLIMIT_NOFILE: a worker opens its modules and a few files, never hundreds
CORE_BYTES = 0  # RLIMIT_CORE: a crash leaves no core file, which would hold the worker's memory on disk
SCRATCH_BYTES = 64 * 2**20  # what a worker's scratch folder may hold, and the largest file it may write (RLIMIT_FSIZE)
SCRATCH_FILES = 4096  # files and folders in it (a tmpfs's nr_inodes where the kernel holds the bound)

# -- what crosses the pipe: the judge decodes no more than this of a worker's messages --------------------------------
MAX_ARRAY_BYTES = 64 * 2**20  # one array in an answer: the largest a check of the lesson asks for is a few MB
MAX_MESSAGE = 96 * 2**20  # one message: a 64 MB array, base64-encoded, and change
MAX_DEPTH = 40  # nesting of JSON containers; a value of the kit is at most a few levels deep
MAX_ITEMS = 300_000  # containers and separators: each costs the judge up to ~100 bytes once decoded
OUTPUT_CHARS = 4000  # characters of a call's printed output kept for the learner
PRINTED_LINES = 20  # lines of a call's printed output kept for the learner
MAX_LINES_COUNTED = 10**9  # a worker's count of printed lines, believed up to this
MAX_READS = 1000  # paths in a worker's report of the learner's files it read; more, and it read everything

# -- system calls: what the seccomp filter refuses, one row per rule with its reason ----------------------------------
# Where a protection holds by construction it does so first (the worker, its supervisor and its fork server each lead
# a session and process group of their own; a PID namespace or a uid of its own where the machine gives one): the
# rows are what holds where nothing else does. seccomp's docstring says which routes the kernel keeps to the caller
# alone, so that they need no row.
OWN_PID = "the worker's own pid"  # stands for the pid the filter is compiled for
CLONE_THREAD = 0x00010000
PR_SET_PDEATHSIG = 1
F_SETFL, F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE, F_SETPIPE_SZ = 4, 8, 10, 15, 1024, 1031
O_ASYNC = 0o20000  # the same on x86_64 and aarch64
# ioctl commands that name a process or group to signal, or act on a terminal as its controller
FIOSETOWN, SIOCSPGRP, FIOASYNC = 0x8901, 0x8902, 0x5452
TIOCSCTTY, TIOCSPGRP, TIOCSTI, TIOCCONS, TIOCSIG = 0x540E, 0x5410, 0x5412, 0x541D, 0x40045436
_WRITE_FLAGS = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000  # O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND


@dataclass(frozen=True)
class Refusal:
    """One rule: ``calls`` are refused (with ``errno``) when every test of ``when`` holds; always, if none.

    A test is ``(argument, relation, value)``: the argument's low 32 bits (all
    that the kernel reads of a pid, a command or the flags here) ``"is"``,
    ``"is not"`` or is ``"in"`` the value(s), or ``"has"`` or ``"lacks"`` any of
    the bits of a mask. ``read_only`` rows apply only where every write is
    refused (a root grader's worker under a uid of its own without Landlock).
    """

    calls: tuple[str, ...]
    reason: str
    when: tuple[tuple, ...] = ()
    errno: int = errno.EPERM
    read_only: bool = False


REFUSALS = (
    # -- no new processes -----------------------------------------------------------------
    Refusal(("fork", "vfork"), "no new process: the worker's code runs in one process"),
    Refusal(("clone",), "threads only: a clone without CLONE_THREAD is a new process",
            when=((0, "lacks", CLONE_THREAD),)),
    Refusal(("clone3",), "its flags sit in memory the filter cannot read: ENOSYS makes libraries fall back to clone",
            errno=errno.ENOSYS),
    # -- no network -----------------------------------------------------------------------
    Refusal(("socket", "socketpair"), "no network: no socket can be made (the worker's own comes from the judge)"),
    # -- no signal to any process outside the worker --------------------------------------
    Refusal(("kill", "tgkill"), "a signal to any pid but the worker's own (0 and -1 are groups: refused too)",
            when=((0, "is not", OWN_PID),), errno=SIGNAL_REFUSED),
    Refusal(("tkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open", "pidfd_send_signal"),
            "other ways to signal a pid of its choosing", errno=SIGNAL_REFUSED),
    Refusal(("fcntl",), "the owner of a descriptor's I/O signals (a pid, a thread or a group), and which signal: "
            "the kernel sends it on the worker's behalf", when=((1, "in", (F_SETOWN, F_SETOWN_EX, F_SETSIG)),),
            errno=SIGNAL_REFUSED),
    Refusal(("fcntl",), "O_ASYNC turns those signals on (a terminal sends them to its foreground group)",
            when=((1, "is", F_SETFL), (2, "has", O_ASYNC)), errno=SIGNAL_REFUSED),
    Refusal(("ioctl",), "the same owner and O_ASYNC by ioctl, a terminal's group or control, typing into a "
            "terminal, and a pty's signal to its group",
            when=((1, "in", (FIOSETOWN, SIOCSPGRP, FIOASYNC, TIOCSCTTY, TIOCSPGRP, TIOCSTI, TIOCCONS, TIOCSIG)),),
            errno=SIGNAL_REFUSED),
    Refusal(("fcntl",), "a lease makes another process's open of the file wait for the worker (up to 45 s)",
            when=((1, "is", F_SETLEASE),)),
    Refusal(("prctl",), "the parent-death signal is the supervisor's: it ends the worker with its supervisor",
            when=((0, "is", PR_SET_PDEATHSIG),)),
    Refusal(("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "process_madvise", "pidfd_getfd"),
            "no tracing, reading, comparing or stealing from another process"),
    # -- no memory held outside the address space (the limit counts only that) ------------
    Refusal(("memfd_create", "memfd_secret"), "anonymous in-memory files hold memory no address space counts",
            errno=MEMORY_REFUSED),
    Refusal(("shmget", "shmat", "msgget"), "System V shared memory and message queues outlive the worker, "
            "outside its address space", errno=MEMORY_REFUSED),
    Refusal(("mq_open",), "POSIX message queues: memory outside the address space (mq_notify then has no queue "
            "to act on)", errno=MEMORY_REFUSED),
    Refusal(("fcntl",), "a pipe's buffer grown past its default is memory outside the address space",
            when=((1, "is", F_SETPIPE_SZ),), errno=MEMORY_REFUSED),
    # -- what no worker needs and attacks often use ---------------------------------------
    Refusal(("io_uring_setup", "io_uring_enter", "io_uring_register"),
            "io_uring submits work that no per-call rule here would see"),
    Refusal(("keyctl", "add_key", "request_key"), "keyrings can hold the grader's secrets"),
    Refusal(("unshare", "setns", "mount", "umount2", "pivot_root"),
            "namespaces and mounts are set up by the supervisor, before the worker's code runs"),
    Refusal(("bpf", "perf_event_open", "userfaultfd", "kexec_load", "init_module", "finit_module"),
            "the kernel's widest attack surface, which no numerical code needs"),
    # -- no file changed, where only seccomp keeps writes in (read_only) ------------------
    Refusal(("openat2", "creat", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat",
             "renameat2", "link", "linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "fchmodat2",
             "chown", "fchown", "lchown", "fchownat", "truncate", "ftruncate", "mknod", "mknodat", "utime", "utimes",
             "utimensat", "futimesat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
             "fremovexattr", "fallocate"),
            "a root grader's worker without Landlock: any world-writable folder would do", read_only=True),
    Refusal(("open",), "opening for writing, with the same reason", when=((1, "has", _WRITE_FLAGS),),
            read_only=True),
    Refusal(("openat",), "opening for writing, with the same reason", when=((2, "has", _WRITE_FLAGS),),
            read_only=True),
)
