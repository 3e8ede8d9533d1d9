"""grader.engine.verify's verdicts read right: numbers that differ look different, order checks are fair."""

import numpy as np
import pytest

from grader.engine import promises, registry, verify
from grader.engine.confinement import codec


def verdict(received, expected, **tolerance) -> str:
    with pytest.raises(verify.CheckFailure) as failure:
        verify.close(received, expected, "x", **tolerance)
    return str(failure.value)


@pytest.mark.parametrize("received,expected", [
    (0.53791, 0.53794),
    (1.0000004, 1.0000021),
    (np.array([0.2, 0.53791]), np.array([0.2, 0.53794])),
    (np.arange(30) / 7 + np.eye(30)[3] * 3e-5, np.arange(30) / 7),  # too many entries to list
])
def test_a_verdict_shows_enough_digits_to_differ(received, expected):
    message = verdict(received, expected, atol=1e-6, rtol=0)
    shown = message.rsplit("expected ", 1)[1]  # the worst pair, always the last one named
    expected_text, received_text = shown.split(", received ")
    assert expected_text != received_text.rstrip(").").rstrip(")"), message


def test_a_received_tuple_of_arrays_is_shown_short_on_one_line():
    """(queries, keys, values) of a head come back as a tuple: shown item by item, each array summarised, as an
    array alone is; a long list shows its start and how many more."""
    shown = verify.show((np.arange(160.0).reshape(10, 16), np.zeros((3, 2)), ["The", "Ġcat"]))
    assert "\n" not in shown and len(shown) < 200, shown
    assert shown.startswith("([[  0.   1. ...  14.  15.]") and shown.endswith("[[0. 0.] [0. 0.] [0. 0.]], ['The', 'Ġcat'])")
    assert verify.show(list(range(30))) == f"[{', '.join(map(str, range(24)))}, ... 6 more]"
    assert (verify.show((0.5,)), verify.show([]), verify.show([0.30000000000000004])) == ("(0.5,)", "[]", "[0.3]")


@pytest.mark.parametrize("weights,scores,ranked", [
    ([0.1, 0.2, 0.7], [0.0, 1.0, 3.0], True),
    ([0.7, 0.2, 0.1], [0.0, 1.0, 3.0], False),  # backwards
    ([1 / 3] * 3, [0.0, 1.0, 3.0], False),  # equal weights ignore the scores
    ([0.0, 0.0, 1.0], [-900.0, -800.0, 0.0], True),  # exp() rounded two far-off weights to 0
    ([0.5, 0.0, 0.5], [1.0, -np.inf, 1.0], True),  # equal scores, a masked one
    ([0.5, 0.0, 0.5], [1.0, -np.inf, 0.5], False),  # uniform over the allowed keys is not softmax
    ([[0.2, 0.8], [0.5, 0.5]], [[0.0, 1.0], [2.0, 2.0]], True),
])
def test_ranked_like(weights, scores, ranked):
    assert verify.ranked_like(weights, scores) is ranked


def test_a_message_given_as_a_function_is_written_only_when_the_check_fails():
    written = []

    def message():
        written.append(True)
        return "the weights [0.5 0.5] do not follow the scores"

    verify.expect(True, message, mistake="order-not-kept")
    assert not written
    with pytest.raises(verify.CheckFailure) as failure:
        verify.expect(False, message, mistake="order-not-kept")
    assert str(failure.value) == "the weights [0.5 0.5] do not follow the scores"
    assert failure.value.mistake == "order-not-kept" and written == [True]


# -- the one rule for return types -------------------------------------------------------------


def test_every_function_promises_a_type_in_words_the_rule_reads():
    for exercise in registry.EXERCISES:
        for name in exercise.functions:
            assert name in exercise.returns, f"{exercise.module}.{name} promises no type in exercises.toml"
            promised = exercise.returns[name]
            for phrase in promised.values() if isinstance(promised, dict) else [promised]:
                assert promises.says(promises.parse(phrase))


@pytest.mark.parametrize("value,promise,told", [
    ([0.5, 0.5], "float array", "wrap it in `np.asarray`"),
    (np.array([1, 0]), "float array", "integers in, integers out"),
    (codec.tensor(2.0, grad=True), "float", "`.item()`, which also drops its gradient history"),
    (codec.tensor(2.0), "float", "`.item()`"),
    (np.float32(0.5), "float", "float32 is not what the docstring asks for"),
    (np.array(0.5), "float", "`float(...)`"),
    (3, "float", "`float(...)`"),
    (np.array(0.5), "2-d float array", "keep all 2 dimensions"),
    (codec.tensor([[0.5]], grad=True), "2-d float array", "`.detach().numpy()`"),
    (np.array([0.5]), "1-d float tensor", "torch.as_tensor"),
    (codec.tensor([1, 2]), "1-d float tensor", "dtype=torch.float64)`): integers in, integers out"),
    ((1.0, [0.5]), "(float, 1-d float array)", "item [1] of what f() returns is a list"),
    ((1.0, [codec.tensor(0.5, grad=True)]), "(float, list of float)", "item [1][0] of what f() returns is a torch"),
    ((1.0, np.array([0.5])), "(float, list of float)", "`.tolist()`"),
    (None, "float", "forget a `return`"),
    (np.ones((2, 2), dtype=int), "2-d bool array", "dtype=bool"),
])
def test_a_broken_promise_names_what_came_back_and_the_fix(value, promise, told):
    with pytest.raises(verify.CheckFailure, match="the docstring promises") as failure:
        verify.returns(value, promise, "f()")
    assert told in str(failure.value) and failure.value.mistake == "wrong-return-type"


@pytest.mark.parametrize("value,promise", [
    (np.array([0.5, 0.5], dtype=np.float32), "1-d float array"), (codec.tensor([0.5, 0.5]), "float array"),
    (np.float64(0.5), "float"), (0.5, "float"), (codec.tensor(0.5, grad=True), "0-d float tensor"),
    ((0.5, np.eye(2)), "(float, 2-d float array)"), ([0.5, np.eye(2)], "(float, 2-d float array)"),
    (np.eye(2, dtype=bool), "2-d bool array"), (["a", "b"], "list of str"), (None, "any"), (np.int64(3), "any"),
])
def test_the_looser_types_the_kit_allows_keep_the_promise(value, promise):
    verify.returns(value, promise, "f()")


@pytest.mark.parametrize("phrase", ["floats", "3-d float matrix", "list of", "(float, nothing)"])
def test_a_phrase_that_is_no_promise_is_refused(phrase):
    with pytest.raises(promises.PromiseError):
        promises.parse(phrase)
