"""A stand-in for macOS or Windows on this Linux machine: the kit's code sees that system's Python, as near as can be.

It is not macOS or Windows, and it does not pretend to test them: the
kernel, the file system and the C library stay Linux's, and so do the
libraries beneath the kit (numpy, torch, pytest, Jupyter), which support
those systems themselves. What changes is what the kit's own code sees: its
modules (``grader``, ``softlookup``) and the command's own ``-c`` code get,
for ``import sys``, ``os``, ``socket`` and the like, a view of each module
as the other system's Python has it: its ``sys.platform``, without the
modules, functions, constants and socket options that system lacks, and
with the calls that behave otherwise there behaving so. Python's
multiprocessing starts by spawn, as on both. Every Python the command starts
(``sys.executable``: the kit's workers, its warm server) runs through the
stand-in again, by way of a small launcher script that takes
``sys.executable``'s place (it stays in ``standin-softlookup.<uid>`` in the
temporary folder, for a warm server that outlives the command).

``--system macos``: ``sys.platform`` is ``darwin``; no ``SO_PEERCRED``, and
macOS's ``LOCAL_PEERCRED`` answers instead (level 0, option 1, a ``struct
xucred``); ``socketpair`` refuses ``SOCK_SEQPACKET``; the C library has no
``prctl``, ``unshare``, ``mount`` or ``capset``; no ``epoll``; ``os.fork``
is refused once torch is loaded (macOS makes it unsafe: a crash, sometimes).

``--system windows``: ``sys.platform`` is ``win32``; no ``fcntl``,
``resource``, ``termios``, ``pwd``, ``grp``, ``pty`` or ``tty``; no
``os.fork``, uids, process groups, wait statuses or ``O_NOFOLLOW``; no
``AF_UNIX`` and no descriptor passing (``socketpair`` makes two TCP sockets
on the loopback, as Python does on Windows); none of POSIX's signals but
``SIGINT``, ``SIGTERM`` and a few, so no ``SIGKILL``; ``ctypes.CDLL(None)``
raises; ``select`` takes sockets only, and so does the default selector;
``subprocess`` refuses ``pass_fds`` and ``preexec_fn``; ``os.kill`` and
``Popen.kill`` end a process outright (``TerminateProcess``), except that
signal 0 or 1 is a Ctrl-C (``CTRL_C_EVENT``, ``CTRL_BREAK_EVENT``); text
read or written without a named encoding, output to a file or a pipe
included, is in Windows's code page, cp1252, for every module.

Usage: ``python tests/standin.py --system macos -- -m grader.cli check ...``:
the arguments after ``--`` are the Python command line (``-m MODULE``, ``-c
CODE`` or a script, with ``-I``, ``-u``, ``-X``...). The exit status is the
command's.
"""

from __future__ import annotations

import argparse
import builtins
import hashlib
import os
import shlex
import stat
import sys
import tempfile
import types
from pathlib import Path

SYSTEMS = {"macos": "darwin", "windows": "win32"}


def launcher(system: str) -> Path:
    """The script that stands in for ``sys.executable``: this Python, through this stand-in, for ``system``."""
    folder = Path(tempfile.gettempdir()) / f"standin-softlookup.{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    which = [sys.executable, str(Path(__file__).resolve()), system]  # one script each: checkouts do not collide
    script = folder / f"python-{system}-{hashlib.sha256(repr(which).encode()).hexdigest()[:12]}"
    if not script.exists():
        arguments = " ".join(map(shlex.quote, [*which[:2], "--boot", system, str(script)]))
        temporary = script.with_name(f"{script.name}.{os.getpid()}")
        temporary.write_text(f'#!/bin/sh\nexec {arguments} -- "$@"\n')
        temporary.chmod(stat.S_IRWXU)
        temporary.replace(script)
    return script


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--system", choices=SYSTEMS, help="the system to stand in for")
    parser.add_argument("--boot", nargs=2, metavar=("SYSTEM", "LAUNCHER"), help=argparse.SUPPRESS)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    if options.boot:
        return boot(*options.boot, command)
    if not options.system or not command:
        parser.error("give --system and the Python command line after --")
    script = str(launcher(options.system))
    os.execv(script, [script, *command])  # the command is this process: its signals, its exit status


