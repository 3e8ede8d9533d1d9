"""Where the warm server listens, which server a check may use, and who may talk to it.

The client imports this on every ``softlookup check``, so it stays light: no
numpy, no pytest. Three rules:

* The socket lies in a folder of the learner's own: ``$XDG_RUNTIME_DIR/softlookup``,
  else ``softlookup.<uid>`` in the temporary folder. It is used only while it is
  a real folder (not a link), owned by this user, closed to everyone else
  (mode 0700 or stricter), in a parent nobody else can swap it out of.
* A server is named by a key of everything its grading depends on besides
  the learner's folder: the kit's files (size and time of each), the
  interpreter, the installed packages' folders and the environment variables
  the fork servers pass on. Edit the kit or install a package, and the next
  check finds no server of that name and starts a fresh one.
* Each end checks the other's uid on the socket itself: ``SO_PEERCRED`` on
  Linux, ``LOCAL_PEERCRED`` on macOS. Where neither can be asked (Windows,
  whose Python has no Unix sockets either), there is no server: :func:`supported`.
"""

from __future__ import annotations

import hashlib
import os
import socket
import stat
import struct
import sys
from pathlib import Path

from grader.engine.confinement.system import PASSED_ON

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # grader/
DISABLE = "SOFTLOOKUP_NO_SERVER"
# Read by the grading itself, so a server started under other values is another server.
KEY_VARIABLES = (*PASSED_ON, "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "PYTHONPATH")


def private_folder() -> Path | None:
    """The learner's folder for the server's socket, made if missing; None where it is not private."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        folder = Path(runtime) / "softlookup"
    else:
        import tempfile  # shutil, random and more: only where there is no runtime folder

        folder = Path(tempfile.gettempdir()) / f"softlookup.{os.geteuid()}"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    return folder if is_private(folder) else None


def is_private(folder: Path) -> bool:
    """Whether only this user can reach ``folder``: a real folder of ours, mode 0700, in a parent that keeps it ours."""
    try:
        own, parent = os.lstat(folder), os.stat(folder.parent)
    except OSError:
        return False
    others_may_rename = parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX  # /tmp is sticky: they may not
    return (stat.S_ISDIR(own.st_mode) and own.st_uid == os.geteuid() and not own.st_mode & 0o077
            and parent.st_uid in (0, os.geteuid()) and not others_may_rename)


def kit_key() -> str:
    """What names a server: a digest of everything its answers depend on besides the learner's folder."""
    digest = hashlib.sha256(repr((sys.prefix, sys.version, sys.platform, os.geteuid())).encode())
    names = set(KEY_VARIABLES) | {name for name in os.environ if name.startswith("SOFTLOOKUP_") and name != DISABLE}
    for name in sorted(names):
        digest.update(f"{name}={os.environ.get(name)}\0".encode())
    for entry in sys.path:  # installing or upgrading a package changes its site-packages folder
        if entry.endswith(("site-packages", "dist-packages")):
            digest.update(f"{entry}:{stamp(Path(entry))}\0".encode())
    for path in kit_files(PACKAGE_DIR):
        digest.update(f"{path.relative_to(PACKAGE_DIR)}:{stamp(path)}\0".encode())
    return digest.hexdigest()[:20]


def kit_files(root: Path) -> list[Path]:
    """Every file of the kit's package, bytecode caches left out (Python writes them as it imports)."""
    found = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        found += [Path(folder) / name for name in sorted(names)]
    return found


def stamp(path: Path) -> str:
    """A file's size and modification time, or "-" where it cannot be read: what tells that it changed."""
    try:
        status = os.stat(path)
    except OSError:
        return "-"
    return f"{status.st_size}/{status.st_mtime_ns}"


def socket_path(folder: Path, key: str) -> Path:
    return folder / f"check-{key}.sock"


# macOS's <sys/un.h>: the level and option that report a Unix socket's peer, as a struct xucred
# {u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16]}, of version 0.
SOL_LOCAL, LOCAL_PEERCRED, XUCRED = 0, getattr(socket, "LOCAL_PEERCRED", 1), struct.Struct("=IIh2x16I")


def supported() -> bool:
    """Whether this system gives the server what makes it safe: Unix sockets, a lock, and the peer's uid."""
    if not hasattr(socket, "AF_UNIX") or not (hasattr(socket, "SO_PEERCRED") or sys.platform == "darwin"):
        return False
    try:
        import fcntl  # noqa: F401 (the client's lock)
    except ImportError:
        return False
    return True


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the other end of a Unix socket, as the kernel reports it; None where it cannot be asked."""
    try:
        if hasattr(socket, "SO_PEERCRED"):
            _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
            return uid
        if sys.platform == "darwin":
            version, uid = struct.unpack_from("=II", conn.getsockopt(SOL_LOCAL, LOCAL_PEERCRED, XUCRED.size))
            return uid if version == 0 else None
    except (OSError, struct.error):
        pass
    return None


def same_user(conn: socket.socket) -> bool:
    """Whether the other end of a Unix socket runs as this user, as the kernel reports it.

    For the client that is whoever bound the socket: a server is started on
    a socket its first client bound, with the same uid. Where the kernel
    cannot say, it is nobody's.
    """
    uid = peer_uid(conn)
    return uid is not None and uid == os.geteuid()
