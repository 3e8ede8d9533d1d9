"""Plain data across the sandbox boundary, and the framing of the messages that carry it.

Everything a worker sends back is turned into JSON here, *inside the worker*,
and the judge rebuilds only builtins and numpy arrays of numbers from it. No
object the learner defined ever reaches the judge: a class whose ``==`` always
says True arrives as an :class:`Unsupported` marker, a float subclass arrives
as its float value, and pickle is never used, so no code runs on decoding.

Arguments travel the same way in the other direction. A GPT-2 model cannot be
sent, so the judge sends a :class:`ModelSpec` and the worker builds the model
(see :mod:`grader.lesson.models`).

Messages are length-prefixed JSON on a stream socket. The judge reads them
with :func:`receive`, which holds the whole read to one deadline (a moment
on the monotonic clock, or a :class:`Deadline` such as a call's meter of the
worker's CPU time, :mod:`grader.engine.confinement.clock`), refuses a
message larger than it allows before reading it, and refuses one whose
nesting or number of items would cost the judge far more memory than its
size, before decoding it.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
import sys
import time
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from grader.engine.confinement.policy import MAX_ARRAY_BYTES, MAX_DEPTH, MAX_ITEMS

# Numeric dtype kinds only: bool, signed, unsigned, float, complex.
_NUMERIC_KINDS = "biufc"


class Deadline(Protocol):
    """A deadline that moves with something other than the clock on the wall: it says how long is left."""

    def left(self) -> float:
        """Seconds left (0 or less: the time is up)."""


POLL = 0.1  # seconds between two looks at a Deadline while no byte arrives


class EncodingError(Exception):
    """The learner's value cannot be sent as plain data; the message says why."""


@dataclass(frozen=True)
class Unsupported:
    """Stands for a returned object that is not plain data (never equal to anything)."""

    type_name: str

    def __eq__(self, other):
        return False

    __hash__ = object.__hash__

    def __repr__(self):
        return f"<a {self.type_name} object>"


@dataclass(frozen=True)
class ModelSpec:
    """Names a GPT-2 model and tokenizer that the worker builds for itself.

    kind: "tiny" (seeded, in memory) or "real" (GPT-2 small from disk).
    part: "model" or "tokenizer": which object the argument becomes.
    head: "lm" (GPT2LMHeadModel) or "base" (GPT2Model); learners must handle both.
    attentions: False gives a model that cannot report its attention weights,
    for functions that must recompute them.
    shape: which of the tiny GPT-2's shapes (``lesson.TINY_SHAPES``); GPT-2 small has only "standard".
    """

    kind: str = "tiny"
    part: str = "model"
    seed: int = 0
    head: str = "lm"
    path: str | None = None
    attentions: bool = True
    shape: str = "standard"

    def tokenizer(self) -> "ModelSpec":
        """The model's tokenizer: one for every shape, so its spec names none."""
        return ModelSpec(self.kind, "tokenizer", self.seed, self.head, self.path)

    def without_attentions(self) -> "ModelSpec":
        return replace(self, attentions=False)

    def family(self) -> set["ModelSpec"]:
        """This model, its tokenizer and its twin that reports no attention weights: what checks derive from it."""
        return {self, self.tokenizer(), self.without_attentions()}

    def plain(self) -> dict:
        """Its fields, less a standard shape: a spec reads as it did before shapes, and so do recorded answers."""
        fields = dict(vars(self))  # its fields are flat: asdict would copy them deeply, at 18 µs a spec
        if self.shape == "standard":
            del fields["shape"]
        return fields


def model_specs(value) -> set[ModelSpec]:
    """Every ModelSpec inside an argument list (the worker must build them before learner code runs)."""
    if isinstance(value, ModelSpec):
        return {value}
    if isinstance(value, (tuple, list)):
        return set().union(*(model_specs(item) for item in value))
    return set()