def boot(system: str, script: str, command: list[str]) -> int:
    """In the stood-in process: give the kit its view of ``system``, then run ``command`` as Python would."""
    import multiprocessing

    views, missing_modules = (macos_views if system == "macos" else windows_views)()
    views["sys"] = View(sys, platform=SYSTEMS[system])
    show_the_kit(views, missing_modules)
    if system == "windows":
        text_in_code_page()
    sys.executable = sys._base_executable = script  # every Python the command starts comes back through here
    multiprocessing.set_executable(script)
    multiprocessing.set_start_method("spawn", force=True)
    del sys.path[0]  # this file's folder: the command decides what goes first
    return run_as_python(command)


class View(types.ModuleType):
    """A module as the kit sees it on the stood-in system: the ``missing`` names are not there, ``changed`` differ."""

    def __init__(self, real, missing=(), **changed):
        super().__init__(real.__name__, real.__doc__)
        vars(self).update(_real=real, _missing=frozenset(missing), _changed=changed)

    def __getattr__(self, name):
        if name in self._missing:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        if name in self._changed:
            return self._changed[name]
        return getattr(self._real, name)

    def __setattr__(self, name, value):  # sys.stdout = ..., sys.dont_write_bytecode = ...: the real module's
        setattr(self._real, name, value)

    def __dir__(self):
        return sorted((set(dir(self._real)) | set(self._changed)) - self._missing)


def is_the_kit(module_name: str) -> bool:
    """Whether an importing module is the kit's (or the command's own ``-c`` code), which sees the stood-in system."""
    return module_name in ("__main__", "softlookup") or module_name.split(".")[0] == "grader"


def show_the_kit(views: dict, missing_modules: set):
    """From now on the kit's ``import os`` gets ``views["os"]``, and ``import fcntl`` fails where it is missing."""
    original = builtins.__import__

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):
        if level or not is_the_kit((globals or {}).get("__name__") or ""):
            return original(name, globals, locals, fromlist, level)
        if name.partition(".")[0] in missing_modules:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        module = original(name, globals, locals, fromlist, level)
        return views.get(name if fromlist else name.partition(".")[0], module)

    builtins.__import__ = __import__


# -- macOS ---------------------------------------------------------------------------------------------------

LINUX_ONLY_CALLS = ("prctl", "unshare", "setns", "mount", "umount2", "pivot_root", "capset")
SOL_LOCAL, LOCAL_PEERCRED = 0, 1  # macOS's <sys/un.h>


def macos_views() -> tuple[dict, set]:
    import ctypes
    import os
    import select
    import socket
    import struct

    peercred, getsockopt = socket.SO_PEERCRED, socket.socket.getsockopt

    def local_peercred(self, level, option, *size):
        """LOCAL_PEERCRED on a Unix socket, as macOS answers it: a struct xucred of version 0."""
        if (level, option) == (SOL_LOCAL, LOCAL_PEERCRED) and self.family == socket.AF_UNIX:
            _, uid, gid = struct.unpack("3i", getsockopt(self, socket.SOL_SOCKET, peercred, 12))
            return struct.pack("=IIh2x16I", 0, uid, 1, gid, *[0] * 15)[: size[0] if size else None]
        return getsockopt(self, level, option, *size)

    socket.socket.getsockopt = local_peercred  # what Linux itself answers there (IP_TOS) means nothing to a Unix socket

    def socketpair(family=socket.AF_UNIX, type=socket.SOCK_STREAM, proto=0):
        if type == socket.SOCK_SEQPACKET:
            raise OSError(43, "Protocol not supported")  # EPROTONOSUPPORT, as macOS numbers it
        return socket.socketpair(family, type, proto)

    class LibraryWithoutLinuxCalls(ctypes.CDLL):
        def __getitem__(self, name):  # CDLL's attributes come from here too
            if name in LINUX_ONLY_CALLS:
                raise AttributeError(f"dlsym(RTLD_DEFAULT, {name}): symbol not found")
            return super().__getitem__(name)

    def fork():
        if "torch" in sys.modules:
            raise OSError("fork() once torch is loaded is unsafe on macOS, and the stand-in refuses it")
        return os.fork()

    return {"socket": View(socket, ["SO_PEERCRED", "SO_PEERSEC"], socketpair=socketpair),
            "ctypes": View(ctypes, CDLL=LibraryWithoutLinuxCalls),
            "os": View(os, ["sched_getaffinity", "sched_setaffinity", "pidfd_open", "memfd_create", "pipe2",
                            "waitid"], fork=fork),
            "select": View(select, ["epoll"])}, set()


