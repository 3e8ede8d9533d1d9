"""Spawned workers (macOS and Windows): messages over pipes held to their deadlines, and a worker that ends
with its judge even in the middle of a learner's loop. Run here on Linux, where the same code works."""

import dataclasses
import os
import time

import numpy as np
import pytest

from grader.engine import registry
from grader.engine.confinement import codec, framing, spawner, zygote
from grader.engine.confinement.pipes import PipeConnection
from grader.engine.confinement.worker import Settings


def connected_pair(on_end=None):
    """Two PipeConnections, each reading what the other writes."""
    first_reads, second_writes = os.pipe()
    second_reads, first_writes = os.pipe()
    return PipeConnection(first_reads, first_writes, on_end), PipeConnection(second_reads, second_writes)


def test_a_message_larger_than_a_pipe_crosses_whole():
    ours, theirs = connected_pair()
    value = {"weights": codec.to_plain(np.arange(200_000, dtype=float))}
    framing.send(ours, value)
    assert framing.receive(theirs, time.monotonic() + 30, 2**24) == value
    ours.close()
    theirs.close()


def test_a_read_waits_no_longer_than_its_deadline():
    """Nothing comes: a deadline already past raises at once, where a read without one would wait forever."""
    ours, theirs = connected_pair()
    with pytest.raises(TimeoutError):
        framing.receive(ours, time.monotonic() - 1, 2**20)
    with pytest.raises(TimeoutError):
        framing.receive(ours, time.monotonic() + 0.3, 2**20)
    ours.close()
    theirs.close()


def test_a_write_nobody_reads_times_out():
    their_reading, our_writing = os.pipe()
    our_reading, their_writing = os.pipe()
    ours = PipeConnection(our_reading, our_writing)
    ours.settimeout(0.3)
    with pytest.raises(TimeoutError):
        ours.sendall(b"x" * 2**22)  # far more than a pipe holds
    os.close(their_reading)  # the stalled write now fails, and its thread ends
    os.close(their_writing)
    ours.close()


def test_the_other_side_closing_ends_the_reads_and_is_told():
    ended = []
    ours, theirs = connected_pair(on_end=lambda: ended.append(True))
    theirs.close()
    with pytest.raises(EOFError):
        framing.receive(ours, time.monotonic() + 30, 2**20)
    deadline = time.monotonic() + 10
    while not ended and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ended


@pytest.fixture
def spawned(tmp_path):
    """A spawned numpy worker for a learner's module in ``tmp_path``, and the spawn server it came from."""
    folder, scratch = tmp_path / "learner", tmp_path / "scratch"
    folder.mkdir()
    scratch.mkdir()
    (folder / "busy.py").write_text("def add(a, b):\n    print('adding')\n    return a + b\n\n\n"
                                    "def spin():\n    while True:\n        pass\n")
    server = spawner.SpawnServer(["numpy", "grader.engine.confinement.worker"], tmp_path / "spawned.log")
    settings = Settings(directory=str(folder), scratch=str(scratch), memory_limit=2**30)
    worker = server.worker(dataclasses.asdict(settings))
    yield worker
    worker.kill()
    server.close()


def call(worker, number: int, function: str, *args):
    framing.send(worker.conn, {"id": number, "op": "call", "module": "busy", "function": function,
                             "args": codec.to_plain(list(args))})


def test_a_spawned_worker_reports_itself_unconfined_and_answers_as_a_forked_one(spawned):
    ready = framing.receive(spawned.conn, time.monotonic() + 120, 2**20)
    assert ready["ready"] is True and ready["protections"]["unconfined_on"]
    call(spawned, 1, "add", 2, 3)
    printed = framing.receive(spawned.conn, time.monotonic() + 30, 2**20)
    answer = framing.receive(spawned.conn, time.monotonic() + 30, 2**20)
    assert printed == {"id": 1, "output": "adding\n", "lines": 1}
    assert answer == {"id": 1, "value": 5, "read": ["busy.py"]}  # what it read of the learner's folder


def test_a_spawned_worker_ends_with_its_judge_even_in_a_loop(spawned):
    framing.receive(spawned.conn, time.monotonic() + 120, 2**20)
    call(spawned, 1, "spin")
    with pytest.raises(TimeoutError):
        framing.receive(spawned.conn, time.monotonic() + 0.5, 2**20)
    spawned.conn.close()  # as when the judge dies: the worker's stdin ends
    assert spawned.process.wait(30) == 0


def test_fork_and_spawned_servers_put_the_folder_that_holds_grader_on_their_path():
    """Counted from zygote.py's own place: moved a floor down (issue 51), a count of parents one short named grader/
    itself, and the Gradescope machine's workers then read the kit's ground truth (test_environments caught it)."""
    assert zygote.PACKAGE_PARENT == str(registry.PACKAGE_DIR.parent)
