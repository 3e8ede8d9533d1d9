"""The seccomp filter, run here on both architectures by a small BPF interpreter: each row of the table refuses
what it says, with its errno, and lets the rest through (aarch64 cannot be run on this machine, only read)."""

import errno

import pytest

from grader.engine.confinement import policy, seccomp
from grader.engine.confinement.protections import MEMORY_REFUSED, SIGNAL_REFUSED

OWN = 4242
ALLOW = "allow"
LEGACY = {"fork", "vfork", "open", "creat", "mkdir", "rmdir", "unlink", "rename", "link", "symlink", "chmod", "chown",
          "lchown", "mknod", "utime", "utimes", "futimesat"}  # what aarch64 has only as the *at forms, or not at all
READ = {"x86_64": 0, "aarch64": 63}


def run(code, arch: str, call: str | int, *args: int, audit: int | None = None):
    """What the filter answers: "allow", or the errno it refuses with."""
    number = seccomp.NUMBERS[arch][call] if isinstance(call, str) else call
    data = {0: number, 4: audit if audit is not None else seccomp._AUDIT_ARCH[arch]}
    for index, value in enumerate(args):
        data[16 + 8 * index] = value & 0xFFFFFFFF
    accumulator, position = 0, 0
    while True:
        operation, jump_true, jump_false, constant = code[position]
        position += 1
        if operation == seccomp._LD_ABS:
            accumulator = data.get(constant, 0)
        elif operation == seccomp._RET:
            return ALLOW if constant == seccomp._ALLOW else constant & 0xFFFF
        else:
            holds = {seccomp._JEQ: accumulator == constant, seccomp._JGE: accumulator >= constant,
                     seccomp._JSET: bool(accumulator & constant)}[operation]
            position += jump_true if holds else jump_false


@pytest.mark.parametrize("arch", list(seccomp.NUMBERS))
def test_every_call_the_table_names_has_its_number(arch):
    named = {call for rule in policy.REFUSALS for call in rule.calls}
    assert named - set(seccomp.NUMBERS[arch]) == (set() if arch == "x86_64" else LEGACY & named)
    assert set(seccomp.NUMBERS[arch]) <= named  # no number the table does not use


@pytest.mark.parametrize("arch", list(seccomp.NUMBERS))
@pytest.mark.parametrize("call, args, answer", [
    ("read", (), ALLOW),
    ("kill", (OWN, 9), ALLOW), ("kill", (OWN + 1, 9), SIGNAL_REFUSED), ("kill", (0, 9), SIGNAL_REFUSED),
    ("kill", (-1, 9), SIGNAL_REFUSED), ("tgkill", (OWN, OWN, 9), ALLOW), ("tgkill", (1, 1, 9), SIGNAL_REFUSED),
    ("tkill", (OWN, 9), SIGNAL_REFUSED), ("pidfd_send_signal", (3, 9, 0, 0), SIGNAL_REFUSED),
    ("fcntl", (3, policy.F_SETOWN, 1), SIGNAL_REFUSED), ("fcntl", (3, policy.F_SETOWN, -7), SIGNAL_REFUSED),
    ("fcntl", (3, policy.F_SETOWN_EX, 0), SIGNAL_REFUSED), ("fcntl", (3, policy.F_SETSIG, 9), SIGNAL_REFUSED),
    ("fcntl", (3, policy.F_SETFL, 0o4000), ALLOW), ("fcntl", (3, policy.F_SETFL, 0o24000), SIGNAL_REFUSED),
    ("fcntl", (3, 3), ALLOW), ("fcntl", (3, policy.F_SETPIPE_SZ, 2**20), MEMORY_REFUSED), ("fcntl", (3, 1032), ALLOW),
    ("fcntl", (3, policy.F_SETLEASE, 1), errno.EPERM), ("fcntl", (3, 1025), ALLOW),  # F_GETLEASE
    ("ioctl", (3, 0x541B, 0), ALLOW), ("ioctl", (3, 0x5421, 0), ALLOW),  # FIONREAD, FIONBIO
    *[("ioctl", (3, command, 0), SIGNAL_REFUSED) for command in (
        policy.FIOSETOWN, policy.SIOCSPGRP, policy.FIOASYNC, policy.TIOCSCTTY, policy.TIOCSPGRP, policy.TIOCSTI,
        policy.TIOCCONS, policy.TIOCSIG)],
    ("ioctl", (3, 0x1_0000_0000 | policy.FIOASYNC, 0), SIGNAL_REFUSED),  # the kernel reads the low 32 bits only
    ("memfd_create", (0, 0), MEMORY_REFUSED), ("memfd_secret", (0,), MEMORY_REFUSED),
    ("shmget", (0, 2**20, 0o1600), MEMORY_REFUSED), ("shmat", (1, 0, 0), MEMORY_REFUSED),
    ("msgget", (0, 0o1600), MEMORY_REFUSED), ("mq_open", (0, 0o102, 0o600, 0), MEMORY_REFUSED),
    ("clone", (0x00010000 | 0x100 | 0x800,), ALLOW), ("clone", (0x11,), errno.EPERM), ("clone3", (0, 88), errno.ENOSYS),
    ("prctl", (policy.PR_SET_PDEATHSIG, 0), errno.EPERM), ("prctl", (15, 0), ALLOW),
    ("socket", (2, 1, 0), errno.EPERM), ("ptrace", (16, 1), errno.EPERM), ("io_uring_setup", (8, 0), errno.EPERM),
    ("openat", (-100, 0, 0o1), ALLOW), ("unlinkat", (-100, 0, 0), ALLOW),  # writes stay Landlock's
])
def test_each_rule_refuses_what_it_says_and_nothing_else(arch, call, args, answer):
    code = seccomp.program(arch, OWN)
    assert run(code, arch, READ[arch] if call == "read" else call, *args) == answer


@pytest.mark.parametrize("arch", list(seccomp.NUMBERS))
def test_a_read_only_worker_writes_nothing_but_reads(arch):
    code = seccomp.program(arch, OWN, read_only=True)
    assert run(code, arch, "openat", -100, 0, 0o1) == run(code, arch, "openat", -100, 0, 0o101) == errno.EPERM
    assert run(code, arch, "openat", -100, 0, 0o0) == ALLOW
    assert run(code, arch, "unlinkat", -100, 0, 0) == errno.EPERM
    assert run(code, arch, "fcntl", 3, policy.F_SETOWN, 1) == SIGNAL_REFUSED  # the rest of the table still holds


@pytest.mark.parametrize("arch", list(seccomp.NUMBERS))
def test_another_abi_is_refused(arch):
    other = next(audit for name, audit in seccomp._AUDIT_ARCH.items() if name != arch)
    assert run(seccomp.program(arch, OWN), arch, READ[arch], audit=other) == errno.EPERM
