"""Run a command as it would run on another Linux: the restrictions of Docker, older kernels and Ubuntu 24.04.

The kit's own tests use this launcher to grade under each environment its
users have, on one machine with a full kernel. It sets up the restrictions
in this order, then execs the command, so that everything the command
starts inherits them:

1. ``--readable-python``: a private mount namespace in which the folder that
   hides the Python installation (``/root`` for a pyenv Python) is replaced
   by a world-readable one holding only that installation, as Python is
   installed in Gradescope's and Docker's images. In the same namespace the
   reference solutions of the kit these tests run from are hidden: a graded
   machine holds one kit, the one grading (the copy under test). Without it,
   where the tests' own virtual environment lies inside their checkout (CI's
   ``.venv``), a student's code that walks up from any process's command line
   finds a second, open ``solutions/``. Needs root.
2. ``--uid N``: the command runs as that unprivileged user (a JupyterHub pod,
   a GitHub runner). Needs root.
3. ``--userns-map-refused``: what Ubuntu 24.04's AppArmor does to
   unprivileged user namespaces: ``unshare`` succeeds, writing the uid map
   fails. Stood in for by a Landlock domain under which nothing in ``/proc``
   can be written.
4. ``--docker``: Docker's default seccomp profile without CAP_SYS_ADMIN:
   ``unshare``, ``setns``, ``mount``, ``umount2`` and ``pivot_root`` fail with
   EPERM, ``clone`` with a namespace flag too, and ``clone3`` with ENOSYS.
5. ``--landlock N``: the kernel answers Landlock ABI ``N`` (a seccomp user
   notification answers the version query; the real kernel then enforces
   the older ABI's rules the kit asks for), or ``none``: no Landlock at all.

Usage: ``python tests/emulate.py [options] -- COMMAND [ARGS...]``; the exit
status is the command's.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import os
import platform
import select
import socket
import struct
import sys
import tempfile
from pathlib import Path

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

CLONE_NEWNS = 0x00020000
NAMESPACE_FLAGS = 0x7E020000  # every CLONE_NEW* flag, as Docker's profile masks them
MS_BIND, MS_REC, MS_PRIVATE, MNT_DETACH = 0x1000, 0x4000, 0x40000, 2

SYSCALLS = {
    "x86_64": dict(unshare=272, setns=308, mount=165, umount2=166, pivot_root=155, clone=56, clone3=435,
                   landlock_create_ruleset=444, landlock_add_rule=445, landlock_restrict_self=446, seccomp=317),
    "aarch64": dict(unshare=97, setns=268, mount=40, umount2=39, pivot_root=41, clone=220, clone3=435,
                    landlock_create_ruleset=444, landlock_add_rule=445, landlock_restrict_self=446, seccomp=277),
}
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
LD, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06
ALLOW, ERRNO, USER_NOTIF = 0x7FFF0000, 0x00050000, 0x7FC00000
NR, ARCH, ARG0, ARG2 = 0, 4, 16, 32


def fail(what: str):
    code = ctypes.get_errno()
    raise OSError(code, f"{what}: {os.strerror(code)}")


# -- 1. a Python installation others can read ------------------------------------------------


def readable_python():
    """Replace the closed folder above the Python installation by an open one holding just the installation."""
    prefix = Path(os.path.realpath(sys.base_prefix))
    closed = next((folder for folder in reversed(prefix.parents) if not os.stat(folder).st_mode & 0o001), None)
    if closed is None:
        return
    if libc.unshare(CLONE_NEWNS) != 0:
        fail("unshare(CLONE_NEWNS)")
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        fail("making mounts private")
    keep = tempfile.mkdtemp(prefix="emulate-")
    if libc.mount(os.fsencode(prefix), os.fsencode(keep), None, MS_BIND | MS_REC, None) != 0:
        fail("keeping the installation")
    if libc.mount(b"tmpfs", os.fsencode(closed), b"tmpfs", 0, b"mode=0755") != 0:
        fail(f"opening {closed}")
    prefix.mkdir(parents=True)
    for folder in [prefix, *prefix.parents]:
        if folder == closed:
            break
        os.chmod(folder, 0o755)
    if libc.mount(os.fsencode(keep), os.fsencode(prefix), None, MS_BIND | MS_REC, None) != 0:
        fail("putting the installation back")
    if libc.umount2(os.fsencode(keep), MNT_DETACH) != 0:
        fail("leaving the installation's stand-in")
    os.rmdir(keep)


def one_kit():
    """Hide the reference solutions of the checkout these tests run from, behind an empty folder."""
    harness = Path(__file__).resolve().parents[1] / "solutions"
    if not harness.is_dir():
        return
    if libc.unshare(CLONE_NEWNS) != 0:
        fail("unshare(CLONE_NEWNS)")
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        fail("making mounts private")
    if libc.mount(b"tmpfs", os.fsencode(harness), b"tmpfs", 0, b"mode=0700") != 0:
        fail(f"hiding {harness}")


# -- 3. Ubuntu 24.04's refused uid map ----------------------------------------------------------

WRITE_FILE = 2


def proc_unwritable():
    """A Landlock domain that refuses writing files in /proc and nowhere else."""
    attr = struct.pack("Q", WRITE_FILE)
    ruleset = libc.syscall(444, ctypes.c_char_p(attr), 8, 0)
    if ruleset < 0:
        fail("landlock_create_ruleset")
    for entry in Path("/").iterdir():
        if entry.name == "proc" or entry.is_symlink():
            continue
        fd = os.open(entry, os.O_PATH | os.O_CLOEXEC)
        rule = struct.pack("=Qi", WRITE_FILE, fd)
        if libc.syscall(445, ruleset, 1, ctypes.c_char_p(rule), 0) != 0:
            fail(f"landlock_add_rule {entry}")
        os.close(fd)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        fail("no_new_privs")
    if libc.syscall(446, ruleset, 0) != 0:
        fail("landlock_restrict_self")
    os.close(ruleset)


# -- 4 and 5. Docker's profile and an older Landlock, as one seccomp filter ------------------------


def program(docker: bool, landlock: str | None) -> list[tuple[int, int, int, int]]:
    arch = platform.machine()
    calls = SYSCALLS[arch]
    deny = ERRNO | errno.EPERM
    code = [(LD, 0, 0, ARCH), (JEQ, 1, 0, AUDIT_ARCH[arch]), (RET, 0, 0, ALLOW), (LD, 0, 0, NR)]
    if docker:
        for name in ("unshare", "setns", "mount", "umount2", "pivot_root"):
            code += [(JEQ, 0, 1, calls[name]), (RET, 0, 0, deny)]
        code += [(JEQ, 0, 1, calls["clone3"]), (RET, 0, 0, ERRNO | errno.ENOSYS)]
        code += [(JEQ, 0, 4, calls["clone"]), (LD, 0, 0, ARG0), (JSET, 0, 1, NAMESPACE_FLAGS),
                 (RET, 0, 0, deny), (LD, 0, 0, NR)]
    if landlock == "none":
        for name in ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"):
            code += [(JEQ, 0, 1, calls[name]), (RET, 0, 0, ERRNO | errno.ENOSYS)]
    elif landlock is not None:  # the version query (flags == 1) is answered by the listener
        code += [(JEQ, 0, 4, calls["landlock_create_ruleset"]), (LD, 0, 0, ARG2), (JEQ, 0, 1, 1),
                 (RET, 0, 0, USER_NOTIF), (LD, 0, 0, NR)]
    return code + [(RET, 0, 0, ALLOW)]


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def install_filter(code, listener: bool) -> int:
    """Install the filter; with ``listener``, return the descriptor its notifications arrive on."""
    filters = (SockFilter * len(code))(*[SockFilter(*instruction) for instruction in code])
    fprog = SockFprog(len(code), filters)
    if libc.prctl(38, 1, 0, 0, 0) != 0:
        fail("no_new_privs")
    SECCOMP_SET_MODE_FILTER, FLAG_NEW_LISTENER = 1, 1 << 3
    fd = libc.syscall(SYSCALLS[platform.machine()]["seccomp"], SECCOMP_SET_MODE_FILTER,
                      FLAG_NEW_LISTENER if listener else 0, ctypes.byref(fprog))
    if fd < 0:
        fail("seccomp")
    return fd


NOTIF_SIZE, RESPONSE_SIZE = 80, 24  # struct seccomp_notif and seccomp_notif_resp
IOCTL_RECV, IOCTL_SEND = 0xC0502100, 0xC0182101


def answer_version_queries(listener: int, version: int, child: int) -> int:
    """Answer every Landlock version query with ``version`` until ``child`` ends; return its exit status."""
    while True:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if not select.select([listener], [], [], 0.2)[0]:
            continue
        request = ctypes.create_string_buffer(NOTIF_SIZE)
        if libc.ioctl(listener, IOCTL_RECV, request) != 0:
            continue  # the process that asked is gone
        notification_id = struct.unpack_from("Q", request.raw)[0]
        response = ctypes.create_string_buffer(struct.pack("QqiI", notification_id, version, 0, 0))
        libc.ioctl(listener, IOCTL_SEND, response)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readable-python", action="store_true")
    parser.add_argument("--uid", type=int)
    parser.add_argument("--userns-map-refused", action="store_true")
    parser.add_argument("--docker", action="store_true")
    parser.add_argument("--landlock", help="an ABI number, or none")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    if not command:
        parser.error("give the command to run after --")
    if options.readable_python:
        readable_python()
        one_kit()
    if options.uid is not None:
        os.setgroups([])
        os.setgid(options.uid)
        os.setuid(options.uid)
    if options.userns_map_refused:
        proc_unwritable()
    code = program(options.docker, options.landlock)
    listener = options.landlock not in (None, "none")
    if not listener:
        install_filter(code, listener=False)
        os.execvp(command[0], command)
    ours, theirs = socket.socketpair()
    child = os.fork()
    if child == 0:
        ours.close()
        fd = install_filter(code, listener=True)
        socket.send_fds(theirs, [b"listener"], [fd])
        os.close(fd)
        theirs.close()
        os.execvp(command[0], command)
    theirs.close()
    _, fds, _, _ = socket.recv_fds(ours, 16, 1)
    return answer_version_queries(fds[0], int(options.landlock), child)


if __name__ == "__main__":
    sys.exit(main())
