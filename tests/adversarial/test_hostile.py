"""Hostile submissions end in bounded time, with a clear message and no stolen points.

The hostile code goes into lookup.py; softmax.py and attention.py stay
correct and must keep every point (attention does not import lookup).
"""

import time

import pytest

from helpers import exercise_score, make_submission, run

RIGHT_SOFT_LOOKUP = "_right = soft_lookup\n"
BUY_TIME = '''
import time
_paid = False
def soft_lookup(query, keys, values, sharpness=1.0):
    global _paid
    if not _paid:
        _paid, end = True, time.process_time() + 1.6
        {first}
        while time.process_time() < end:
            pass
    return _right(query, keys, values, sharpness)
'''

HOSTILE = {
    "infinite loop": (
        "def soft_lookup(query, keys, values, sharpness=1.0):\n    while True:\n        pass\n",
        "time limit"),
    "sys.exit at import": ("import sys\nsys.exit(3)\n", "tried to end the program"),
    "os._exit in a call": (
        "def soft_lookup(query, keys, values, sharpness=1.0):\n    import os\n    os._exit(7)\n",
        "exit code 7"),
    "multi-GB allocation": (
        "def soft_lookup(query, keys, values, sharpness=1.0):\n    return np.ones((40_000, 40_000)), None\n",
        "more memory than allowed"),
    "numpy monkeypatched at import": (
        "np.allclose = lambda *a, **k: True\nnp.isclose = lambda *a, **k: True\n"
        "np.testing.assert_allclose = lambda *a, **k: None\nnp.array_equal = lambda *a, **k: True\n"
        "def soft_lookup(query, keys, values, sharpness=1.0):\n    return 0.0, np.zeros(len(keys))\n",
        "expected"),
    "always-true __eq__": (
        "class Liar(float):\n    def __eq__(self, other):\n        return True\n    __hash__ = float.__hash__\n"
        "class Anything:\n    def __eq__(self, other):\n        return True\n"
        "    def __array__(self, *a, **k):\n        raise TypeError('no')\n"
        "def soft_lookup(query, keys, values, sharpness=1.0):\n    return Liar(1.0), Anything()\n"
        "def exact_lookup(query, keys, values):\n    return Anything()\n",
        "expected"),
    "syntax error": ("def soft_lookup(query, keys:\n    return 1\n", "could not read your file"),
    "50 MB printed": (
        RIGHT_SOFT_LOOKUP + "def soft_lookup(query, keys, values, sharpness=1.0):\n"
        "    print('x' * 50_000_000)\n    return _right(query, keys, values, sharpness)\n",
        None),
    "raises at import": ("raise RuntimeError('broken on purpose')\n", "RuntimeError: broken on purpose"),
    # Right answers whose first call computes 1.6 s under the 1 s limit, after doing first what a library's
    # one-time cost does: no first call's allowance is bought by it (issue 45, 3).
    "pages faulted in, then past the limit": (RIGHT_SOFT_LOOKUP + BUY_TIME.format(first=(
        "pages = bytearray(64 * 2**20)\n        for page in range(0, len(pages), 4096):\n            pages[page] = 1")),
        "time limit"),
    "a big library imported, then past the limit": (RIGHT_SOFT_LOOKUP + BUY_TIME.format(first="import scipy.stats"),
                                                    "time limit"),
}


@pytest.mark.parametrize("case", HOSTILE, ids=list(HOSTILE))
def test_hostile_submission(tmp_path, case):
    code, message = HOSTILE[case]
    folder = make_submission(tmp_path / "submission", append={"lookup": code})
    started = time.process_time()  # the judge's own CPU time: the learner's code runs in workers
    result = run(folder, ["softmax", "lookup", "attention"], time_limit=1.0)
    spent = time.process_time() - started
    assert spent < 60, f"{case} cost the judge {spent:.0f} s of CPU time"
    for untouched in ("softmax", "attention"):
        earned, possible = exercise_score(result, untouched)
        assert earned == possible, f"{untouched} lost points to a hostile lookup.py ({case})"
    earned, possible = exercise_score(result, "lookup")
    messages = [c.message for e in result.exercises for c in e.checks if c.outcome == "failed"]
    assert not any("could not judge" in m for m in messages), messages
    if message is None:  # noisy but correct: every point kept
        assert earned == possible, messages
    else:
        assert earned < possible
        assert any(message in m for m in messages), messages