# -- Windows -------------------------------------------------------------------------------------------------

WINDOWS_SIGNALS = {"SIGABRT", "SIGFPE", "SIGILL", "SIGINT", "SIGSEGV", "SIGTERM"}
NOT_ON_WINDOWS = {
    "modules": {"fcntl", "resource", "termios", "pwd", "grp", "pty", "tty", "syslog", "crypt", "posix"},
    "os": ["fork", "forkpty", "register_at_fork", "setsid", "getsid", "setpgid", "getpgid", "getpgrp", "killpg",
           "getuid", "geteuid", "getgid", "getegid", "getgroups", "setgroups", "setuid", "setgid", "seteuid",
           "setegid", "setreuid", "setregid", "initgroups", "chown", "lchown", "fchown", "getloadavg",
           "sched_getaffinity", "pidfd_open", "memfd_create", "pipe2", "mkfifo", "openpty", "wait3", "wait4",
           "waitid", "sysconf", "statvfs", "uname", "nice", "set_blocking", "get_blocking", "WIFSIGNALED",
           "WTERMSIG", "WIFEXITED", "WEXITSTATUS", "WIFSTOPPED", "WSTOPSIG", "WCOREDUMP", "WNOHANG",
           "O_NOFOLLOW", "O_CLOEXEC", "O_DIRECTORY", "O_PATH", "O_NONBLOCK"],
    "signal": ["alarm", "setitimer", "getitimer", "pause", "pthread_kill", "pthread_sigmask", "sigpending",
               "sigwait", "siginterrupt", "sigtimedwait", "sigwaitinfo", "pidfd_send_signal"],
    "socket": ["AF_UNIX", "SO_PEERCRED", "SO_PEERSEC", "send_fds", "recv_fds", "SCM_RIGHTS", "CMSG_LEN",
               "CMSG_SPACE", "AF_NETLINK", "AF_PACKET"],
    "select": ["poll", "epoll", "devpoll", "kqueue"],
}


def text_in_code_page(code_page: str = "cp1252"):
    """Text as Windows's Python writes and reads it where no encoding is named: in the ANSI code page. So does
    output to a file or a pipe (a console would take anything). Everyone's, not only the kit's, as there."""
    import io

    real_open = io.open

    def open(file, mode="r", buffering=-1, encoding=None, *args, **kwargs):
        if encoding is None and "b" not in mode:
            encoding = code_page
        return real_open(file, mode, buffering, encoding, *args, **kwargs)

    builtins.open = io.open = open
    io.text_encoding = lambda encoding, stacklevel=2: code_page if encoding is None else encoding
    for stream in (sys.stdout, sys.stderr):
        if not stream.isatty():
            stream.reconfigure(encoding=code_page)


