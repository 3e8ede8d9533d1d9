"""``softlookup check`` and ``--watch`` as a learner sees them: a terminal of 80 columns by 24 lines.

The watch runs in a pseudo-terminal of that size; the screen is what a
terminal shows after the last redraw (the clear-screen sequence): the last
24 lines of what followed it, escape sequences aside. The learner has
finished the three numpy exercises, the GPT-2 ones are still stubs, and then
breaks softmax: its failure must be on the screen, not scrolled away. The
same holds for a plain ``softlookup check`` of an exercise with ten failing
checks: its report is cut to fit, the first failures on the screen.
"""

import contextlib
import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from helpers import ASSIGNMENTS, SOLUTIONS, most, partly, with_ctrl_c
from mistakes import MISTAKES

COLUMNS, LINES = 80, 24
SIGN_MISTAKE = next(mistake for mistake in MISTAKES if mistake.name == "soft score sign flipped")
CLEAR = b"\x1b[2J"
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
NAIVE_SOFTMAX = ("import numpy as np\n\n\ndef softmax(x, axis=-1):\n    e = np.exp(x)  # no max subtracted\n"
                 "    return e / e.sum(axis=axis, keepdims=True)\n")


class Terminal:
    """A process on a pseudo-terminal of COLUMNS x LINES, and the screens it has drawn."""

    def __init__(self, command, env, preexec_fn=with_ctrl_c):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
        # with_ctrl_c: a run started where SIGINT is ignored (nohup, `&`) would pass that on, and Ctrl-C do nothing
        self.process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env,
                                        start_new_session=True, preexec_fn=preexec_fn)
        os.close(slave)
        self.output = b""

    def screen_after(self, redraws: int, timeout: float = 300) -> list[str]:
        """The screen once ``redraws`` redraws have finished (each ends with watch's own line)."""
        deadline = time.monotonic() + timeout
        while self.output.count(b"Watching") < redraws:
            assert time.monotonic() < deadline, f"no redraw in {timeout:g} s:\n{self.output.decode()[-3000:]}"
            if select.select([self.master], [], [], 1)[0]:
                self.output += os.read(self.master, 65536)
        last = self.output[self.output.rindex(CLEAR) + len(CLEAR):].decode()
        return ESCAPES.sub("", last).replace("\r", "").splitlines()

    def everything(self, timeout: float = 300) -> list[str]:
        """All the process wrote, once it has ended, escape sequences aside."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None or select.select([self.master], [], [], 0.1)[0]:
            assert time.monotonic() < deadline, f"not done in {timeout:g} s:\n{self.output.decode()[-3000:]}"
            if select.select([self.master], [], [], 1)[0]:
                try:
                    self.output += os.read(self.master, 65536)
                except OSError:  # the other end closed
                    break
        return ESCAPES.sub("", self.output.decode()).replace("\r", "").splitlines()

    def stop(self):
        """Ctrl-C, as a learner stops it. Still running 30 s later: the failure says where it waits (its state
        and every thread's stack, which faulthandler prints on SIGABRT), and nothing it started is left."""
        try:
            os.killpg(self.process.pid, signal.SIGINT)
        except ProcessLookupError:  # it ended, and nothing it started is left
            pass
        try:
            self.everything(timeout=30)  # read as a terminal does: a full one would stall the process's last words
        except AssertionError:
            state = _state(self.process.pid)
            before = len(self.output)
            os.kill(self.process.pid, signal.SIGABRT)
            with contextlib.suppress(AssertionError):  # it had 10 s to print its stacks and end
                self.everything(timeout=10)
            pytest.fail(f"still running 30 s after Ctrl-C: {state}\n"
                        f"{self.output[before:].decode(errors='replace')[-6000:]}")
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            os.close(self.master)


def _state(pid: int) -> str:
    """What the kernel says of a process that does not end: its state, its signals, where it sleeps."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
        wchan = Path(f"/proc/{pid}/wchan").read_text()
    except OSError as error:
        return f"unreadable ({error})"
    shown = [line for line in status if line.split(":")[0] in ("State", "Threads", "SigPnd", "ShdPnd", "SigBlk",
                                                               "SigIgn", "SigCgt")]
    return "; ".join([*shown, f"wchan: {wchan}"])


def work_folder(tmp_path: Path) -> Path:
    """The learner's folder: the three numpy exercises done, the GPT-2 ones still stubs."""
    folder = tmp_path / "work"
    folder.mkdir()
    for stub in ASSIGNMENTS.glob("*.py"):
        shutil.copy(stub, folder)
    for module in ("softmax", "lookup", "attention"):
        shutil.copy(SOLUTIONS / f"{module}.py", folder)
    return folder


@pytest.fixture
def watched(tmp_path):
    folder = work_folder(tmp_path)
    env = {name: value for name, value in os.environ.items() if name not in ("COLUMNS", "LINES")}
    terminal = Terminal([sys.executable, "-m", "grader.cli", "check", "--watch", str(folder)],
                        {**env, "TERM": "xterm-256color", "XDG_STATE_HOME": str(tmp_path / "state"),
                         "PYTHONFAULTHANDLER": "1"})
    yield folder, terminal
    terminal.stop()


def test_the_failure_just_caused_is_on_an_80_by_24_screen(watched):
    folder, terminal = watched
    first = terminal.screen_after(1)
    assert len(first) <= LINES and all(len(line) <= COLUMNS for line in first), "\n".join(first)
    assert any("softmax.py" in line and f"{most('softmax')}/{most('softmax')}" in line and "done" in line for line in first), "\n".join(first)

    time.sleep(0.05)  # a new modification time, whatever the file system's resolution
    (folder / "softmax.py").write_text(NAIVE_SOFTMAX)
    screen = terminal.screen_after(2)
    shown = "\n".join(screen)
    assert len(screen) <= LINES, f"{len(screen)} lines: the top scrolled away\n{shown}"
    assert re.search("softmax.py: " + partly("softmax"), shown), shown
    assert "✗ test_large_scores" in shown and "overflows to inf" in shown, shown
    assert screen[-1].startswith("Watching"), shown


def test_check_of_an_exercise_with_ten_failures_fits_an_80_by_24_screen(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    shutil.copy(SOLUTIONS / "softmax.py", folder)
    shutil.copy(SOLUTIONS / "lookup.py", folder)
    SIGN_MISTAKE.apply(folder)  # ten of lookup's checks fail
    env = {name: value for name, value in os.environ.items() if name not in ("COLUMNS", "LINES")}
    terminal = Terminal([sys.executable, "-m", "grader.cli", "check", str(folder), "--exercise", "lookup"],
                        {**env, "TERM": "xterm-256color", "XDG_STATE_HOME": str(tmp_path / "state"),
                         "PYTHONFAULTHANDLER": "1"})
    try:
        screen = terminal.everything()
    finally:
        terminal.stop()
    shown = "\n".join(screen)
    assert len(screen) < LINES and all(len(line) <= COLUMNS for line in screen), f"{len(screen)} lines\n{shown}"
    assert re.search("lookup.py: " + partly("lookup"), shown) and "✗ test_lesson_table" in shown, shown  # the first failure
    assert "sign of the score is flipped" in shown, shown  # the one that names the mistake
    assert "more: in the whole report" in shown and "| less" in screen[-1], shown
