"""Plain data across the sandbox boundary, each value of its kind.

Everything a worker sends back is turned into JSON here, *inside the worker*,
and the judge rebuilds only builtins, numpy arrays and numpy scalars of
numbers, and :class:`TensorData` (a tensor's numbers and whether it had a
gradient history) from it, every field checked first. Each keeps its kind,
dtype and shape, so that a check can hold an answer to the type its docstring
promises (:func:`grader.engine.verify.returns`). No object the learner defined
ever reaches the judge: a class whose ``==`` always says True arrives as an
:class:`Unsupported` marker, a float subclass arrives as its float value, and
pickle is never used, so no code runs on decoding.

Arguments travel the same way in the other direction. A GPT-2 model cannot be
sent, so the judge sends a :class:`ModelSpec` and the worker builds the model
(see :mod:`grader.lesson.models`).

The messages that carry these trees are framed by :mod:`grader.engine.confinement.framing`.
"""

from __future__ import annotations

import base64
import math
import re
import sys
from dataclasses import dataclass, replace

import numpy as np

from grader.engine.confinement.clean import clean_text, clean_value
from grader.engine.confinement.policy import MAX_ARRAY_BYTES

# Numeric dtype kinds only: bool, signed, unsigned, float, complex.
_NUMERIC_KINDS = "biufc"


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


class TensorData(np.ndarray):
    """A torch tensor the worker returned, rebuilt by the judge (which never imports torch) as a numpy array.

    Its numbers, dtype and shape are the tensor's; ``grad`` says whether it
    carried a gradient history (``requires_grad``, or made by an operation
    on such a tensor): what a caller promised a float or an array could not
    use as one. Sent as an argument, it becomes a torch tensor in the worker.
    """

    grad = False

    def __array_finalize__(self, source):
        self.grad = getattr(source, "grad", False)


def tensor(array, grad: bool = False) -> TensorData:
    """``array`` marked as a tensor: what the judge sends for a torch tensor argument, and how one comes back."""
    marked = np.array(array).view(TensorData)
    marked.grad = grad
    return marked


def _numbers(value: np.ndarray | np.generic) -> dict:
    """An array's (or a numpy scalar's) dtype, shape and bytes, exactly: a 0-d array keeps its shape ()."""
    if value.dtype.kind not in _NUMERIC_KINDS:
        raise EncodingError(f"returned an array of {value.dtype} values; numbers were expected")
    if value.nbytes > MAX_ARRAY_BYTES:
        raise EncodingError(f"returned an array of {value.nbytes / 2**20:.0f} MB, far more than needed")
    return {"dtype": value.dtype.str, "shape": list(np.shape(value)),
            "data": base64.b64encode(value.tobytes()).decode("ascii")}


def to_plain(value):
    """Turn a value into a JSON-ready tree (runs in the worker, on learner values).

    Each value keeps its kind: a Python float, a numpy scalar (its dtype
    too), a numpy array and a torch tensor arrive as four different things,
    so a check can hold a function to the type its docstring promises.
    """
    if value is None or type(value) in (bool, str):
        return value
    if isinstance(value, ModelSpec):
        return {"model_spec": value.plain()}
    if isinstance(value, np.generic) and not isinstance(value, np.ndarray):
        return {"scalar": _numbers(value)}
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return {"float": float(value)}
    if isinstance(value, (tuple, list)):
        return {"tuple" if isinstance(value, tuple) else "list": [to_plain(v) for v in value]}
    if isinstance(value, dict) and all(type(key) is str for key in value):
        return {"dict": [[key, to_plain(item)] for key, item in value.items()]}
    if isinstance(value, TensorData):
        return {"tensor": {**_numbers(np.asarray(value)), "grad": bool(value.grad)}}
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        grad = bool(value.requires_grad or value.grad_fn is not None)
        plain = value.detach().cpu()
        return {"tensor": {**_numbers(plain.numpy() if plain.dtype != torch.bfloat16 else plain.float().numpy()),
                           "grad": grad}}
    if isinstance(value, np.ndarray):
        return {"array": _numbers(np.asarray(value))}
    return {"unsupported": type_name(value)}


_FIELDS = {"array": {"dtype", "shape", "data"}, "scalar": {"dtype", "shape", "data"},
           "tensor": {"dtype", "shape", "data", "grad"}}
MAX_DIMENSIONS = 32  # numpy's own limit is 64; no value of the kit has more than 4


def _rebuilt(tag: str, body) -> np.ndarray:
    """The array a worker's ``array``, ``scalar`` or ``tensor`` stands for, every field checked first."""
    if not isinstance(body, dict) or set(body) != _FIELDS[tag]:
        raise EncodingError(f"malformed {tag} from the worker")
    kind, shape, data = body["dtype"], body["shape"], body["data"]
    if not (isinstance(kind, str) and len(kind) <= 4 and re.fullmatch(r"[<>|=][biufc][0-9]{1,2}", kind)):
        raise EncodingError(f"malformed {tag} dtype from the worker")
    if not (isinstance(shape, list) and len(shape) <= MAX_DIMENSIONS and all(type(n) is int and n >= 0 for n in shape)
            and isinstance(data, str)) or (tag == "scalar" and shape) or (tag == "tensor" and type(body["grad"]) is not bool):
        raise EncodingError(f"malformed {tag} from the worker")
    dtype = np.dtype(kind)
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        raise EncodingError(f"malformed {tag} data from the worker") from None
    if len(raw) != dtype.itemsize * math.prod(shape):
        raise EncodingError(f"{tag} from the worker: {len(raw)} bytes for shape {tuple(shape)} of {dtype}")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def from_plain(tree, specs: bool = False):
    """Rebuild a value from :func:`to_plain`'s output, of the kind it was: a numpy scalar stays one.

    The judge rebuilds what workers send with ``specs=False``: a worker may not
    hand the judge a ModelSpec, and a tensor arrives as :class:`TensorData`.
    Workers rebuild their arguments with ``specs=True``: a ModelSpec, and a
    tensor as a torch tensor.
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
        return _rebuilt(tag, body)
    if tag == "scalar":
        return _rebuilt(tag, body)[()]
    if tag == "tensor":
        array = _rebuilt(tag, body)
        return _torch_tensor(array, body["grad"]) if specs else tensor(array, body["grad"])
    if tag == "model_spec" and specs:
        return ModelSpec(**body)
    if tag == "unsupported":
        return Unsupported(clean_text(str(body), 100))
    raise EncodingError(f"unknown tag {tag!r} from the worker")


def _torch_tensor(array: np.ndarray, grad: bool):
    """A tensor argument as the learner's function receives it: a torch tensor, in a worker that has torch."""
    torch = sys.modules.get("torch")
    if torch is None:
        raise EncodingError("the judge sent a tensor to a worker without torch")
    return torch.from_numpy(array).requires_grad_(grad)


# -- text from the worker, cleaned once where it crosses -------------------------------------
# What a learner's code wrote is cleaned here, as the judge takes it in (the slot, from_plain, a notebook's text):
# nothing after it needs to ask whether a string is safe to keep. How a format shows it (a backslash escape in a
# file, HTML's entities, Markdown's quoting) is each format's own, at the edge: results.writable, reports.inert.