def type_name(value) -> str:
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def to_plain(value):
    """Turn a value into a JSON-ready tree (runs in the worker, on learner values)."""
    if value is None or type(value) in (bool, str):
        return value
    if isinstance(value, ModelSpec):
        return {"model_spec": value.plain()}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return {"float": float(value)}
    if isinstance(value, (tuple, list)):
        return {"tuple" if isinstance(value, tuple) else "list": [to_plain(v) for v in value]}
    if isinstance(value, dict) and all(type(key) is str for key in value):
        return {"dict": [[key, to_plain(item)] for key, item in value.items()]}
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        array = np.ascontiguousarray(np.asarray(value))
        if array.dtype.kind not in _NUMERIC_KINDS:
            raise EncodingError(f"returned an array of {array.dtype} values; numbers were expected")
        if array.nbytes > MAX_ARRAY_BYTES:
            raise EncodingError(f"returned an array of {array.nbytes / 2**20:.0f} MB, far more than needed")
        return {
            "array": {
                "dtype": array.dtype.str,
                "shape": list(array.shape),
                "data": base64.b64encode(array.tobytes()).decode("ascii"),
            }
        }
    return {"unsupported": type_name(value)}


def from_plain(tree, specs: bool = False):
    """Rebuild a value from :func:`to_plain`'s output.

    The judge rebuilds what workers send with ``specs=False``: a worker may not
    hand the judge a ModelSpec. Workers rebuild their arguments with ``specs=True``.
    """
    if tree is None or isinstance(tree, (bool, int)):
        return tree
    if isinstance(tree, str):  # a learner's string may be echoed in a verdict: it must be encodable
        return clean_value(tree)
    if not isinstance(tree, dict) or len(tree) != 1:
        raise EncodingError("malformed message from the worker")
    (tag, body), = tree.items()
    if tag == "float":
        return float(body)
    if tag in ("tuple", "list"):
        items = [from_plain(item, specs) for item in body]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict":
        return {clean_value(str(key)): from_plain(item, specs) for key, item in body}
    if tag == "array":
        dtype = np.dtype(body["dtype"])
        if dtype.kind not in _NUMERIC_KINDS:
            raise EncodingError("malformed array from the worker")
        data = base64.b64decode(body["data"])
        return np.frombuffer(data, dtype=dtype).reshape(body["shape"]).copy()
    if tag == "model_spec" and specs:
        return ModelSpec(**body)
    if tag == "unsupported":
        return Unsupported(clean_text(str(body), 100))
    raise EncodingError(f"unknown tag {tag!r} from the worker")


# -- text from the worker, cleaned once where it crosses -------------------------------------
# What a learner's code wrote is cleaned here, as the judge takes it in (the slot, from_plain, a notebook's text):
# nothing after it needs to ask whether a string is safe to keep. How a format shows it (a backslash escape in a
# file, HTML's entities, Markdown's quoting) is each format's own, at the edge: results.writable, reports.inert.

_INVISIBLE = {*range(0x00, 0x20), *range(0x7F, 0xA0), 0x200E, 0x200F, *range(0x202A, 0x202F),
              *range(0x2066, 0x206A)}  # control characters and bidirectional overrides
_SURROGATES = range(0xD800, 0xE000)  # alone in a str, they cannot be encoded: writing or printing them raises
_CLEAN = {code: "\ufffd" for code in [*_INVISIBLE, *_SURROGATES] if code not in (0x09, 0x0A)}
_CLEAN_VALUE = {code: "\ufffd" for code in _SURROGATES}


def clean_text(text: str, limit: int = 2000) -> str:
    """Learner-supplied text made safe for a table, a file or a terminal: no control characters, capped.

    It is also made encodable: a lone surrogate ("\\ud800", which JSON and a
    learner's exception message can carry) becomes U+FFFD, so nothing the
    judge writes or prints can fail on it. The cap comes first, so a flood
    costs the judge only ``limit`` characters of work.
    """
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.translate(_CLEAN)


