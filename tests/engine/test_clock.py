"""A call's time limit counts the worker's own computing, not how busy the machine is.

The learners' rules (docs/learners.md) state the limits: a call may compute for its time limit in
CPU time (read by the judge from the kernel, never from the worker), may wait
(sleep, block) for twice that, and a function's first call has no more room
than a later one: what the libraries cost once is paid before learner code
runs, and nothing learner code does first (pages faulted in, a library
imported) buys it more time. These tests grade right code on a machine made
busy on purpose and assert the verdicts, never a duration.
"""

from __future__ import annotations

import csv
import os
import time
from types import SimpleNamespace

import pytest

from helpers import cpu_hog, make_submission, softlookup
from grader.engine import registry
from grader.engine.confinement import clock, fork_servers
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

def load_then_burn(seconds):
    """Fault in 64 MB of fresh memory (16,384 pages), as a library's lazy import loads its code, then compute: for
    `seconds` of CPU time in all."""
    end = time.process_time() + seconds
    loaded = bytearray(64 * 2**20)
    for page in range(0, len(loaded), 4096):
        loaded[page] = 1
    return burn(end - time.process_time())

def import_then_burn(seconds):
    """Import a library no worker has imported yet (scipy's statistics: thousands of page faults), then compute: for
    `seconds` of CPU time in all."""
    end = time.process_time() + seconds
    import scipy.stats
    return burn(end - time.process_time())

def first_gradient():
    """torch.func's first transform in a process imports a second of torch: right code pays it in its first call."""
    import torch
    return float(torch.func.grad(lambda x: (x * x).sum())(torch.ones(3))[0])

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
    computing = clock.Meter(clock.Clocks(os.getpid()), 0.2)
    while computing.left() > 0:
        pass
    waiting = clock.Meter(clock.Clocks(os.getpid()), 0.1)
    while waiting.left() > 0:
        time.sleep(0.02)
    assert (computing.bound, waiting.bound) == ("computing", "waiting")
    assert clock.Clocks(None).read() is None  # no process to read: the wall clock decides
    assert clock.Clocks(2**22 + 1).read() is None  # no such process


def test_right_code_keeps_its_answers_on_a_busy_machine(timed):
    """0.6 s of computing under a 1 s limit, twice, with four busy loops on its core beside it: each call waits in
    the queue for about 2.4 s, more than the 2 s a call may wait."""
    learner, sandbox = timed
    sandbox.begin_submission(budget=1.6)  # 1.2 s of computing in all, about 6 s on the clock: queueing is not charged
    with cpu_hog():
        answers = [learner.timed.burn(0.6) for _ in range(2)]
    assert answers == [0.6] * 2


@pytest.fixture
def own_fork_servers(monkeypatch):
    """Fork servers of the test's own, as `softlookup grade` of exercise 5 starts them: the run's shared one
    (tests/conftest.py) has imported transformers, which imports what torch.func's first use would."""
    started = {}
    monkeypatch.setattr(fork_servers, "_servers", started)
    yield
    for handle in started.values():
        handle.close()


def test_a_librarys_one_time_cost_is_paid_before_the_learners_code(tmp_path, own_fork_servers):
    """torch.func's first gradient, which costs a worker of torch's fork server 1.4 s of CPU, in a first call held
    to 0.5 s on a busy machine: the fork server paid it before any worker was forked (zygote.prepare_libraries)."""
    folder = modules_in(tmp_path / "timed", {"timed": TIMED})
    fork_servers.server("torch").wait_until_ready()  # its imports are no learner's call: not on the busy core
    with learner_sandbox(folder, Limits(time=0.5, needs="torch")) as (learner, sandbox), cpu_hog():
        assert learner.timed.first_gradient() == 2.0 and not sandbox.hung


