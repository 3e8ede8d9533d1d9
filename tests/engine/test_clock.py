"""A call's time limit counts the worker's own computing, not how busy the machine is.

The learners' rules (docs/learners.md) state the limits: a call may compute for its time limit in
CPU time (read by the judge from the kernel, never from the worker), may wait
(sleep, block) for twice that, and a function's first call has room for its
one-time costs on top, before it is called a hang. These
tests grade right code on a machine made busy on purpose and assert the
verdicts, never a duration.
"""

from __future__ import annotations

import csv
import os
import time
from types import SimpleNamespace

import pytest

from helpers import cpu_hog, make_submission, softlookup
from grader.engine import clock, registry
from grader.engine.errors import SubmissionError
from grader.engine.slot import Limits
from test_sandbox import learner_sandbox, modules_in

TIMED = '''
import time

def burn(seconds):
    """Compute for `seconds` of this process's CPU time, then answer."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return seconds

def load():
    """Fill 32 MB of fresh memory, as a library's lazy import loads its code and data."""
    return len(b"x" * (32 * 2**20))

_first_call = True

def costly_once():
    """A first call loads, then pays 1.5 s once, as a library's lazy import does; later calls cost nothing."""
    global _first_call
    if _first_call:
        _first_call = False
        load()
        burn(1.5)
    return 1

def load_then_burn(seconds):
    load()
    return burn(seconds)

def sleep(seconds):
    time.sleep(seconds)
    return seconds
'''


@pytest.fixture
def timed(tmp_path):
    with learner_sandbox(modules_in(tmp_path / "timed", {"timed": TIMED}), Limits(time=1.0)) as pair:
        yield pair


def test_the_clocks_are_the_kernels():
    """This process's clocks read from /proc: computing is CPU time, sleeping is waiting."""
    reading = clock.Clocks(os.getpid()).read()
    assert reading is not None and reading.cpu > 0
    computing = clock.Meter(os.getpid(), 0.2)
    while computing.left() > 0:
        pass
    waiting = clock.Meter(os.getpid(), 0.1)
    while waiting.left() > 0:
        time.sleep(0.02)
    assert (computing.bound, waiting.bound) == ("computing", "waiting")
    assert clock.Clocks(None).read() is None  # no process to read: the wall clock decides
    assert clock.Clocks(2**22 + 1).read() is None  # no such process


def test_right_code_keeps_its_answers_on_a_busy_machine(timed):
    """0.6 s of computing under a 1 s limit, five times, with four busy loops on its core beside it."""
    learner, sandbox = timed
    sandbox.begin_submission(budget=4.0)  # 3 s of computing in all: the queueing is not charged
    with cpu_hog():
        answers = [learner.timed.burn(0.6) for _ in range(5)]
    assert answers == [0.6] * 5


def test_a_one_time_cost_is_not_a_hang(timed):
    """A first call that pays 1.5 s once runs past the 1 s limit, within what a first call may take more."""
    learner, sandbox = timed
    assert learner.timed.costly_once() == 1
    assert learner.timed.costly_once() == 1 and not sandbox.hung


def test_waiting_is_held_to_the_backstop(timed):
    learner, _ = timed
    with pytest.raises(SubmissionError, match="waited for more than 4 s without computing") as error:  # 2 x (1 + 1)
        learner.timed.sleep(60)
    assert error.value.kind == "timeout"


def test_computing_too_long_is_a_hang(timed):
    """A first call that loads nothing is held to its limit alone: a loop gets no allowance for one-time costs."""
    learner, _ = timed
    with pytest.raises(SubmissionError, match=r"computed for more than its 1 s time limit \(of CPU time") as error:
        learner.timed.burn(30)
    assert error.value.kind == "timeout" and "a first call may take" not in str(error.value)


def test_a_first_call_that_loads_has_its_allowance(timed):
    """A first call that loads (32 MB of fresh memory) and then computes on is stopped past the allowance too."""
    learner, _ = timed
    with pytest.raises(SubmissionError, match=r"computed for more than its 1 s time limit and the 1 s more a first "
                                              r"call may take \(of CPU time") as error:
        learner.timed.load_then_burn(30)
    assert error.value.kind == "timeout"


