"""The warm server: ``softlookup check`` requests, one after another, in a process that stays warm.

Started by the first check (:mod:`grader.warm.client`) with its listening
socket already bound in the learner's private folder. For each connection it
checks the peer's uid, reads one request (the command line, the folder it
was typed in, the terminal it is shown on), runs ``softlookup check``'s own
``main`` as if in that terminal, and answers with the output and the exit
status. It exits when told to (a newer kit's server starting), when killed,
or after :data:`IDLE_SECONDS` without a request.

What it keeps between requests (a :class:`~grader.engine.classes.keeper.Keeper`, as
``--watch`` keeps them) is what one grading keeps within itself: the fork
servers with numpy, torch and transformers imported (they live as long as
this process), the answers of the reference and of the kit's GPT-2 code
(until the solutions change), and each exercise's result, given back while
no file its grading read has changed, no file was added or removed, and the
options are the same (:mod:`grader.engine.classes.keeper`). A result with a
timeout, a crash or a grader failure is not kept: those depend on the moment.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import sys
from pathlib import Path

from grader.commands import check
from grader.engine.classes.keeper import Keeper
from grader.warm import place
from grader.warm.client import TERMINAL_VARIABLES

IDLE_SECONDS = 15 * 60.0  # SOFTLOOKUP_SERVER_IDLE overrides it
MAX_REQUEST = 2**20


def main():
    """The server process: ``argv`` is the listening socket's descriptor and its path."""
    listener, path = socket.socket(fileno=int(sys.argv[1])), Path(sys.argv[2])
    ours = os.stat(path).st_ino
    signal.signal(signal.SIGTERM, _exit)
    _stop_older_servers(path)
    server = WarmServer()
    listener.settimeout(float(os.environ.get("SOFTLOOKUP_SERVER_IDLE", IDLE_SECONDS)))
    try:
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                return
            except KeyboardInterrupt:  # an interrupt meant for a check that had already ended
                continue
            with conn:
                try:
                    if not server.serve(conn):
                        return
                except (OSError, ValueError, KeyboardInterrupt):
                    continue  # that client gave up or sent nonsense; the next one is served
    finally:
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == ours:  # not the socket of a server started after this one
                path.unlink()


def _exit(signum, frame):
    raise SystemExit(0)


def _stop_older_servers(path: Path):
    """Tell the servers of earlier kits (other keys, same folder) to exit: their code is out of date."""
    for other in path.parent.glob("check-*.sock"):
        if other == path:
            continue
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(1.0)
            conn.connect(str(other))
            if place.same_user(conn):
                conn.sendall(b'{"stop": true}')


class WarmServer:
    """What the warm server keeps between requests (its Keeper, the count of checks served), and how it serves one."""

    def __init__(self):
        self.keeper = Keeper()
        self.served = 0

    def serve(self, conn: socket.socket) -> bool:
        """Answer one connection; False when it asked the server to exit."""
        if not place.same_user(conn):
            return True
        conn.sendall(f"{os.getpid()}\n".encode())  # whom the client interrupts on Ctrl-C
        conn.settimeout(10.0)
        data = b""
        while chunk := conn.recv(2**16):
            data += chunk
            if len(data) > MAX_REQUEST:
                return True
        message = json.loads(data)
        if message.get("stop"):
            with contextlib.suppress(OSError):  # a newer server does not wait for the answer
                conn.sendall(b'{"stopped": true}')
            return False
        if message.get("status"):
            answer = {"pid": os.getpid(), "served": self.served}
        else:
            answer = self.check(message)
            self.served += 1
        conn.settimeout(None)
        conn.sendall(json.dumps(answer).encode())
        return True

    def check(self, message: dict) -> dict:
        """``softlookup check`` on the request's command line, in its folder and terminal."""
        argv = [str(part) for part in message["argv"]]
        if _declined(argv):
            return {"declined": "this command line runs in its own process"}
        os.chdir(message["cwd"])
        handler = signal.getsignal(signal.SIGTERM)
        try:
            with _terminal(message) as (out, err):
                code = _main(argv, self.keeper)
                if self.keeper.kept and code in (0, 1):
                    modules = ", ".join(f"{name}.py" for name in self.keeper.kept)
                    print(f"Unchanged since your last check, so not graded again: {modules} "
                          "(--no-server grades everything).")
        except Exception as error:  # the client then grades in-process, as if there were no server
            return {"error": f"{type(error).__name__}: {error}"}
        finally:
            signal.signal(signal.SIGTERM, handler)  # check's main sets its own
            os.chdir("/")
        return {"exit": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def _declined(argv: list[str]) -> bool:
    """A command line that must not be served here: ``--watch`` (it keeps its own process) or ``--no-server``."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            args, _ = check.parser().parse_known_args(argv)
        except SystemExit:  # a usage mistake, which check's main reports
            return False
    return args.watch or args.no_server


def _main(argv: list[str], keeper: Keeper) -> int:
    try:
        return check.main(argv, grading=keeper.grade)
    except SystemExit as stop:  # argparse: --help, or a usage mistake already printed
        return stop.code if isinstance(stop.code, int) else 0
    except KeyboardInterrupt:  # the client passed on the learner's Ctrl-C
        print("softlookup check: interrupted; nothing was written", file=sys.stderr)
        return 130


class _Terminal(io.StringIO):
    """What the check writes to: the learner's terminal as rich and pytest ask about it, kept for the answer."""

    def __init__(self, tty: bool, encoding: str):
        super().__init__()
        self.tty, self._encoding = tty, encoding

    def isatty(self) -> bool:
        return self.tty

    @property
    def encoding(self) -> str:
        return self._encoding


@contextlib.contextmanager
def _terminal(message: dict):
    """Make this process look like the learner's terminal: its variables, its size, its streams."""
    env = {name: str(value) for name, value in message.get("env", {}).items() if name in TERMINAL_VARIABLES}
    if message.get("size"):
        columns, lines = message["size"]
        env = {"COLUMNS": str(columns), "LINES": str(lines)} | env
    before = {name: os.environ.get(name) for name in TERMINAL_VARIABLES}
    for name in TERMINAL_VARIABLES:
        os.environ.pop(name, None)
    os.environ.update(env)
    encoding = message.get("encoding") or "utf-8"
    out, err = _Terminal(bool(message.get("tty")), encoding), _Terminal(False, encoding)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield out, err
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
