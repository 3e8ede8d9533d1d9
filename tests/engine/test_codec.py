"""Only plain data crosses the boundary: what cannot be rebuilt safely never is."""

import json

import numpy as np
import pytest

from grader.engine.confinement import clean, codec, framing


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
                                   np.arange(6.0).reshape(2, 3), np.array([True, False]), np.float32(1.5),
                                   np.float64(0.25), np.int64(-3), np.bool_(True), np.array(2.5), np.array(7, np.int32),
                                   np.zeros((0, 3)), np.arange(6.0).reshape(2, 3).T, np.array([1 + 2j])])
def test_plain_values_survive(value):
    """Each value comes back of its own kind: a numpy scalar stays one, a 0-d array keeps shape (), dtype kept."""
    back = roundtrip(value)
    assert type(back) is type(value)
    if isinstance(value, (np.ndarray, np.generic)):
        assert back.dtype == value.dtype and back.shape == value.shape and np.array_equal(back, value)
    elif isinstance(value, float) and np.isnan(value):
        assert np.isnan(back)
    else:
        assert back == value


def test_tensors_arrive_marked_with_their_gradient_history():
    """A torch tensor is not a numpy array: it arrives as TensorData, dtype, shape and gradient history kept."""
    torch = pytest.importorskip("torch")
    leaf = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    for value, grad in [(torch.arange(6.0).reshape(2, 3), False), (leaf, True), (leaf * 3, True),
                        ((leaf * 3).detach(), False), (torch.tensor(5), False)]:
        back = roundtrip(value)
        assert isinstance(back, codec.TensorData) and back.grad is grad
        assert back.shape == tuple(value.shape) and np.array_equal(back, value.detach().numpy())
        assert str(back.dtype) == str(value.dtype).removeprefix("torch.")


def test_a_tensor_argument_becomes_a_torch_tensor_in_the_worker():
    torch = pytest.importorskip("torch")
    sent = codec.tensor([[1.0, 2.0]], grad=False)
    back = codec.from_plain(json.loads(json.dumps(codec.to_plain([sent]))), specs=True)[0]
    assert isinstance(back, torch.Tensor) and back.dtype == torch.float64 and back.tolist() == [[1.0, 2.0]]
    assert not back.requires_grad


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


EIGHT_BYTES = "AAAAAAAA8D8="  # 1.0 as a little-endian float64


@pytest.mark.parametrize("tree", [
    {"pickle": "x"}, {"array": {"dtype": "|O", "shape": [1], "data": ""}}, [1, 2], {"float": 1.0, "list": []},
    {"array": {"dtype": "<f8", "shape": [10**30, 10**30], "data": ""}},  # more items than its bytes
    {"array": {"dtype": "<f8", "shape": [2], "data": EIGHT_BYTES}},  # one number for two
    {"array": {"dtype": "<f8", "shape": [-1], "data": EIGHT_BYTES}},
    {"array": {"dtype": "<f8", "shape": [1], "data": EIGHT_BYTES, "extra": 1}},
    {"array": {"dtype": "<U1", "shape": [1], "data": "YQAAAA=="}}, {"array": {"dtype": ["<f8"], "shape": [1], "data": ""}},
    {"array": {"dtype": "<f8", "shape": [1], "data": "not base64!"}},
    {"scalar": {"dtype": "<f8", "shape": [1], "data": EIGHT_BYTES}},  # a scalar has no shape
    {"tensor": {"dtype": "<f8", "shape": [1], "data": EIGHT_BYTES}},  # no word on its gradient
    {"tensor": {"dtype": "<f8", "shape": [1], "data": EIGHT_BYTES, "grad": "yes"}},
    {"array": {"dtype": "<f8", "shape": [1] * 40, "data": EIGHT_BYTES}},
])
def test_malformed_messages_are_refused(tree):
    with pytest.raises(codec.EncodingError):
        codec.from_plain(tree)


# -- text that must be encodable -------------------------------------------------------------

@pytest.mark.parametrize("text", ["\ud800", "a\udfffb", "\ud83d\ude00 split pair", "é\udcff\x1b[2J"])
def test_clean_text_leaves_no_lone_surrogate(text):
    cleaned = clean.clean_text(text)
    cleaned.encode("utf-8")  # a file, a CSV cell or a terminal takes it
    assert len(cleaned) == len(text) and "\ufffd" in cleaned


def test_clean_text_caps_before_it_cleans():
    cleaned = clean.clean_text("\ud800" * 10**6, 100)
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
        theirs.sendall(framing._HEADER.pack(len(body)))
        sender = __import__("threading").Thread(target=lambda: (theirs.sendall(body), framing.send(theirs, {"next": 1})))
        sender.start()
        assert framing.receive_or_skip(ours, None, 1000) == (None, len(body))
        assert framing.receive(ours, None, 1000) == {"next": 1}  # the conversation goes on
        sender.join()
    finally:
        ours.close()
        theirs.close()


def test_the_shape_check_counts_across_pieces():
    """Nesting that climbs over a piece boundary is still seen, and a flood of items still refused."""
    with pytest.raises(codec.EncodingError, match="nested"):
        framing._check_shape(b" " * (framing._CHUNK - 20) + b"[" * (framing.MAX_DEPTH + 1))
    with pytest.raises(codec.EncodingError, match="items"):
        framing._check_shape(b"," * (framing.MAX_ITEMS + 1))
    framing._check_shape(b"[" * framing.MAX_DEPTH + b"]" * framing.MAX_DEPTH + b" " * framing._CHUNK + b"[[]]")
