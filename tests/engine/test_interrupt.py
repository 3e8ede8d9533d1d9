"""Ctrl-C during a grading: every worker is gone before pytest even writes its report of the interruption.

Pytest formats a KeyboardInterrupt's traceback with the source of every frame
(2 to 3.5 s on a busy two-core machine) before the session's teardown would
stop the workers. The kit's own hook runs first: it kills them, and cuts the
traceback to the frame where Ctrl-C came. An observer hook that runs last sees
the state then. The grading runs in a child process, which Ctrl-C is sent
to once its learner's call is running (a state, waited for).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from grader.engine import registry
from helpers import ENV, with_ctrl_c

LOOPING_SOFTMAX = "def softmax(x, axis=-1):\n    while True:\n        pass\n"

GRADE_AND_OBSERVE = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    import pytest
    from grader.engine import registry
    from grader.engine.classes.runner import run_checks

    def workers():
        # the processes under this one, below its fork servers: supervisors and workers
        table = {}
        for name in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if fields[0] != "Z":
                table.setdefault(int(fields[1]), []).append(int(name))
        found, todo = [], [(os.getpid(), 0)]
        while todo:
            pid, generation = todo.pop()
            for child in table.get(pid, []):
                found += [child] if generation >= 1 else []
                todo.append((child, generation + 1))
        return found

    class Observer:
        @pytest.hookimpl(trylast=True)
        def pytest_keyboard_interrupt(self, excinfo):
            seen = {"workers": workers(), "frames": len(excinfo.traceback)}
            os.write(int(sys.argv[2]), (json.dumps(seen) + "\\n").encode())  # pytest captures stdout now

    try:
        run_checks(Path(sys.argv[1]), [registry.exercise("softmax")], plugins=[Observer()])
    except KeyboardInterrupt:
        os.write(int(sys.argv[2]), (json.dumps({"interrupted": True}) + "\\n").encode())
""")


def generation_below(root: int, generation: int) -> bool:
    """Whether a process ``generation`` levels below ``root`` lives (3: a worker, under its supervisor)."""
    table = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        table.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(name))
    level = [root]
    for _ in range(generation):
        level = [child for pid in level for child in table.get(pid, [])]
    return bool(level)


def test_ctrl_c_stops_every_worker_before_pytest_reports_it(tmp_path):
    (tmp_path / "softmax.py").write_text(LOOPING_SOFTMAX)
    reading, writing = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", GRADE_AND_OBSERVE, str(tmp_path), str(writing)],
                             pass_fds=[writing], env=ENV, preexec_fn=with_ctrl_c)
    os.close(writing)
    deadline = time.monotonic() + 300
    while not generation_below(child.pid, 3):  # a worker running the learner's loop
        assert child.poll() is None and time.monotonic() < deadline, "no worker started"
        time.sleep(0.01)
    child.send_signal(signal.SIGINT)
    child.wait(300)
    with os.fdopen(reading) as pipe:
        out = pipe.read()
    observed, ended = [json.loads(line) for line in out.splitlines()]
    assert ended == {"interrupted": True}
    assert observed["workers"] == [], f"workers still alive when pytest reported the interruption: {observed}"
    assert observed["frames"] == 1, "pytest would parse the source of every frame before the grading ends"


CTRL_C_IN_A_HIDDEN_FRAME = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    import pytest
    from grader.engine import registry
    from grader.engine.classes.runner import run_checks

    class CtrlC:
        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_call(self, item):
            __tracebackhide__ = True  # as in pluggy's hook calls, where Ctrl-C often lands
            raise KeyboardInterrupt

        @pytest.hookimpl(trylast=True)
        def pytest_keyboard_interrupt(self, excinfo):  # after the kit's hook cut the traceback
            self.shown = [not entry.ishidden(excinfo) for entry in excinfo.traceback]

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(self, session):
            if sys.argv[2] == "winding-up-fails":
                raise RuntimeError("a plugin failed after Ctrl-C")

    ctrl_c = CtrlC()
    try:
        run_checks(Path(sys.argv[1]), [registry.exercise("softmax")], plugins=[ctrl_c])
    except KeyboardInterrupt:
        print(json.dumps({"interrupted": True, "frames shown": ctrl_c.shown}))
""")


@pytest.mark.parametrize("after", ["reported", "winding-up-fails"])
def test_ctrl_c_ends_the_grading_as_an_interruption_wherever_it_lands(tmp_path, after):
    """Ctrl-C in a frame pytest hides, and a plugin failing as the session winds up after it: the grading still
    ends with KeyboardInterrupt (the watch's "Stopped watching.", check's exit 130), never a traceback."""
    shutil.copy(registry.SOLUTIONS_DIR / "softmax.py", tmp_path)
    done = subprocess.run([sys.executable, "-c", CTRL_C_IN_A_HIDDEN_FRAME, str(tmp_path), after], env=ENV,
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == '{"interrupted": true, "frames shown": [true]}', done.stderr[-3000:]
