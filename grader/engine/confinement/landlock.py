"""Landlock: the kernel's filesystem, TCP and signal confinement for an unprivileged process (Linux 5.13+).

What a ruleset can say grows with the kernel's ABI version: 1 the
filesystem, 2 renaming across folders, 3 truncation, 4 TCP bind and
connect, 5 ioctl on devices, 6 scopes (no signals and no abstract Unix
sockets beyond the process's own domain). :func:`restrict_self` asks for
everything the running kernel's ABI knows, so an older kernel gives less,
never an error; what it gave is :func:`abi`'s number, which the worker
reports. Calls go through ``syscall(2)`` (444 create, 445 add a rule,
446 restrict), the same numbers on every architecture.
"""

from __future__ import annotations

import ctypes
import os
import struct
from pathlib import Path

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_RULE_PATH_BENEATH = 1
_FS_RIGHTS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
TRUNCATE, IOCTL_DEV = 1 << 14, 1 << 15
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the rights a rule on a file may carry
_NET_TCP = 0b11  # bind and connect (ABI 4)
_SCOPES = 0b11  # abstract unix sockets and signals (ABI 6)
PR_SET_NO_NEW_PRIVS = 38
TCP_ABI, SCOPE_ABI = 4, 6  # the first ABIs with TCP rules and with scopes


def abi() -> int:
    """The kernel's Landlock ABI version, 0 where there is none (not built in, not in the LSM list, filtered)."""
    version = _libc.syscall(_CREATE_RULESET, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    return max(int(version), 0)


def _fs_rights(version: int) -> int:
    return _FS_RIGHTS_BY_ABI[max(level for level in _FS_RIGHTS_BY_ABI if level <= version)]


def _fail(what: str):
    code = ctypes.get_errno()
    raise OSError(code, f"{what}: {os.strerror(code)}")


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


def restrict_self(read: list[str], write: list[str], forbidden: list[str], version: int) -> None:
    """Restrict this process (and all it may start) to the folders given, as far as ABI ``version`` can say.

    ``read`` folders are readable (and executable); ``write`` folders are fully
    usable; ``forbidden`` folders are carved out of any ``read`` folder that
    holds them (the kit installed inside site-packages, say). Everything else
    in the filesystem, TCP (ABI 4) and signals to processes outside this
    domain (ABI 6) are refused. Raises OSError if the kernel refuses a step:
    the ruleset then never takes effect (restricting is the last step, and
    all or nothing).
    """
    fs = _fs_rights(version)
    net = _NET_TCP if version >= TCP_ABI else 0
    scoped = _SCOPES if version >= SCOPE_ABI else 0
    attr = struct.pack("QQQ", fs, net, scoped)
    size = 8 if version < TCP_ABI else 16 if version < SCOPE_ABI else 24
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
