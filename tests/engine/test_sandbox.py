"""The sandbox on its own: limits, restarts, blame and what crosses the boundary, on a toy module."""

import contextlib
import tracemalloc

import numpy as np
import pytest

from grader.engine import registry, verify
from grader.engine.confinement import system
from grader.engine.confinement.messages import MAX_LINES_COUNTED
from grader.engine.errors import KitError, SubmissionError
from grader.engine.proxies import Namespace
from grader.engine.sandbox import PRINTED_LINES, Sandbox
from grader.engine.slot import Limits

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

def unfinished():
    raise NotImplementedError("unfinished(): replace this line with your code")

def not_yet():
    raise ValueError("not implemented yet")

def from_a_library():
    import logging
    return logging.Handler().emit(None)  # NotImplementedError, raised by the library

def from_c():
    import io
    return io.RawIOBase().readinto(bytearray(1))  # NotImplementedError, raised in C: this line innermost

calls = 0

def counted(fail=False):
    global calls
    calls += 1
    if fail:
        raise ValueError(f"failed at call {calls}")
    return np.array([calls])

def collected_and_frozen():
    return len(gc.get_objects()), gc.get_freeze_count()
'''


@contextlib.contextmanager
def learner_sandbox(folder, limits=Limits()):
    """A sandbox grading ``folder``: (the learner's namespace, the sandbox), closed afterwards."""
    sandbox = Sandbox()
    try:
        yield Namespace(sandbox, str(folder), lambda module: limits), sandbox
    finally:
        sandbox.close()


def modules_in(folder, sources: dict[str, str]):
    folder.mkdir(exist_ok=True)
    for name, source in sources.items():
        (folder / f"{name}.py").write_text(source)
    return folder


@pytest.fixture
def toy(tmp_path):
    folder, limits = modules_in(tmp_path / "toy", {"toy": TOY}), Limits(time=1.0)
    with learner_sandbox(folder, limits) as (learner, sandbox):
        yield learner, Namespace(sandbox, str(folder), lambda module: limits, trusted=True), sandbox


def test_values_come_back_as_plain_data(toy):
    learner, _, _ = toy
    assert np.array_equal(learner.toy.double([1, 2]), [2, 4])


def test_a_shared_answer_is_asked_once_per_submission(toy):
    """Checks that judge the same call share one run of it: each gets its own copy, errors included."""
    learner, _, sandbox = toy
    first = learner.toy.counted.once()
    first[0] = 99  # one check changing its copy changes no other check's
    assert learner.toy.counted.once().tolist() == [1]
    assert learner.toy.counted().tolist() == [2]  # a plain call runs every time
    with pytest.raises(SubmissionError, match="failed at call 3") as error:
        learner.toy.counted.once(True)
    with pytest.raises(SubmissionError, match="failed at call 3") as again:
        learner.toy.counted.once(True)
    assert again.value is error.value
    sandbox.begin_submission()  # the next student's calls are their own
    assert learner.toy.counted.once().tolist() == [4]


def test_a_hung_function_is_not_run_twice(toy):
    """Past its limit, it is a hang: later calls get the same verdict without running."""
    learner, _, _ = toy
    errors = []
    for _ in range(3):
        with pytest.raises(SubmissionError, match="computed for more than its 1 s time limit") as error:
            learner.toy.hang()
        errors.append(error.value)
    assert errors[0].kind == "timeout" and errors[1] is errors[0] and errors[2] is errors[0]
    assert np.array_equal(learner.toy.double([3]), [6])  # a fresh worker serves the rest


def test_half_a_message_is_held_to_the_time_limit(toy):
    """A worker that sends the start of an answer and then waits is stopped by the backstop for waiting."""
    learner, _, _ = toy
    with pytest.raises(SubmissionError, match="waited for more than 2 s without computing") as error:  # 2 x 1 s
        learner.toy.half_a_message()
    assert error.value.kind == "timeout"


def test_a_learner_worker_starts_no_process(toy):
    learner, trusted, _ = toy
    with pytest.raises(SubmissionError, match="tried to start or signal another process"):
        learner.toy.spawn()


@pytest.mark.skipif(not system.confines(), reason="workers are forked from a fork server on Linux alone")
def test_a_learners_collections_leave_the_libraries_objects_alone(toy):
    """The objects a worker inherits from its fork server are frozen out of the collector's reach, so that a learner
    whose code allocates is not charged for walking (and copying) numpy's and the kit's heap."""
    learner, _, _ = toy
    collected, frozen = learner.toy.collected_and_frozen()
    assert frozen > collected > 0


def test_a_dead_worker_is_replaced(toy):
    learner, _, _ = toy
    with pytest.raises(SubmissionError, match="exit code 5"):
        learner.toy.die()
    assert np.array_equal(learner.toy.double([1]), [2])


def test_exceptions_name_the_line(toy):
    learner, _, _ = toy
    with pytest.raises(SubmissionError, match=r"KeyError: 'no such key' at toy.py line 19"):
        learner.toy.fail()


def test_learner_text_loses_its_control_characters(toy):
    learner, _, _ = toy
    with pytest.raises(SubmissionError) as error:
        learner.toy.escape_codes()
    assert "\x1b" not in str(error.value) and "\u202e" not in str(error.value)
    assert "cleared your screen" in str(error.value)


@pytest.mark.parametrize("function, kind, said", [
    ("unfinished", "not_implemented", "is not implemented yet"),
    ("not_yet", "exception", "raised ValueError: not implemented yet at toy.py"),
    ("from_a_library", "exception", "raised NotImplementedError: emit must be implemented by Handler subclasses"),
    ("from_c", "exception", "raised NotImplementedError at toy.py line 63"),
])
def test_not_implemented_is_a_raise_in_the_learners_code(toy, function, kind, said):
    """Not started is the learner's own ``raise NotImplementedError`` (the stub's), told by the exception's type and
    where it was raised, never by words: not a message that says so, nor a library's, nor a line that names it."""
    learner, _, _ = toy
    with pytest.raises(SubmissionError) as error:
        getattr(learner.toy, function)()
    assert error.value.kind == kind and said in str(error.value)


def test_a_missing_module_says_where_it_looked(toy, tmp_path):
    learner, _, _ = toy
    with pytest.raises(SubmissionError, match=f"There is no absent.py in {tmp_path / 'toy'}"):
        learner.absent.anything()


def test_trusted_code_failing_is_the_kits_problem(toy):
    _, trusted, _ = toy
    with pytest.raises(KitError):
        trusted.toy.fail()


@pytest.mark.parametrize("path", ["solutions/softmax.py", "tests/checks/test_kit.py", "grader/lesson/gpt2.py", ".git/HEAD",
                                  "README.md"])
def test_a_learner_reads_nothing_of_the_kit(toy, path):
    learner, trusted, _ = toy
    target = registry.KIT_ROOT / path
    if not target.exists():
        pytest.skip(f"no {path} in this checkout")
    assert trusted.toy.read(str(target))  # the kit's own workers may
    with pytest.raises(SubmissionError, match="outside its own folder"):
        learner.toy.read(str(target))


def test_a_learner_reads_the_python_installation(toy):
    learner, _, _ = toy
    assert learner.toy.read(np.__file__)


def test_prints_are_kept_capped(toy):
    learner, _, sandbox = toy
    assert learner.toy.chatty(3) == 3
    (label, output), = sandbox.printed
    assert label == "toy.chatty()" and output == "line 0\nline 1\nline 2"
    sandbox.printed.clear()
    learner.toy.chatty(100_000)
    lines = sandbox.printed[0][1].splitlines()
    assert len(lines) == PRINTED_LINES + 1 and lines[-1].startswith("... (")


def test_arguments_come_back_only_when_asked(toy):
    """A call that changes its argument still answers; the checks of that rule ask for the arguments back."""
    learner, _, _ = toy
    assert np.array_equal(learner.toy.scale_in_place(np.ones(3)), [2, 2, 2])
    value, (after,) = learner.toy.scale_in_place.arguments_after(np.ones(3))
    assert np.array_equal(value, [2, 2, 2]) and np.array_equal(after, [2, 2, 2])
    with pytest.raises(verify.CheckFailure, match="changed its argument `x` in place"):
        verify.unchanged({"x": np.ones(3)}, [after], "scale_in_place(x)")
    verify.unchanged({"x": np.ones(3)}, [np.ones(3)], "scale_in_place(x)")


@pytest.mark.parametrize("code,refused", [
    ("socket.create_connection(('127.0.0.1', 9))", "tried to open a network connection"),
    ("subprocess.run(['true'])", "tried to start or signal another process"),
    ("os.fork()", "tried to start or signal another process"),
    ("os.kill(os.getpid() + 1, 0)", "tried to signal a process outside its own worker"),
    ("os.killpg(0, 9)", "tried to signal a process outside its own worker"),
    ("fcntl.fcntl(os.pipe()[0], fcntl.F_SETOWN, 1)", "tried to signal a process outside its own worker"),
    ("os.memfd_create('kept')", "tried to keep memory outside its own worker"),
    ("open('/etc/hostname').read()", "tried to open /etc/hostname, outside its own folder"),
])
def test_refusals_are_named_in_the_lessons_terms(tmp_path, code, refused):
    folder = modules_in(tmp_path, {"probe": f"import fcntl, os, socket, subprocess\n\ndef run():\n    {code}\n"})
    with learner_sandbox(folder) as (learner, _), pytest.raises(SubmissionError) as error:
        learner.probe.run()
    assert error.value.kind == "refused" and refused in str(error.value), str(error.value)
    assert "probe.py line 4" in str(error.value)


def test_libraries_beside_the_kit_import_in_any_worker(tmp_path):
    """torch in a numpy exercise's worker: the confinement lets it read what it needs (randomness included)."""
    folder = modules_in(tmp_path, {"probe": "import torch\n\ndef run():\n    return torch.softmax(torch.ones(2), 0)\n"})
    with learner_sandbox(folder, Limits(needs="numpy")) as (learner, _):
        assert np.allclose(learner.probe.run(), [0.5, 0.5])


def test_deep_nesting_is_refused_before_decoding(toy):
    learner, _, _ = toy
    assert learner.toy.nested(5) == [[[[[[]]]]]]
    with pytest.raises(SubmissionError, match="nested more than"):
        learner.toy.nested(30)


def test_links_out_of_a_submission_are_refused(tmp_path):
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / "toy.py").symlink_to(registry.KIT_ROOT / "solutions" / "softmax.py")
    sandbox = Sandbox()
    try:
        learner = Namespace(sandbox, str(folder), lambda module: Limits())
        with pytest.raises(SubmissionError, match="is a link to .* outside the folder") as error:
            learner.toy.softmax([1.0])
        assert error.value.kind == "invalid"
    finally:
        sandbox.close()


def test_a_sandbox_leaves_nothing_behind(toy):
    learner, _, sandbox = toy
    learner.toy.double([1])
    root = sandbox.root
    assert root.exists()
    sandbox.close()
    assert not root.exists()


# -- what the judge bounds itself, whatever the worker says ------------------------------------

FLOODS = '''
import sys

