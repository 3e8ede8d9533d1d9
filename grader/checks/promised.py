"""Calls judged by the type their docstring promises, and by their values: what every ``test_return_types`` does.

The promise is written once per function (``returns`` in ``exercises.toml``)
and judged by one rule (:func:`grader.engine.verify.returns`), so every
exercise holds its functions to their types the same way. A check that judged
the type alone would give its point to a lazy answer of the right type
(weights all equal, zeros of the right shape), so each answer is also held to
``expected``, the answer the lesson's maths gives for the same call; the type
is judged first, so a wrong type is what the verdict names.
"""

from grader.engine import registry, verify

RIGHT_TYPE_WRONG_VALUES = ("Its type is the one promised, but its numbers are not the right ones: this exercise's "
                           "other checks say what went wrong.")


def kept(function, value, what: str, case: str = "", shape: tuple | None = None, expected=None,
         atol: float = 1e-6, rtol: float = 1e-6):
    """``value``, which ``function`` returned, failing unless it is of the promised type (``case``: where that
    depends on the arguments), if given of ``shape``, and close to ``expected`` (within ``atol + rtol * |expected|``;
    a tuple of expected items for an answer of several, a list of strings for tokens). ``what`` names the call."""
    verify.returns(value, registry.exercise(function.exercise).promise(function.__name__, case), what)
    if shape is not None:
        verify.expect(value.shape == shape, lambda: f"{what} returns shape {value.shape}; the docstring promises "
                      f"{shape}.", "wrong-return-type")
    if expected is not None:
        _same(value, expected, what, atol, rtol)
    return value


def promised(function, *args, case: str = "", what: str = "", shape: tuple | None = None, expected=None,
             atol: float = 1e-6, rtol: float = 1e-6):
    """``function(*args)``'s value, judged by :func:`kept`."""
    return kept(function, function(*args), what or f"{function.__name__}(...)", case, shape, expected, atol, rtol)


def _same(value, expected, what: str, atol: float, rtol: float):
    """Fail unless ``value`` (already of the promised type) holds ``expected``'s values, item by item."""
    if isinstance(expected, tuple):
        for place, (item, wanted) in enumerate(zip(value, expected)):
            _same(item, wanted, f"item [{place}] of {what}", atol, rtol)
    elif isinstance(expected, list) and all(isinstance(item, str) for item in expected):
        verify.expect(list(value) == expected, lambda: f"{what}: expected the tokens {expected}, received "
                      f"{list(value)}. {RIGHT_TYPE_WRONG_VALUES}")
    else:
        verify.close(value, expected, what, atol=atol, rtol=rtol, hint=RIGHT_TYPE_WRONG_VALUES)
