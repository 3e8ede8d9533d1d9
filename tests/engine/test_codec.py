"""Only plain data crosses the boundary: what cannot be rebuilt safely never is."""

import json

import numpy as np
import pytest

from grader.engine.confinement import codec


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


# -- text that must be encodable -------------------------------------------------------------

@pytest.mark.parametrize("text", ["\ud800", "a\udfffb", "\ud83d\ude00 split pair", "é\udcff\x1b[2J"])
def test_clean_text_leaves_no_lone_surrogate(text):
    cleaned = codec.clean_text(text)
    cleaned.encode("utf-8")  # a file, a CSV cell or a terminal takes it
    assert len(cleaned) == len(text) and "\ufffd" in cleaned


def test_clean_text_caps_before_it_cleans():
    cleaned = codec.clean_text("\ud800" * 10**6, 100)
    assert len(cleaned) == 100 and cleaned.endswith("…")


def test_strings_from_a_worker_arrive_encodable():
    """JSON carries a lone surrogate as "\\ud800"; the judge rebuilds it as U+FFFD, in values and dict keys."""
    back = codec.from_plain(json.loads('{"dict": [["k\\udc80", "v\\ud800"]]}'))
    assert back == {"k\ufffd": "v\ufffd"}
    assert codec.from_plain("plain é") == "plain é"


def test_an_oversized_message_is_skipped_in_pieces():
    import socket

    ours, theirs = socket.socketpair()
    try:
        body = b'"' + b"x" * (3 * 2**20) + b'"'
        theirs.sendall(codec._HEADER.pack(len(body)))
        sender = __import__("threading").Thread(target=lambda: (theirs.sendall(body), codec.send(theirs, {"next": 1})))
        sender.start()
        assert codec.receive_or_skip(ours, None, 1000) == (None, len(body))
        assert codec.receive(ours, None, 1000) == {"next": 1}  # the conversation goes on
        sender.join()
    finally:
        ours.close()
        theirs.close()


def test_the_shape_check_counts_across_pieces():
    """Nesting that climbs over a piece boundary is still seen, and a flood of items still refused."""
    with pytest.raises(codec.EncodingError, match="nested"):
        codec._check_shape(b" " * (codec._CHUNK - 20) + b"[" * (codec.MAX_DEPTH + 1))
    with pytest.raises(codec.EncodingError, match="items"):
        codec._check_shape(b"," * (codec.MAX_ITEMS + 1))
    codec._check_shape(b"[" * codec.MAX_DEPTH + b"]" * codec.MAX_DEPTH + b" " * codec._CHUNK + b"[[]]")
