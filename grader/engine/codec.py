"""Plain data across the sandbox boundary, and the framing of the messages that carry it.

Everything a worker sends back is turned into JSON here, *inside the worker*,
and the judge rebuilds only builtins and numpy arrays of numbers from it. No
object the learner defined ever reaches the judge: a class whose ``==`` always
says True arrives as an :class:`Unsupported` marker, a float subclass arrives
as its float value, and pickle is never used, so no code runs on decoding.

Arguments travel the same way in the other direction. A GPT-2 model cannot be
sent, so the judge sends a :class:`ModelSpec` and the worker builds the model
(see :mod:`grader.exercises.models`).

Messages are length-prefixed JSON on a stream socket. The judge reads them
with :func:`receive`, which holds the whole read to one deadline, refuses a
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
from dataclasses import asdict, dataclass, replace

import numpy as np

# Numeric dtype kinds only: bool, signed, unsigned, float, complex.
_NUMERIC_KINDS = "biufc"
MAX_ARRAY_BYTES = 64 * 2**20


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

    def plain(self) -> dict:
        """Its fields, less a standard shape: a spec reads as it did before shapes, and so do recorded answers."""
        fields = asdict(self)
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
    if tree is None or isinstance(tree, (bool, int, str)):
        return tree
    if not isinstance(tree, dict) or len(tree) != 1:
        raise EncodingError("malformed message from the worker")
    (tag, body), = tree.items()
    if tag == "float":
        return float(body)
    if tag in ("tuple", "list"):
        items = [from_plain(item, specs) for item in body]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict":
        return {str(key): from_plain(item, specs) for key, item in body}
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


# -- text from the worker ----------------------------------------------------------------

_INVISIBLE = {*range(0x00, 0x20), *range(0x7F, 0xA0), 0x200E, 0x200F, *range(0x202A, 0x202F),
              *range(0x2066, 0x206A)}  # control characters and bidirectional overrides
_CLEAN = {code: "\ufffd" for code in _INVISIBLE if code not in (0x09, 0x0A)}


def clean_text(text: str, limit: int = 2000) -> str:
    """Learner-supplied text made safe for a table, a file or a terminal: no control characters, capped."""
    text = str(text).translate(_CLEAN)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- messages ------------------------------------------------------------------------------

MAX_DEPTH = 40  # nesting of JSON containers; a value of the kit is at most a few levels deep
MAX_ITEMS = 300_000  # containers and separators: each costs the judge up to ~100 bytes once decoded
_HEADER = struct.Struct("!I")
_NESTING = np.zeros(256, dtype=np.int8)  # +1 for a bracket that opens, -1 for one that closes
_NESTING[list(b"[{")], _NESTING[list(b"]}")] = 1, -1
_ITEMS = np.zeros(256, dtype=bool)  # what starts a container or separates its items
_ITEMS[list(b"[{,:")] = True


def send(sock: socket.socket, message) -> None:
    body = json.dumps(message, separators=(",", ":")).encode()
    sock.sendall(_HEADER.pack(len(body)) + body)


def receive(sock: socket.socket, deadline: float | None, max_bytes: int):
    """The next message; TimeoutError past ``deadline`` (time.monotonic; None waits), EOFError if the peer closed.

    Raises EncodingError for a message that is too large, too deep or too
    many items, or is not JSON, without building it.
    """
    size, = _HEADER.unpack(_read_exactly(sock, _HEADER.size, deadline))
    if size > max_bytes:
        raise EncodingError(f"sent a message of {size / 2**20:.0f} MB, more than the {max_bytes / 2**20:.0f} MB "
                            "allowed")
    body = _read_exactly(sock, size, deadline)
    _check_shape(body)
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise EncodingError("sent a message that is not JSON") from None


def _read_exactly(sock: socket.socket, size: int, deadline: float | None) -> bytes:
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            sock.settimeout(remaining)
        try:
            count = sock.recv_into(view[got:])
        except socket.timeout:
            raise TimeoutError from None
        if count == 0:
            raise EOFError
        got += count
    return bytes(buffer)


def _check_shape(body: bytes):
    """Refuse deep nesting and floods of small items by counting brackets and separators.

    Brackets inside strings count too, so the bounds are conservative: a
    learner's string full of brackets can only be refused, never slip through.
    """
    data = np.frombuffer(body, dtype=np.uint8)
    items = int(np.count_nonzero(_ITEMS[data]))
    if items > MAX_ITEMS:
        raise EncodingError(f"sent a value of {items:,} separate items, more than the grader accepts")
    if items and int(np.cumsum(_NESTING[data], dtype=np.int32).max()) > MAX_DEPTH:
        raise EncodingError(f"sent a value nested more than {MAX_DEPTH} levels deep")
