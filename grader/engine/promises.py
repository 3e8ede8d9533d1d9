"""The types a function's docstring promises to return, written once per function in ``exercises.toml``.

A promise is a short phrase (``returns`` in ``grader/checks/exercises.toml``):

    float                  a Python float (np.float64, a float itself, too; not np.float32, a 0-d array, a tensor)
    str                    a Python string
    any                    whatever the function was given to return (a lookup's stored value), None included
    float array            a numpy array of floats, float64 or float32, or a torch tensor of them with no
                           gradient history (the kit's looser types: docs/learners.md); ``2-d float array``
                           also promises the number of dimensions, ``bool array`` booleans
    float tensor           a torch tensor of floats (a gradient history is allowed); ``0-d float tensor``, ...
    list of P              a list whose every item keeps promise P
    (P, Q, ...)            a tuple (or a list) of that many items, each keeping its own promise

:func:`parse` reads a phrase (the registry reads them all when it loads, so
a typo fails there); :func:`broken` says how a received value breaks one, in
words for the learner, or None. :func:`grader.engine.verify.returns` is the
rule the checks use. The received value is what the codec rebuilt: a numpy
scalar, a 0-d array and a tensor (:class:`~grader.engine.confinement.codec.TensorData`)
each arrive as what they were.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from grader.engine.confinement.codec import TensorData, Unsupported

_NUMBERS = re.compile(r"(?:(?P<rank>[0-9])-d )?(?P<family>float|bool) (?P<kind>array|tensor)")
_FAMILIES = {"float": "f", "bool": "b"}


class PromiseError(ValueError):
    """A phrase that is not a promise; the message says which part."""


@lru_cache(maxsize=None)
def parse(text: str) -> tuple:
    """The promise a phrase states, as nested tuples: ("float",), ("array", "float", 2), ("tuple", (...)), ..."""
    text = text.strip()
    if text in ("float", "str", "any"):
        return (text,)
    if text.startswith("list of "):
        return ("list", parse(text.removeprefix("list of ")))
    if text.startswith("(") and text.endswith(")"):
        items, depth, start = [], 0, 1
        for at, character in enumerate(text[1:-1], 1):
            depth += {"(": 1, ")": -1}.get(character, 0)
            if character == "," and depth == 0:
                items, start = items + [text[start:at]], at + 1
        return ("tuple", tuple(parse(item) for item in items + [text[start:-1]]))
    if found := _NUMBERS.fullmatch(text):
        rank = found["rank"]
        return (found["kind"], found["family"], int(rank) if rank else None)
    raise PromiseError(f"{text!r} is not a promise (float, str, any, [N-d] float|bool array|tensor, list of ..., "
                       "(..., ...))")


def says(promise: tuple) -> str:
    """A promise in the docstring's words: "a numpy array of floats with 2 dimensions"."""
    kind = promise[0]
    if kind in ("float", "str"):
        return {"float": "a Python float", "str": "a string"}[kind]
    if kind == "any":
        return "a value"
    if kind == "list":
        return f"a list of {says(promise[1]).removeprefix('a ').removeprefix('an ')}s"
    if kind == "tuple":
        return f"a tuple of {len(promise[1])} ({', '.join(says(item) for item in promise[1])})"
    _, family, rank = promise
    things = {"float": "floats", "bool": "booleans"}[family]
    return f"a {'' if rank is None else f'{rank}-d '}{'numpy array' if kind == 'array' else 'torch tensor'} of {things}"


def received(value) -> str:
    """What came back, as precisely as the promises need: its kind, dtype, shape and gradient history."""
    if value is None:
        return "None (did you forget a `return`?)"
    if isinstance(value, Unsupported):
        return f"an object of type {value.type_name}"
    if isinstance(value, TensorData):
        history = ", with a gradient history" if value.grad else ""
        return f"a torch tensor of {value.dtype}, shape {value.shape}{history}"
    if isinstance(value, np.ndarray):
        return f"a numpy array of {value.dtype}, shape {value.shape}"
    if isinstance(value, np.generic):
        return f"a numpy {value.dtype} scalar"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)} item{'s' if len(value) != 1 else ''}"
    return {bool: "a bool", int: "a Python int", float: "a Python float", str: "a string"}.get(
        type(value), f"a {type(value).__name__}")