def clean_value(text: str) -> str:
    """A learner's string *value*, cleaned of what :func:`clean_text` would, but only its lone surrogates
    (each becomes U+FFFD): a value is judged as it was sent, control characters, length and all. Fast for ASCII."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.translate(_CLEAN_VALUE)


# -- messages ------------------------------------------------------------------------------

_HEADER = struct.Struct("!I")
_NESTING = np.zeros(256, dtype=np.int8)  # +1 for a bracket that opens, -1 for one that closes
_NESTING[list(b"[{")], _NESTING[list(b"]}")] = 1, -1
_ITEMS = np.zeros(256, dtype=bool)  # what starts a container or separates its items
_ITEMS[list(b"[{,:")] = True
_CHUNK = 2**20  # bytes of a message checked, or skipped, at a time


def send(sock: socket.socket, *messages) -> None:
    """Send each of ``messages``, framed, in one write."""
    frames = []
    for message in messages:
        body = json.dumps(message, separators=(",", ":")).encode()
        frames += [_HEADER.pack(len(body)), body]
    sock.sendall(b"".join(frames))


def receive(sock: socket.socket, deadline: float | Deadline | None, max_bytes: int):
    """The next message; TimeoutError past ``deadline`` (time.monotonic, or a Deadline; None waits), EOFError if the
    peer closed.

    Raises EncodingError for a message that is too large, too deep or too
    many items, or is not JSON, without building it.
    """
    size, = _HEADER.unpack(_read_exactly(sock, _HEADER.size, deadline))
    if size > max_bytes:
        raise EncodingError(f"sent a message of {size / 2**20:.0f} MB, more than the {max_bytes / 2**20:.0f} MB "
                            "allowed")
    return _decoded(_read_exactly(sock, size, deadline))


def receive_or_skip(sock: socket.socket, deadline: float | Deadline | None, max_bytes: int):
    """``(message, size)``: the next message, or None in its place when it is over ``max_bytes``.

    An oversized message is read and dropped in small pieces (within the
    same deadline), so the conversation can go on and the judge never holds
    more than ``max_bytes`` of it: used for what a call printed, which is
    worth keeping only up to a cap.
    """
    size, = _HEADER.unpack(_read_exactly(sock, _HEADER.size, deadline))
    if size <= max_bytes:
        return _decoded(_read_exactly(sock, size, deadline)), size
    left = size
    while left:
        left -= len(_read_exactly(sock, min(left, _CHUNK), deadline))
    return None, size


def _decoded(body: bytearray):
    _check_shape(body)
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise EncodingError("sent a message that is not JSON") from None


def _read_exactly(sock: socket.socket, size: int, deadline: float | Deadline | None) -> bytearray:
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        if deadline is not None:
            remaining = deadline - time.monotonic() if isinstance(deadline, (int, float)) else deadline.left()
            if remaining <= 0:
                raise TimeoutError
            sock.settimeout(remaining if isinstance(deadline, (int, float)) else min(remaining, POLL))
        try:
            count = sock.recv_into(view[got:])
        except socket.timeout:
            continue  # the top of the loop says whether the time is up
        if count == 0:
            raise EOFError
        got += count
    view.release()
    return buffer  # no copy: json.loads and numpy read a bytearray as they read bytes


def _check_shape(body: bytes | bytearray):
    """Refuse deep nesting and floods of small items by counting brackets and separators.

    Brackets inside strings count too, so the bounds are conservative: a
    learner's string full of brackets can only be refused, never slip through.
    The count runs over pieces of the message, so it costs a few MB however
    large the message is.
    """
    if len(body) <= MAX_ITEMS and body.count(b"[") + body.count(b"{") <= MAX_DEPTH:
        return  # too few bytes for too many items, too few brackets to nest too deep: most messages
    data = np.frombuffer(body, dtype=np.uint8)
    items, depth = 0, 0
    for start in range(0, len(data), _CHUNK):
        piece = data[start:start + _CHUNK]
        items += int(np.count_nonzero(_ITEMS[piece]))
        if items > MAX_ITEMS:
            raise EncodingError(f"sent a value of more than {MAX_ITEMS:,} separate items, more than the grader "
                                "accepts")
        levels = np.cumsum(_NESTING[piece], dtype=np.int32)
        if len(levels) and depth + int(levels.max()) > MAX_DEPTH:
            raise EncodingError(f"sent a value nested more than {MAX_DEPTH} levels deep")
        depth += int(levels[-1]) if len(levels) else 0
