"""Calls judged by the type their docstring promises: what every exercise's ``test_return_types`` does.

The promise is written once per function (``returns`` in ``exercises.toml``)
and judged by one rule (:func:`grader.engine.verify.returns`), so every
exercise holds its functions to their types the same way.
"""

from grader.engine import registry, verify


def kept(function, value, what: str, case: str = "", shape: tuple | None = None):
    """``value``, which ``function`` returned, failing unless it is of the promised type (``case``: where that
    depends on the arguments) and, if given, of ``shape``. ``what`` names the call in the verdict."""
    verify.returns(value, registry.exercise(function.exercise).promise(function.__name__, case), what)
    if shape is not None:
        verify.expect(value.shape == shape, lambda: f"{what} returns shape {value.shape}; the docstring promises "
                      f"{shape}.", "wrong-return-type")
    return value


def promised(function, *args, case: str = "", what: str = "", shape: tuple | None = None):
    """``function(*args)``'s value, judged by :func:`kept`."""
    return kept(function, function(*args), what or f"{function.__name__}(...)", case, shape)
