"""Only plain data crosses the boundary: what cannot be rebuilt safely never is."""

import json

import numpy as np
import pytest

from grader.engine import codec


class LyingFloat(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


class Anything:
    def __eq__(self, other):
        return True


def roundtrip(value):
    return codec.from_plain(json.loads(json.dumps(codec.to_plain(value))))


@pytest.mark.parametrize("value", [None, True, 3, 2.5, float("nan"), "Ġcat", (1.0, None), [1, [2.0]], {"a": 1.5, "b": [None]},
                                   np.arange(6.0).reshape(2, 3), np.array([True, False]), np.float32(1.5)])
def test_plain_values_survive(value):
    back = roundtrip(value)
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and np.array_equal(back, value)
    elif isinstance(value, float) and np.isnan(value):
        assert np.isnan(back)
    else:
        assert back == value and type(back) is type(value if not isinstance(value, np.floating) else 1.0)


def test_a_lying_float_arrives_as_its_value():
    back = roundtrip(LyingFloat(1.0))
    assert type(back) is float and back != 2.0


def test_objects_arrive_as_unsupported_and_equal_nothing():
    back = roundtrip(Anything())
    assert isinstance(back, codec.Unsupported) and back != back and "Anything" in back.type_name


def test_object_arrays_and_huge_arrays_are_refused():
    with pytest.raises(codec.EncodingError):
        codec.to_plain(np.array([Anything()], dtype=object))
    with pytest.raises(codec.EncodingError):
        codec.to_plain(np.zeros(codec.MAX_ARRAY_BYTES // 8 + 1))


@pytest.mark.parametrize("tree", [{"pickle": "x"}, {"array": {"dtype": "|O", "shape": [1], "data": ""}}, [1, 2],
                                  {"float": 1.0, "list": []}])
def test_malformed_messages_are_refused(tree):
    with pytest.raises(codec.EncodingError):
        codec.from_plain(tree)
