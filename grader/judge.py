"""What checks use to judge plain data: shape, type and closeness, with hints.

A failed check raises :class:`CheckFailure`, whose message is what the learner
reads: what was expected, what was received, and a hint in the lesson's
words. The checks never show reference code, only numbers.
"""

from __future__ import annotations

import numpy as np

from grader.codec import Unsupported


class CheckFailure(AssertionError):
    """A check's verdict: the message is shown to the learner as it is."""


def fail(message: str):
    raise CheckFailure(message)


def show(value, precision: int = 4) -> str:
    """A short, readable rendering of a received or expected value."""
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=precision, threshold=24, edgeitems=2, max_line_width=100)
    if isinstance(value, float):
        return f"{value:.{precision}g}" if abs(value) < 1e5 else f"{value:.4e}"
    return repr(value)


def percent(weights) -> str:
    return "[" + ", ".join(f"{100 * w:.2f}%" for w in np.ravel(weights)) + "]"


def _describe_type(value) -> str:
    if value is None:
        return "None (did you forget a `return`?)"
    if isinstance(value, Unsupported):
        return f"an object of type {value.type_name}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)} items"
    return f"a {type(value).__name__}"


def array(value, what: str, shape: tuple | None = None, finite: bool = True) -> np.ndarray:
    """``value`` as a float array, failing with a clear message if it is not one.

    Lists of numbers are accepted (the maths is the same); ``None``, objects,
    ragged lists, the wrong shape and, unless ``finite=False``, NaN or
    infinity are not.
    """
    if isinstance(value, (Unsupported, str)) or value is None:
        fail(f"{what}: expected an array of numbers, received {_describe_type(value)}.")
    try:
        result = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        fail(f"{what}: expected an array of numbers, received {_describe_type(value)}.")
    if shape is not None and result.shape != tuple(shape):
        fail(f"{what}: expected shape {tuple(shape)}, received shape {result.shape}.")
    if finite and not np.all(np.isfinite(result)):
        bad = "NaN" if np.any(np.isnan(result)) else "infinity"
        fail(f"{what} contains {bad}: {show(result)}. exp() of a large score overflows to inf, and "
             "inf/inf is NaN: subtract the largest score before exponentiating.")
    return result


def number(value, what: str) -> float:
    """``value`` as a float; a 0-d or one-element array counts as a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.ndarray)):
        fail(f"{what}: expected a number, received {_describe_type(value)}.")
    if isinstance(value, np.ndarray):
        if value.size != 1:
            fail(f"{what}: expected a single number, received an array of shape {value.shape}.")
        value = value.reshape(())
    result = float(value)
    if not np.isfinite(result):
        fail(f"{what}: expected a finite number, received {result}.")
    return result


def pair(value, what: str, names: str = "(output, weights)"):
    """A function that must return two things returned exactly two."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        fail(f"{what} must return a pair {names}; received {_describe_type(value)}.")
    return value


def close(received, expected, what: str, hint: str = "", atol: float = 1e-6, rtol: float = 1e-6):
    """Fail unless ``received`` matches ``expected`` within ``atol + rtol*|expected|``."""
    received_array = np.asarray(received, dtype=float)
    expected_array = np.asarray(expected, dtype=float)
    if received_array.shape != expected_array.shape:
        fail(f"{what}: expected shape {expected_array.shape}, received shape {received_array.shape}.")
    if np.allclose(received_array, expected_array, atol=atol, rtol=rtol, equal_nan=False):
        return
    if received_array.size == 1:  # enough digits to see the difference
        a, b = expected_array.item(), received_array.item()
        digits = next((p for p in range(4, 17) if f"{a:.{p}g}" != f"{b:.{p}g}"), 17)
        message = f"{what}: expected {a:.{digits}g}, received {b:.{digits}g}"
    else:
        wrong = ~np.isclose(received_array, expected_array, atol=atol, rtol=rtol)
        worst = np.unravel_index(np.argmax(np.where(wrong, np.abs(received_array - expected_array), -1)),
                                 received_array.shape)
        index = tuple(int(i) for i in worst)
        if received_array.size <= 24:
            message = f"{what}: expected {show(expected_array)}, received {show(received_array)}"
        else:
            message = f"{what}: {int(wrong.sum())} of {wrong.size} entries are off"
        message += (f" (largest difference at index {index}: expected {show(float(expected_array[index]))}, "
                    f"received {show(float(received_array[index]))})")
    fail(message + (f". {hint}" if hint else "."))


def expect(condition, message: str):
    if not condition:
        fail(message)
