"""What the learning checks share: a learner's results of exercise 5 read, with the verdict of reading them wrong.

The public and hidden checks call ``learning`` and take its pairs apart the
same way, so an autograd error, a slope of None or a loss that blew up is
told what it means wherever it happens, and both hold them to one tolerance.
"""

import numpy as np

from grader.checks.learning_numpy import BEDROOMS, PRICES, slope_hint
from grader.engine import verify
from grader.engine.errors import SubmissionError
from grader.engine.results import ErrorKind

# Slopes to £1 per bedroom (1e-3 £k), losses to 1e-5 relative: float32 meets them on the lesson's numbers, but not
# on a slope at a high sharpness near a key (test_sharp_slope_needs_float64), where the docstring's float64 is needed.
SLOPE_ATOL, LOSS_RTOL = 1e-3, 1e-5

GRAPH_CUT = ("Torch lost track of how the result depends on what you differentiate: a .item(), float(), "
             ".numpy() or torch.tensor(...) of a tensor in the middle gives a plain number, and no gradient "
             "flows through it. Keep every step a torch operation on tensors.")
INTEGERS = ("Queries, keys and prices may be integers (the lesson's 3 bedrooms): a tensor made from an integer keeps "
            "an integer dtype, which cannot require gradients or meet a float. Give every tensor dtype=torch.float64: "
            "torch.as_tensor(x, dtype=torch.float64), torch.tensor(float(query), dtype=torch.float64, ...).")
# Why the nearest lookup's fit has no gradient, told to a learner whose code does not take it to be 0.
NO_PATH = ("That is the lesson itself: argmin cut every path from the key to the loss, so there is no "
           "gradient to take. Take it to be 0 in that case (check loss.requires_grad) and step anyway.")


def integer_tensor_error(message: str) -> bool:
    """Whether torch's ``message`` says an integer tensor met what needs a float one: requires_grad, or a product
    with floats ("found Float and Long", "float != long int")."""
    return "Only Tensors of floating point" in message or ("dtype" in message and
                                                           any(word in message for word in ("Long", "long int")))


# fit_sharpness's own defaults. The lesson's fit leaves them to it, so that a check covers them.
START, STEPS = 0.1, 200


def fit(submission, queries, answers, start=START, steps=STEPS, *more):
    """The learner's (sharpness, losses) for the house records, fitted once per submission for every check that
    judges the same fit (how far it got, how its losses fell). What is left at its default is not passed."""
    options = (start,) if steps == STEPS and not more else (start, steps, *more)
    options = () if options == (START,) else options
    return descent(learner(submission, "fit_sharpness", queries, answers, BEDROOMS, PRICES, *options, once=True),
                   "fit_sharpness(...)")


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
        if error.kind == ErrorKind.EXCEPTION and integer_tensor_error(error.message):
            verify.fail(f"{error} {INTEGERS}", "integers-not-floats")
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


def named_slope(slope, query, sharpness, otherwise: str, mistake: str = "", keys=BEDROOMS, values=PRICES) -> dict:
    """slope_hint's hint and its mistake's name, as verify.close takes them: a finite difference's, else
    ``mistake`` (``otherwise``'s)."""
    hint = slope_hint(slope, query, sharpness, otherwise, keys, values)
    return dict(hint=hint, mistake=mistake if hint == otherwise else "finite-difference")


def rises_with_the_query(answers) -> bool:
    """Soft answers of the nine queries, in order: the prices rise with the bedrooms, so the answers do too."""
    answers = np.asarray(answers, dtype=float)
    return answers.shape == (9,) and bool(np.all(np.diff(answers) > 0)) and bool(
        np.all((PRICES.min() <= answers) & (answers <= PRICES.max())))


def very_sharp_answer(submission, query, sharpness, answer, slope, keys, values):
    """soft_answer and answer_slope at one query of ``keys``, ``values``, against their values in closed form."""
    scores = -sharpness * (query - keys) ** 2
    cause = (f"The scores here are {verify.show(scores, 0)}: exp() of every one of them underflows to 0, and 0/0 "
             "is NaN. Dividing exp(score) by its sum is softmax without its safety step: use torch.softmax over the "
             "keys, which subtracts the largest score first.")
    records = "..." if keys is BEDROOMS else f"keys {keys.tolist()}, prices {values.tolist()}"
    what = f"soft_answer({query:g}, {records}, sharpness={sharpness:g})"
    received = verify.number(learner(submission, "soft_answer", query, keys, values, sharpness), what, cause,
                             "exp-over-sum-underflows")
    verify.close(received, answer, what, atol=1e-3, rtol=0)
    what = f"answer_slope({query:g}, {records}, sharpness={sharpness:g})"
    _, received = slope_pair(learner(submission, "answer_slope", query, keys, values, sharpness), what, cause,
                             "exp-over-sum-underflows")
    verify.close(received, slope, f"the slope of {what}", atol=SLOPE_ATOL, rtol=1e-5,
                 **named_slope(received, query, sharpness, "Far from the keys, or very sharp, the answer still "
                               "has a slope: let autograd differentiate soft_answer's softmax itself.", "", keys,
                               values))