def broken(value, promise: tuple, what: str, item: str = "") -> str | None:
    """How ``value`` breaks ``promise``, as a sentence about ``what`` (the call), or None. ``item`` is where
    ``value`` lies inside the call's answer (``[1][0]``: item 0 of its item 1), empty for the answer itself."""
    kind = promise[0]
    said = _Sentence(what, item, value, promise)
    if kind == "any":
        return None
    if kind == "tuple":
        items = promise[1]
        if not isinstance(value, (tuple, list)) or len(value) != len(items):
            return said(f"return the {len(items)} things as a tuple, `return a, b`")
        return _first(value, items, what, item)
    if kind == "list":
        if not isinstance(value, list):
            return said("make it a list (`.tolist()`, or `list(...)`)" if isinstance(value, (tuple, np.ndarray))
                        else "collect the items in a list")
        return _first(value, [promise[1]] * len(value), what, item)
    if kind == "str":
        return None if isinstance(value, str) else said("return the text itself")
    if kind == "float":
        if (isinstance(value, float) and not isinstance(value, np.floating)) or type(value) is np.float64:
            return None
        return said(_to_float(value))
    return _numbers(value, promise, said)


def _numbers(value, promise: tuple, said) -> str | None:
    """How an array or a tensor breaks its promise: kind, dtype family, number of dimensions, in that order."""
    kind, family, rank = promise
    is_tensor = isinstance(value, TensorData)
    if kind == "tensor" and not is_tensor:
        return said("compute it with torch (`torch.as_tensor(x, dtype=torch.float64)` for each input), not numpy "
                    "or Python numbers")
    if kind == "array" and is_tensor and value.grad:
        return said("a tensor with a gradient history is no array for the caller: `.detach().numpy()` (or compute "
                    "it under `torch.no_grad()`)")
    if not isinstance(value, np.ndarray):
        return said("wrap it in `np.asarray`" if isinstance(value, (list, tuple)) else
                    "return the array itself, not a number taken out of it")
    if value.dtype.kind != _FAMILIES[family]:
        floats = "`torch.as_tensor(x, dtype=torch.float64)`" if kind == "tensor" else "`np.asarray(x, dtype=float)`"
        return said(f"turn the inputs into floats first ({floats}): integers in, integers out" if family == "float"
                    else "compare, or build it with `dtype=bool`: True may attend, False may not")
    if rank is not None and value.ndim != rank:
        return said(f"keep all {rank} dimensions, even those of size 1 (no `squeeze`, `[0]` or `.item()` on the "
                    "way out)")
    return None


def _to_float(value) -> str:
    if isinstance(value, TensorData):
        return "take the number out of the tensor with `.item()`" + (
            ", which also drops its gradient history" if value.grad else "")
    if isinstance(value, (np.ndarray, np.generic, int)) and not isinstance(value, bool):
        return "make it a Python float with `float(...)`" + (
            " (float32 is not what the docstring asks for)" if getattr(value, "dtype", None) == np.float32 else "")
    return "return the number itself, as a float"


def _first(values, promises, what: str, item: str) -> str | None:
    """The first item of a tuple or list that breaks its promise, named by its place in the answer."""
    for position, (value, promise) in enumerate(zip(values, promises)):
        if problem := broken(value, promise, what, f"{item}[{position}]"):
            return problem
    return None


class _Sentence:
    """The verdict on one value, given the fix: "f() returns a list; the docstring promises ...: wrap it ..."."""

    def __init__(self, what: str, item: str, value, promise: tuple):
        self.subject = f"item {item} of what {what} returns is" if item else f"{what} returns"
        self.value, self.promise = value, promise

    def __call__(self, fix: str) -> str:
        return f"{self.subject} {received(self.value)}; the docstring promises {says(self.promise)}: {fix}."