def raise_the_cap_and_print(characters, line_length):
    sys.stdout.limit = 10**12  # the worker's own cap is learner-controlled: _Printed is sys.stdout here
    line = "x" * (line_length - 1) + "\\n"
    for _ in range(characters // line_length):
        sys.stdout.write(line)
    return characters

def claim_lines(count):
    print("one line")
    sys.stdout.lines = count
    return 0

def surrogate_message():
    print("printed \\ud800 alone")
    raise ValueError("\\ud800 cannot be encoded")
'''


@pytest.fixture
def floods(tmp_path):
    with learner_sandbox(modules_in(tmp_path / "floods", {"floods": FLOODS}), Limits(time=60.0)) as pair:
        yield pair


def test_output_over_the_cap_is_cut_by_the_judge(floods):
    """A worker whose cap was raised sends more than the sandbox keeps: the judge keeps its own cap."""
    learner, sandbox = floods
    assert learner.floods.raise_the_cap_and_print(30_000, 30_000) == 30_000  # one line of 30,000 characters
    (label, output), = sandbox.printed
    assert len(output) <= sandbox.printed.limit


def test_a_100_mb_print_costs_neither_the_call_nor_the_judges_memory(floods):
    """100 MB printed past a raised cap: the call still answers, and the judge keeps a line saying so.

    What a call printed travels in a message of its own with a small bound;
    an oversized one is read and dropped in 1 MB pieces, never held whole.
    """
    learner, sandbox = floods
    tracemalloc.start()
    try:
        assert learner.floods.raise_the_cap_and_print(100 * 2**20, 100) == 100 * 2**20
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    (label, output), = sandbox.printed
    assert "more than the grader keeps" in output and len(output) < 200
    assert peak < 16 * 2**20, f"the judge held {peak / 2**20:.0f} MB"


def test_a_claimed_line_count_is_bounded(floods):
    learner, sandbox = floods
    learner.floods.claim_lines(10**30)
    (label, output), = sandbox.printed
    assert output.startswith("one line\n... (") and int(output.split("(")[1].split()[0]) <= MAX_LINES_COUNTED


def test_a_check_keeps_a_bounded_share_of_many_calls_prints(toy):
    """Each call keeps its first lines; a check of many calls keeps what fits in the sandbox's cap, then counts."""
    learner, _, sandbox = toy
    for _ in range(200):
        learner.toy.chatty(30)
    assert sum(len(output) for _, output in sandbox.printed) <= sandbox.printed.limit + 1
    assert sandbox.printed.dropped > 0


def test_lone_surrogates_never_reach_the_judges_text(floods):
    learner, sandbox = floods
    with pytest.raises(SubmissionError) as error:
        learner.floods.surrogate_message()
    message = str(error.value)
    message.encode("utf-8")  # encodable: a file or a terminal can take it
    assert "cannot be encoded" in message
    (label, output), = sandbox.printed
    output.encode("utf-8")
    assert output == "printed \ufffd alone"


# -- a function that hung is not run again, through any module ----------------------------------

CHAIN = {
    "slow": "def loop():\n    while True:\n        pass\n\ndef fine():\n    return 1\n",
    "user": "from slow import loop\n\ndef uses():\n    return loop()\n\ndef alone():\n    return 2\n",
    "import_loops": "while True:\n    pass\n",
    "imports_it": "import import_loops\n\ndef anything():\n    return 3\n",
    "middle": "from slow import loop\n\ndef mid():\n    return loop()\n\ndef other():\n    return loop()\n",
    "top": "from middle import other\n\ndef top():\n    return other()\n",
    "forger": "import sys\n\ndef forge():\n    raise sys.modules['grader.engine.confinement.worker'].RanPastItsLimit('softmax.softmax()')\n",
}


@pytest.fixture
def chain(tmp_path):
    with learner_sandbox(modules_in(tmp_path, CHAIN), Limits(time=1.0, import_time=1.0)) as pair:  # not 30 s
        yield pair


def test_a_hung_function_is_not_run_through_the_modules_that_import_it(chain):
    """user's worker started before loop() hung: it is restarted with a stand-in, and says which function hung."""
    learner, _ = chain
    assert learner.user.alone() == 2  # user's worker is up, with the real loop() bound
    with pytest.raises(SubmissionError) as hung:
        learner.slow.loop()
    assert hung.value.kind == "timeout"
    with pytest.raises(SubmissionError) as error:
        learner.user.uses()
    assert error.value.kind == "hung"  # the stand-in answered: a loop() that ran again would be a "timeout"
    assert "calls slow.loop(), which ran past its time limit earlier" in str(error.value)
    assert "user.py line 4" in str(error.value)
    assert learner.user.alone() == 2 and learner.slow.fine() == 1  # what does not call it keeps working


def test_stand_ins_reach_modules_imported_before_them(chain):
    """middle.mid() hangs first (through slow.loop), then slow.loop() itself: a later worker that imports middle
    before slow's stand-in is in place still ends up calling the stand-in."""
    learner, _ = chain
    for hangs in (learner.middle.mid, learner.slow.loop):
        with pytest.raises(SubmissionError, match="time limit"):
            hangs()
    with pytest.raises(SubmissionError, match=r"calls slow\.loop\(\), which ran past") as error:
        learner.top.top()
    assert error.value.kind == "hung"


def test_a_module_whose_import_hung_is_not_imported_again(chain):
    learner, _ = chain
    with pytest.raises(SubmissionError, match="time limit") as hung:
        learner.import_loops.anything()
    assert hung.value.kind == "timeout"
    with pytest.raises(SubmissionError, match="imports import_loops.py, which ran past its time limit") as error:
        learner.imports_it.anything()
    assert error.value.kind == "hung"  # its stand-in answered: the import was not run again


def test_a_stand_in_cannot_be_forged_into_a_verdict(chain):
    """Raising the stand-in's exception by hand names no hang the judge knows: it is an ordinary exception."""
    learner, _ = chain
    with pytest.raises(SubmissionError) as error:
        learner.forger.forge()
    assert error.value.kind == "exception" and "RanPastItsLimit" in str(error.value)


def test_the_hung_set_is_per_submission(chain):
    learner, sandbox = chain
    with pytest.raises(SubmissionError):
        learner.slow.loop()
    assert sandbox.hung
    sandbox.begin_submission()
    assert not sandbox.hung and sandbox.budget.spent == 0


# -- one time budget for all of a submission's calls ---------------------------------------------

def test_a_spent_budget_fails_the_rest_at_once(toy):
    learner, _, sandbox = toy
    sandbox.begin_submission(budget=2.5)
    with pytest.raises(SubmissionError) as cut:  # its 1 s limit, of a 2.5 s budget
        learner.toy.hang()
    assert cut.value.kind == "timeout"
    with pytest.raises(SubmissionError) as stopped:  # the budget's last 1.5 s run out before its 2 s of waiting
        learner.toy.half_a_message()
    assert stopped.value.kind == "budget" and "was stopped" in str(stopped.value)
    with pytest.raises(SubmissionError) as skipped:
        learner.toy.double([1])
    assert skipped.value.kind == "budget"
    assert "was not run" in str(skipped.value) and "--time-budget" in str(skipped.value)
    sandbox.begin_submission()
    assert np.array_equal(learner.toy.double([1]), [2])  # the next submission has a whole budget