def test_the_allowance_waits_for_page_faults():
    """The kernel's page faults tell a one-time cost from a loop: the allowance counts only once they are seen."""
    meter = clock.Meter(os.getpid(), 1.0, allowance=5.0)
    end = time.process_time() + 0.05
    while time.process_time() < end:
        pass
    assert not meter.loading and meter.left() < 1.0
    loaded = b"x" * (32 * 2**20)  # 8,192 fresh pages of 4 kB, written
    time.sleep(clock.FRESH)  # the reading above may otherwise answer again
    assert meter.left() > 5.0 and meter.loading and len(loaded) == 32 * 2**20
    assert clock.Meter(None, 1.0, allowance=5.0).left() > 5.0  # no clocks to read: given as it stands


def test_a_reading_answers_for_a_moment_and_a_charge_reads_afresh(monkeypatch):
    """While an answer's messages arrive in a burst, how long is left comes from a reading younger than FRESH; what
    the call is charged is always read."""
    now, reads = [100.0], []

    def read(self):
        reads.append(now[0])
        return clock.Reading(cpu=now[0] - 100.0, queued=0.0, wall=now[0], faults=5)  # computing all along

    monkeypatch.setattr(clock, "time", SimpleNamespace(monotonic=lambda: now[0]))
    monkeypatch.setattr(clock.Clocks, "read", read)
    meter = clock.Meter(12345, 1.0)
    now[0] += clock.FRESH / 2
    assert meter.left() == 1.0 and len(reads) == 1  # the reading at the start answers
    now[0] += clock.FRESH
    assert meter.left() == pytest.approx(1.0 - 1.5 * clock.FRESH) and len(reads) == 2
    assert meter.charge() == pytest.approx(1.5 * clock.FRESH) and len(reads) == 3


def test_a_kernel_that_counts_no_faults_gives_the_allowance(monkeypatch):
    """A kernel that shows no page faults at all (gVisor may) cannot tell loading from looping: the first call keeps
    its allowance, as where nothing can be read."""
    monkeypatch.setattr(clock.Clocks, "read", lambda self: clock.Reading(cpu=0.0, queued=0.0, wall=time.monotonic(),
                                                                      faults=0))
    meter = clock.Meter(12345, 1.0, allowance=5.0)
    assert meter.loading and meter.left() > 5.0


# -- a class, graded twice: on a quiet machine and on a busy one -----------------------------------------------------

@pytest.mark.slow
def test_a_class_gets_full_marks_on_a_busy_machine(tmp_path):
    """`softlookup grade --jobs 2` of the learning exercise, a 2.5 s time limit, beside three busy loops on its core.

    The class holds the reference and right answers that compute slowly (a
    Python loop per query and key: 0.5 s of CPU per public fit, 0.3 s per
    hidden one) or pay a one-time cost (torch.func's first gradient: 1 s of
    CPU, most of it importing), which lost points on a busy machine when a
    call was held to its wall time. Right answers all, they earn every point,
    as on a quiet machine. The grading and the loops share one core, each
    loop in a process session of its own, so a worker gets a fifth of it or
    less, and held to the wall clock the slow answers time out (in
    answer_slope's first gradient and in the 200-step fits) and lose 23 of
    31 points. The limit leaves room for CPU time itself growing on a busy
    machine (a 300-step hidden fit took 1.0 s beside 12 loops, and a 1 s
    limit failed it).
    """
    from wild import RIGHT, SLOW_RIGHT

    submissions = tmp_path / "class"
    make_submission(submissions / "reference")
    for index, name in enumerate(SLOW_RIGHT):
        make_submission(submissions / f"student-{index}", files=RIGHT[name])
    with cpu_hog(loops=3):
        done = softlookup("grade", submissions, "--out", tmp_path / "busy", "--jobs", "2", "--exercise", "learning",
                          "--time-limit", "2.5")
    assert done.returncode == 0, done.stdout + done.stderr
    with open(tmp_path / "busy" / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    full = registry.exercise("learning").max_points
    assert len(rows) == len(SLOW_RIGHT) + 1
    assert all(float(row["score"]) == float(row["learning"]) == full and row["status"] == "ok"
               for row in rows.values()), {name: (row["score"], row["status"]) for name, row in rows.items()}
