"""The sandbox on its own: limits, restarts, blame and what crosses the boundary, on a toy module."""

import time

import numpy as np
import pytest

from grader.engine import judge, sandbox

TOY = '''
import gc, os, socket, subprocess, sys, time
import numpy as np

def double(x):
    return np.asarray(x) * 2

def hang():
    while True:
        pass

def spawn():
    return subprocess.Popen(["sleep", "300"]).pid

def die():
    os._exit(5)

def fail():
    raise KeyError("no such key")

def chatty(n):
    for i in range(n):
        print("line", i)
    return n

def scale_in_place(x):
    x *= 2
    return x

def half_a_message():
    for conn in [o for o in gc.get_objects() if isinstance(o, socket.socket)]:
        try:
            conn.sendall((10**6).to_bytes(4, "big") + b"{")
        except OSError:
            continue
        time.sleep(60)

def nested(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value

def read(path):
    with open(path) as handle:
        return handle.read(100)

def escape_codes():
    raise ValueError("\\x1b[2J\\x1b[31mcleared your screen\\u202e")
'''


@pytest.fixture
def toy(tmp_path):
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "toy.py").write_text(TOY)
    session = sandbox.Session()
    limits = sandbox.Limits(time=1.0)
    yield (sandbox.Namespace(session, str(folder), lambda module: limits),
           sandbox.Namespace(session, str(folder), lambda module: limits, trusted=True), session)
    session.close()


def test_values_come_back_as_plain_data(toy):
    learner, _, _ = toy
    assert np.array_equal(learner.toy.double([1, 2]), [2, 4])


def test_a_hung_function_is_not_run_twice(toy):
    learner, _, _ = toy
    started = time.monotonic()
    for _ in range(3):
        with pytest.raises(sandbox.SubmissionError, match="time limit") as error:
            learner.toy.hang()
        assert error.value.kind == "timeout"
    assert time.monotonic() - started < 2.5
    assert np.array_equal(learner.toy.double([3]), [6])  # a fresh worker serves the rest


def test_half_a_message_is_held_to_the_time_limit(toy):
    learner, _, _ = toy
    started = time.monotonic()
    with pytest.raises(sandbox.SubmissionError, match="time limit"):
        learner.toy.half_a_message()
    assert time.monotonic() - started < 2.5


def test_a_learner_worker_starts_no_process(toy):
    learner, trusted, _ = toy
    with pytest.raises(sandbox.SubmissionError, match="tried to start or signal another process"):
        learner.toy.spawn()


def test_a_dead_worker_is_replaced(toy):
    learner, _, _ = toy
    with pytest.raises(sandbox.SubmissionError, match="exit code 5"):
        learner.toy.die()
    assert np.array_equal(learner.toy.double([1]), [2])


def test_exceptions_name_the_line(toy):
    learner, _, _ = toy
    with pytest.raises(sandbox.SubmissionError, match=r"KeyError: 'no such key' at toy.py line 19"):
        learner.toy.fail()


def test_learner_text_loses_its_control_characters(toy):
    learner, _, _ = toy
    with pytest.raises(sandbox.SubmissionError) as error:
        learner.toy.escape_codes()
    assert "\x1b" not in str(error.value) and "\u202e" not in str(error.value)
    assert "cleared your screen" in str(error.value)


def test_a_missing_module_says_where_it_looked(toy, tmp_path):
    learner, _, _ = toy
    with pytest.raises(sandbox.SubmissionError, match=f"There is no absent.py in {tmp_path / 'toy'}"):
        learner.absent.anything()


def test_trusted_code_failing_is_the_kits_problem(toy):
    _, trusted, _ = toy
    with pytest.raises(sandbox.KitError):
        trusted.toy.fail()


@pytest.mark.parametrize("path", ["solutions/softmax.py", "tests/test_kit.py", "grader/exercises/gpt2.py", ".git/HEAD",
                                  "README.md"])
