"""The learner's side: hand ``softlookup check``'s command line to the warm server, or say it cannot.

:func:`check` is called by ``grader.cli`` before anything heavy is imported:
a check served warm costs this process a Python start-up and a socket. It
returns the exit status, or None whenever the server is off or anything
about it fails, and the caller then grades in-process as before. Nothing is
printed before the server's whole answer is in, so a fallback never repeats
half of a table.

The first check finds no server: it binds the socket itself, under a lock,
and starts the server with the listening socket already open (so the
request can be sent at once, and two checks started together cannot start
two servers), in a process session of its own (Ctrl-C in the terminal reaches this
process only; it passes the interrupt on).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
from pathlib import Path

from grader.warm import place

# The learner's terminal, which the server's rich console must see as its own; and where hints are recorded.
TERMINAL_VARIABLES = ("TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "XDG_STATE_HOME", "HOME")
MAX_ANSWER = 64 * 2**20


class Unavailable(Exception):
    """The warm server cannot serve this check; the caller grades in-process."""


def wanted(argv: list[str]) -> bool:
    """Whether this command line may go to the server (``--watch`` keeps its own process warm)."""
    if os.environ.get(place.DISABLE, "") not in ("", "0") or not place.supported():
        return False
    return not {"--no-server", "--watch", "-h", "--help"} & set(argv)


def check(argv: list[str]) -> int | None:
    """``softlookup check ARGV`` run by the warm server, its output written here; None: grade in-process."""
    if not wanted(argv):
        return None
    try:
        answer = request(_request(argv))
    except (Unavailable, OSError, ValueError) as error:
        return _fell_back(str(error) or type(error).__name__)
    except KeyboardInterrupt:  # pressed twice: the server was told at the first
        print("softlookup check: interrupted; nothing was written", file=sys.stderr)
        return 130
    if "declined" in answer:
        return None  # a command line it does not serve, by design: no word about it
    if not isinstance(answer.get("exit"), int):
        return _fell_back(str(answer.get("error", "no exit status in its answer"))[:200])
    for stream, text in ((sys.stdout, answer.get("stdout", "")), (sys.stderr, answer.get("stderr", ""))):
        stream.write(text)
        stream.flush()
    return answer["exit"]


def _fell_back(why: str) -> None:
    """Say, in one line on stderr, that the server failed and the check runs in this process (slower, same
    verdicts): a learner wondering why a check is slow today, and a test of the warm road, can both see it."""
    print(f"{FALLBACK}: {why}", file=sys.stderr)
    return None


FALLBACK = "softlookup check: the warm server could not serve this check, so it runs in this process instead"


def _request(argv: list[str]) -> dict:
    terminal = sys.stdout.isatty()
    size = os.get_terminal_size(sys.stdout.fileno()) if terminal else None
    return {"argv": list(argv), "cwd": os.getcwd(), "tty": terminal, "encoding": sys.stdout.encoding,
            "size": list(size) if size else None,
            "env": {name: os.environ[name] for name in TERMINAL_VARIABLES if name in os.environ}}


def request(message: dict, start: bool = True) -> dict:
    """Send ``message`` to this kit's server (starting it if ``start``) and return its answer."""
    folder = place.private_folder()
    if folder is None:
        raise Unavailable("no private folder for the socket")
    with _connected(place.socket_path(folder, place.kit_key()), start) as conn:
        conn.sendall(json.dumps(message).encode())
        conn.shutdown(socket.SHUT_WR)
        return json.loads(_answer(conn))


def _connected(path: Path, start: bool) -> socket.socket:
    """A connection to the server at ``path``; the server is started first where none listens."""
    found = _connect(path)
    if found is None and start:
        with _locked(path.with_suffix(".lock")):
            found = _connect(path)  # another check may have started it meanwhile
            if found is None:
                _start(path)
                found = _connect(path)
    if found is None:
        raise Unavailable("no server listens")
    return found


def _connect(path: Path) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        conn.close()
        return None
    if not place.same_user(conn):  # the uid of whoever bound it: never another user's socket
        conn.close()
        raise Unavailable("the socket belongs to another user")
    return conn


@contextlib.contextmanager
def _locked(path: Path):
    import fcntl  # where place.supported() says it is there

    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def _start(path: Path):
    """Bind the socket here and start the server with it, so that a request can be sent before it is ready."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a socket left by a server that was killed
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with listener:
        listener.bind(str(path))
        listener.listen(16)
        command = (f"import sys; sys.path.insert(0, {str(place.PACKAGE_DIR.parent)!r}); "
                   "from grader.warm.server import main; main()")
        import subprocess  # only the first check of a session starts a server: the others never import it

        with open(path.with_suffix(".log"), "wb") as log:
            subprocess.Popen([sys.executable, "-c", command, str(listener.fileno()), str(path)],
                             pass_fds=[listener.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=log, cwd="/", start_new_session=True)


def _answer(conn: socket.socket) -> bytes:
    """The server's whole answer, after the line with its pid; Ctrl-C here interrupts the grading there."""
    data, pid, interrupted = b"", None, False
    while True:
        try:
            chunk = conn.recv(2**16)
        except KeyboardInterrupt:
            if interrupted or pid is None:
                raise
            interrupted = True
            os.kill(pid, signal.SIGINT)  # the server answers "interrupted", as check does in-process
            continue
        if not chunk:
            return data.partition(b"\n")[2]
        data += chunk
        if len(data) > MAX_ANSWER:
            raise Unavailable("the answer is too large")
        if pid is None and b"\n" in data:
            pid = int(data.partition(b"\n")[0])