def windows_views() -> tuple[dict, set]:
    import ctypes
    import os
    import select
    import selectors
    import signal
    import socket
    import subprocess

    def end(pid: int, ctrl_c: bool = False):
        os.kill(pid, signal.SIGINT if ctrl_c else signal.SIGKILL)

    def kill(pid, sig):
        """os.kill as Windows has it: signal 0 or 1 is a Ctrl-C (CTRL_C_EVENT, CTRL_BREAK_EVENT), any other ends it."""
        end(pid, ctrl_c=sig in (0, 1))

    def socketpair(family=socket.AF_INET, type=socket.SOCK_STREAM, proto=0):
        """Python's own socketpair on Windows: two TCP sockets connected on the loopback."""
        if family != socket.AF_INET:
            raise ValueError("Only AF_INET and AF_INET6 socket address families are supported")
        with socket.socket(family, type, proto) as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            ours = socket.socket(family, type, proto)
            ours.connect(listener.getsockname())
            theirs, _ = listener.accept()
        return ours, theirs

    class WindowsCDLL(ctypes.CDLL):
        def __init__(self, name, *args, **kwargs):
            if name is None:
                raise TypeError("ctypes.CDLL(None): Windows has no library of the process's own symbols")
            super().__init__(name, *args, **kwargs)

    def sockets_only(readable, writable, exceptional, timeout=None):
        for item in (*readable, *writable, *exceptional):
            descriptor = item if isinstance(item, int) else item.fileno()
            if not stat.S_ISSOCK(os.fstat(descriptor).st_mode):
                raise OSError(10038, "An operation was attempted on something that is not a socket")
        return select.select(readable, writable, exceptional, timeout)

    class WindowsSelector(selectors.SelectSelector):
        _select = staticmethod(sockets_only)

    class WindowsPopen(subprocess.Popen):
        def __init__(self, *args, pass_fds=(), preexec_fn=None, start_new_session=False, **kwargs):
            if preexec_fn is not None:
                raise ValueError("preexec_fn is not supported on Windows platforms")
            assert not pass_fds, "pass_fds not supported on Windows."
            super().__init__(*args, **kwargs)  # start_new_session: Windows ignores it

        def terminate(self):
            """TerminateProcess: kill and terminate both end the process outright."""
            if self.returncode is None:
                try:
                    end(self.pid)
                except ProcessLookupError:
                    pass

        kill = terminate

        def send_signal(self, sig):
            if sig == signal.SIGTERM:
                self.terminate()
            elif sig in (0, 1):
                end(self.pid, ctrl_c=True)
            else:
                raise ValueError(f"Unsupported signal: {sig}")

    posix_signals = [name for name in dir(signal) if name.startswith("SIG") and not name.startswith("SIG_")
                     and name not in WINDOWS_SIGNALS]
    return {"os": View(os, NOT_ON_WINDOWS["os"], kill=kill),
            "signal": View(signal, posix_signals + NOT_ON_WINDOWS["signal"], SIGBREAK=21, CTRL_C_EVENT=0,
                           CTRL_BREAK_EVENT=1),
            "socket": View(socket, NOT_ON_WINDOWS["socket"], socketpair=socketpair),
            "ctypes": View(ctypes, CDLL=WindowsCDLL),
            "select": View(select, NOT_ON_WINDOWS["select"], select=sockets_only),
            "selectors": View(selectors, DefaultSelector=WindowsSelector, SelectSelector=WindowsSelector),
            "subprocess": View(subprocess, Popen=WindowsPopen)}, NOT_ON_WINDOWS["modules"]


def run_as_python(arguments: list[str]) -> int:
    """Run a Python command line (options, then ``-c``, ``-m`` or a script) in this process."""
    import runpy
    import types

    arguments, isolated = list(arguments), False
    while arguments and arguments[0].startswith("-") and arguments[0] not in ("-c", "-m", "-"):
        flag = arguments.pop(0)
        if flag in ("-X", "-W"):
            arguments.pop(0)
        elif not flag.startswith("--"):
            isolated = isolated or "I" in flag
            if "u" in flag:
                sys.stdout.reconfigure(write_through=True)
                sys.stderr.reconfigure(write_through=True)
    if not arguments:
        raise SystemExit("standin: no command to run")
    if arguments[0] == "-c":
        sys.argv = ["-c", *arguments[2:]]
        if not isolated:
            sys.path.insert(0, "")
        main_module = types.ModuleType("__main__")
        main_module.__dict__["__builtins__"] = __builtins__
        sys.modules["__main__"] = main_module
        exec(compile(arguments[1], "<string>", "exec"), main_module.__dict__)
    elif arguments[0] == "-m":
        sys.argv = [arguments[1], *arguments[2:]]
        if not isolated:
            sys.path.insert(0, os.getcwd())
        runpy.run_module(arguments[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(arguments)
        sys.path.insert(0, os.path.dirname(os.path.abspath(arguments[0])))
        runpy.run_path(arguments[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