def test_waiting_is_held_to_the_backstop(timed):
    learner, _ = timed
    with pytest.raises(SubmissionError, match="waited for more than 2 s without computing") as error:  # 2 x 1 s
        learner.timed.sleep(60)
    assert error.value.kind == "timeout"


def test_computing_too_long_is_a_hang(timed):
    learner, _ = timed
    with pytest.raises(SubmissionError, match=r"computed for more than its 1 s time limit \(of CPU time") as error:
        learner.timed.burn(30)
    assert error.value.kind == "timeout"


@pytest.mark.parametrize("first", ["load_then_burn", "import_then_burn"])
def test_what_a_first_call_does_first_buys_it_no_time(timed, first):
    """Pages faulted in, or a big library imported, and then 1.5 s of computing under a 1 s limit: a hang, as the
    loop alone would be. (An allowance for first calls that looked as if they paid a one-time cost let both
    through: 6.5 s of computing under a 5 s limit kept full marks.)"""
    learner, _ = timed
    with pytest.raises(SubmissionError, match=r"computed for more than its 1 s time limit \(of CPU time") as error:
        getattr(learner.timed, first)(1.5)
    assert error.value.kind == "timeout"


def test_a_reading_answers_for_a_moment_and_a_charge_reads_afresh(monkeypatch):
    """While an answer's messages arrive in a burst, how long is left comes from a reading younger than FRESH; what
    the call is charged is always read."""
    now, reads = [100.0], []

    def read(self):
        reads.append(now[0])
        return clock.Reading(cpu=now[0] - 100.0, queued=0.0, wall=now[0])  # computing all along

    monkeypatch.setattr(clock, "time", SimpleNamespace(monotonic=lambda: now[0]))
    monkeypatch.setattr(clock.Clocks, "read", read)
    meter = clock.Meter(clock.Clocks(None), 1.0)
    now[0] += clock.FRESH / 2
    assert meter.left() == 1.0 and len(reads) == 1  # the reading at the start answers
    now[0] += clock.FRESH
    assert meter.left() == pytest.approx(1.0 - 1.5 * clock.FRESH) and len(reads) == 2
    assert meter.charge() == pytest.approx(1.5 * clock.FRESH) and len(reads) == 3



def test_a_meter_says_once_when_its_call_waits_and_once_when_it_ends(monkeypatch):
    """While the call computes, nothing is said; once it has waited IDLE seconds without computing, True, once; at
    its end, False, once. A call that never waited ends in silence."""
    now, cpu = [100.0], [0.0]
    monkeypatch.setattr(clock, "time", SimpleNamespace(monotonic=lambda: now[0]))
    monkeypatch.setattr(clock.Clocks, "read", lambda self: clock.Reading(cpu=cpu[0], queued=0.0, wall=now[0]))
    told = []
    meter = clock.Meter(clock.Clocks(None), 5.0, on_waiting=told.append)
    for _ in range(100):  # a second of computing
        now[0] += 0.01
        cpu[0] += 0.01
        meter.left()
    assert told == []
    for _ in range(100):  # then a second asleep
        now[0] += 0.01
        meter.left()
    assert told == [True]
    meter.end()
    meter.end()
    assert told == [True, False]
    quiet = clock.Meter(clock.Clocks(None), 5.0, on_waiting=told.append)
    now[0] += clock.IDLE / 2
    quiet.left()
    quiet.end()
    assert told == [True, False]


# -- a class, graded twice: on a quiet machine and on a busy one -----------------------------------------------------

@pytest.mark.slow
def test_a_class_gets_full_marks_on_a_busy_machine(tmp_path):
    """`softlookup grade --jobs 2` of the learning exercise, a 2.5 s time limit, beside three busy loops on its core.

    The class holds the reference and right answers that compute slowly (a
    Python loop per query and key: 0.5 s of CPU per public fit, 0.3 s per
    hidden one) or use torch.func (whose first gradient costs a process 1.4 s
    of importing, paid by the fork server), which lost points on a busy machine when a
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