def test_a_learner_reads_nothing_of_the_kit(toy, path):
    learner, trusted, _ = toy
    target = sandbox.KIT_ROOT / path
    if not target.exists():
        pytest.skip(f"no {path} in this checkout")
    assert trusted.toy.read(str(target))  # the kit's own workers may
    with pytest.raises(sandbox.SubmissionError, match="outside its own folder"):
        learner.toy.read(str(target))


def test_a_learner_reads_the_python_installation(toy):
    learner, _, _ = toy
    assert learner.toy.read(np.__file__)


def test_prints_are_kept_capped(toy):
    learner, _, session = toy
    assert learner.toy.chatty(3) == 3
    (label, output), = session.printed
    assert label == "toy.chatty()" and output == "line 0\nline 1\nline 2"
    session.printed.clear()
    learner.toy.chatty(100_000)
    lines = session.printed[0][1].splitlines()
    assert len(lines) == sandbox.PRINTED_LINES + 1 and lines[-1].startswith("... (")


def test_arguments_come_back_only_when_asked(toy):
    """A call that changes its argument still answers; the checks of that rule ask for the arguments back."""
    learner, _, _ = toy
    assert np.array_equal(learner.toy.scale_in_place(np.ones(3)), [2, 2, 2])
    value, (after,) = learner.toy.scale_in_place.arguments_after(np.ones(3))
    assert np.array_equal(value, [2, 2, 2]) and np.array_equal(after, [2, 2, 2])
    with pytest.raises(judge.CheckFailure, match="changed its argument `x` in place"):
        judge.unchanged({"x": np.ones(3)}, [after], "scale_in_place(x)")
    judge.unchanged({"x": np.ones(3)}, [np.ones(3)], "scale_in_place(x)")


@pytest.mark.parametrize("code,refused", [
    ("socket.create_connection(('127.0.0.1', 9))", "tried to open a network connection"),
    ("subprocess.run(['true'])", "tried to start or signal another process"),
    ("os.fork()", "tried to start or signal another process"),
    ("open('/etc/hostname').read()", "tried to open /etc/hostname, outside its own folder"),
])
def test_refusals_are_named_in_the_lessons_terms(tmp_path, code, refused):
    (tmp_path / "probe.py").write_text(f"import os, socket, subprocess\n\ndef run():\n    {code}\n")
    session = sandbox.Session()
    try:
        learner = sandbox.Namespace(session, str(tmp_path), lambda module: sandbox.Limits())
        with pytest.raises(sandbox.SubmissionError) as error:
            learner.probe.run()
        assert error.value.kind == "refused" and refused in str(error.value), str(error.value)
        assert "probe.py line 4" in str(error.value)
    finally:
        session.close()


def test_libraries_beside_the_kit_import_in_any_worker(tmp_path):
    """torch in a numpy exercise's worker: the confinement lets it read what it needs (randomness included)."""
    (tmp_path / "probe.py").write_text("import torch\n\ndef run():\n    return torch.softmax(torch.ones(2), 0)\n")
    session = sandbox.Session()
    try:
        learner = sandbox.Namespace(session, str(tmp_path), lambda module: sandbox.Limits(needs="numpy"))
        assert np.allclose(learner.probe.run(), [0.5, 0.5])
    finally:
        session.close()


def test_deep_nesting_is_refused_before_decoding(toy):
    learner, _, _ = toy
    assert learner.toy.nested(5) == [[[[[[]]]]]]
    with pytest.raises(sandbox.SubmissionError, match="nested more than"):
        learner.toy.nested(30)


def test_links_out_of_a_submission_are_refused(tmp_path):
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / "toy.py").symlink_to(sandbox.KIT_ROOT / "solutions" / "softmax.py")
    session = sandbox.Session()
    try:
        learner = sandbox.Namespace(session, str(folder), lambda module: sandbox.Limits())
        with pytest.raises(sandbox.SubmissionError, match="is a link to .* outside the folder") as error:
            learner.toy.softmax([1.0])
        assert error.value.kind == "invalid"
    finally:
        session.close()


def test_a_session_leaves_nothing_behind(toy):
    learner, _, session = toy
    learner.toy.double([1])
    root = session.root
    assert root.exists()
    session.close()
    assert not root.exists()
