"""The sandbox on its own: limits, restarts and blame, on a toy module."""

import os
import time

import numpy as np
import pytest

from grader import sandbox

TOY = '''
import os, subprocess, time
import numpy as np

def double(x):
    return np.asarray(x) * 2

def hang():
    while True:
        pass

def spawn_and_hang(pid_file):
    child = subprocess.Popen(["sleep", "300"])
    open(pid_file, "w").write(str(child.pid))
    while True:
        pass

def die():
    os._exit(5)

def fail():
    raise KeyError("no such key")
'''


@pytest.fixture
def toy(tmp_path):
    (tmp_path / "toy.py").write_text(TOY)
    pool = sandbox.Pool()
    limits = sandbox.Limits(time=1.0)
    yield (sandbox.Namespace(pool, str(tmp_path), lambda module: limits),
           sandbox.Namespace(pool, str(tmp_path), lambda module: limits, trusted=True))
    pool.close()


def test_values_come_back_as_plain_data(toy):
    learner, _ = toy
    assert np.array_equal(learner.toy.double([1, 2]), [2, 4])


def test_a_hung_function_is_not_run_twice(toy):
    learner, _ = toy
    started = time.monotonic()
    for _ in range(3):
        with pytest.raises(sandbox.SubmissionError, match="time limit") as error:
            learner.toy.hang()
        assert error.value.kind == "timeout"
    assert time.monotonic() - started < 2.5
    assert np.array_equal(learner.toy.double([3]), [6])  # a fresh worker serves the rest


def test_children_of_a_killed_worker_die_with_it(toy, tmp_path):
    learner, _ = toy
    pid_file = tmp_path / "child.pid"
    with pytest.raises(sandbox.SubmissionError):
        learner.toy.spawn_and_hang(str(pid_file))
    child = int(pid_file.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    pytest.fail("the worker's child process outlived it")


def test_a_dead_worker_is_replaced(toy):
    learner, _ = toy
    with pytest.raises(sandbox.SubmissionError, match="exit code 5"):
        learner.toy.die()
    assert np.array_equal(learner.toy.double([1]), [2])


def test_exceptions_name_the_line(toy):
    learner, _ = toy
    with pytest.raises(sandbox.SubmissionError, match=r"KeyError: 'no such key' at toy.py line 22"):
        learner.toy.fail()


def test_a_missing_module_says_where_it_looked(toy, tmp_path):
    learner, _ = toy
    with pytest.raises(sandbox.SubmissionError, match=f"There is no absent.py in {tmp_path}"):
        learner.absent.anything()


def test_trusted_code_failing_is_the_kits_problem(toy):
    _, trusted = toy
    with pytest.raises(sandbox.KitError):
        trusted.toy.fail()
