"""One call judged by the type its docstring promises: what every exercise's ``test_return_types`` does.

The promise is written once per function (``returns`` in ``exercises.toml``)
and judged by one rule (:func:`grader.engine.verify.returns`), so every
exercise holds its functions to their types the same way.
"""

from grader.engine import registry, verify


def promised(function, *args, case: str = "", what: str = "", shape: tuple | None = None):
    """``function(*args)``'s value, failing unless it is of the promised type (``case``: where that depends on
    the arguments) and, if given, of ``shape``. ``what`` names the call in the verdict."""
    what = what or f"{function.__name__}(...)"
    value = function(*args)
    verify.returns(value, registry.exercise(function.exercise).promise(function.__name__, case), what)
    if shape is not None:
        verify.expect(value.shape == shape, lambda: f"{what} returns shape {value.shape}; the docstring promises "
                      f"{shape}.", "wrong-return-type")
    return value
