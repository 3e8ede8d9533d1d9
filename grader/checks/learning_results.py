"""What the learning checks share: a learner's results of exercise 5 read, with the verdict of reading them wrong.

The public and hidden checks call ``learning`` and take its pairs apart the
same way, so an autograd error, a slope of None or a loss that blew up is
told what it means wherever it happens, and both hold them to one tolerance.
"""

import numpy as np

from grader.engine import verify
from grader.engine.errors import SubmissionError
from grader.engine.results import ErrorKind

# float32 is enough to earn full marks: slopes to £1 per bedroom (1e-3 £k), losses to 1e-5 relative.
SLOPE_ATOL, LOSS_RTOL = 1e-3, 1e-5

GRAPH_CUT = ("Torch lost track of how the result depends on what you differentiate: a .item(), float(), "
             ".numpy() or torch.tensor(...) of a tensor in the middle gives a plain number, and no gradient "
             "flows through it. Keep every step a torch operation on tensors.")


def learner(submission, function, *args, graph_hint=GRAPH_CUT, graph_mistake="graph-cut", once=False):
    """Call learning.<function>; an autograd error becomes a verdict that says what it means (``graph_mistake``).

    ``once``: other checks judge the same call, and the learner's code runs it once per submission.
    """
    call = getattr(submission.learning, function)
    try:
        return (call.once if once else call)(*args)
    except SubmissionError as error:
        autograd = ("does not require grad", "NoneType")
        if error.kind == ErrorKind.EXCEPTION and any(sign in error.message for sign in autograd):
            verify.fail(f"{error} {graph_hint}", graph_mistake)
        raise


def descent(result, what, names="(sharpness, losses)"):
    """A fit's (parameter, losses), checked for type; a loss that blew up gets a hint about the steps."""
    parameter, losses = verify.pair(result, what, names)
    losses = verify.array(losses, f"the losses of {what}", finite=False)
    if losses.ndim != 1:
        verify.fail(f"the losses of {what} must be a flat list, one float per step; received shape {losses.shape}.")
    blown = np.flatnonzero(~np.isfinite(losses))
    if blown.size:
        verify.fail(f"the loss of {what} became {losses[blown[0]]} at step {blown[0]}: the steps went out of "
                    "control. Step by lr times the gradient, with lr as given, against the gradient, on the mean "
                    "(not the sum) of the squared errors.", "loss-blew-up")
    return verify.number(parameter, f"the result of {what}"), losses


def slope_pair(result, what, cause="", mistake=""):
    """An ``(answer, slope)`` pair of floats; None as the slope gets the lesson's hint, NaN the ``cause`` (named
    ``mistake``)."""
    answer, slope = verify.pair(result, what, "(answer, slope)")
    if slope is None:
        verify.fail(f"{what} returned None as the slope. No gradient means a slope of 0: return 0.0.", "slope-none")
    return (verify.number(answer, f"the answer of {what}", cause, mistake),
            verify.number(slope, f"the slope of {what}", cause, mistake))
