"""Plain data across the sandbox boundary.

Everything a worker sends back is turned into JSON here, *inside the worker*,
and the judge rebuilds only builtins and numpy arrays of numbers from it. No
object the learner defined ever reaches the judge: a class whose ``==`` always
says True arrives as an :class:`Unsupported` marker, a float subclass arrives
as its float value, and pickle is never used, so no code runs on decoding.

Arguments travel the same way in the other direction. A GPT-2 model cannot be
sent, so the judge sends a :class:`ModelSpec` and the worker builds the model
(see :mod:`grader.gpt2`).
"""

from __future__ import annotations

import base64
import json
import sys
from dataclasses import asdict, dataclass

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
    """

    kind: str = "tiny"
    part: str = "model"
    seed: int = 0
    head: str = "lm"
    path: str | None = None

    def tokenizer(self) -> "ModelSpec":
        return ModelSpec(self.kind, "tokenizer", self.seed, self.head, self.path)


def type_name(value) -> str:
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def to_plain(value):
    """Turn a value into a JSON-ready tree (runs in the worker, on learner values)."""
    if value is None or type(value) in (bool, str):
        return value
    if isinstance(value, ModelSpec):
        return {"model_spec": asdict(value)}
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


def from_plain(tree):
    """Rebuild a value from :func:`to_plain`'s output (runs in the judge)."""
    if tree is None or isinstance(tree, (bool, int, str)):
        return tree
    if not isinstance(tree, dict) or len(tree) != 1:
        raise EncodingError("malformed message from the worker")
    (tag, body), = tree.items()
    if tag == "float":
        return float(body)
    if tag in ("tuple", "list"):
        items = [from_plain(item) for item in body]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict":
        return {str(key): from_plain(item) for key, item in body}
    if tag == "array":
        dtype = np.dtype(body["dtype"])
        if dtype.kind not in _NUMERIC_KINDS:
            raise EncodingError("malformed array from the worker")
        data = base64.b64decode(body["data"])
        return np.frombuffer(data, dtype=dtype).reshape(body["shape"]).copy()
    if tag == "model_spec":
        return ModelSpec(**body)
    if tag == "unsupported":
        return Unsupported(str(body))
    raise EncodingError(f"unknown tag {tag!r} from the worker")


def dumps(message) -> bytes:
    return json.dumps(message).encode()


def loads(data: bytes):
    return json.loads(data)
