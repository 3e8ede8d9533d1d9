"""Public checks for exercise 5: slopes, and learning the sharpness by gradient descent.

The judge computes what it compares with in numpy, float64
(:mod:`grader.checks.learning_numpy`): the soft answer, its slope (2 *
sharpness * the weighted covariance of values and keys), finite differences,
gradient descent step by step, and the least-squares sharpness of the noisy
case by a search of a fine grid. The lesson's claims are
measured, not quoted: the sharpness recovered from 0.1, the loss falling
below a millionth, the nearest lookup's descent not moving at all.
"""

import numpy as np
import pytest

from grader.checks import learning_numpy as judge_descent
from grader.checks.learning_numpy import (BEDROOMS, NINE_QUERIES, PRICES, TRUE_SHARPNESS, VERY_SHARP,
                                          first_loss_hint, least_squares_sharpness, mse, nearest_answers,
                                          nearest_loss, recovery_hint, rule_hint, soft_answers, soft_slope,
                                          wrong_slope_hint)
from grader.checks.learning_results import (LOSS_RTOL, NO_PATH, SLOPE_ATOL, START, STEPS, descent, fit, learner,
                                           named_slope, rises_with_the_query, slope_pair, very_sharp_answer)
from grader.checks.promised import promised
from grader.engine import verify
from grader.engine.confinement import codec

# Every kind of input the docstrings and the lesson allow that the checks (public and hidden) try, in one place;
# tests/checks/test_inputs.py holds each check named here to exist.
INPUTS = {
    "the lesson's records and queries (query 3, nine queries)": (
        "test_soft_answer", "test_nearest_answer", "test_answer_slope_lesson", "test_nearest_slope_is_zero"),
    "random records and queries": ("test_answer_slope_matches_finite_differences", "hidden",
                                   "hidden", "hidden"),
    "a very sharp lookup, and a query far from every key": ("test_very_sharp_answers",),
    "an integer query (3 bedrooms), integer keys and prices": (
        "test_soft_answer", "test_answer_slope_lesson", "test_nearest_slope_is_zero"),
    "a high sharpness just off a jump, where float32 is far outside the tolerance": ("test_sharp_slope_needs_float64",),
    "fits from several starts and sharpnesses, gentle ones, noisy answers": (
        "test_fit_recovers_sharpness", "test_fit_losses_go_down", "test_fit_follows_gradient_descent",
        "test_fit_losses_are_mean_squared_error", "test_fit_keeps_sharpness_positive", "test_fit_noisy_answers",
        "test_nearest_fit_makes_no_progress"),
    "arguments of every kind the functions take: arrays, lists, float64 tensors": ("test_arguments_unchanged",),
    "integer records, one query and several, judged by the type the docstring promises": ("test_return_types",),
}
# Left out on purpose: a sharpness of 0 or below (the docstrings ask for > 0), 2-D queries (1-D at most).

@pytest.mark.points(2)
def test_soft_answer(submission):
    """soft_answer is exercise 2's soft lookup in torch: query 3, sharpness 1.5 gives 275.11; nine queries, nine answers."""
    answer = verify.number(learner(submission, "soft_answer", 3.0, BEDROOMS, PRICES, 1.5),
                           "soft_answer(3, ..., sharpness=1.5)")
    expected, weights = soft_answers(3.0, 1.5)
    hint, mistake = ("Score each key with -sharpness * (query - key)**2, softmax over the keys, then sum weights * "
                     "values."), ""
    if np.isclose(answer, weights @ BEDROOMS):
        hint = "That is the weighted average of the *keys*; average the values (prices) instead."
        mistake = "keys-averaged"
    verify.close(answer, expected, "soft_answer(3, ..., sharpness=1.5)", atol=1e-6, hint=hint, mistake=mistake)
    answers = verify.array(learner(submission, "soft_answer", NINE_QUERIES, BEDROOMS, PRICES, 1.5),
                           "soft_answer(nine queries, ...)", shape=(9,))
    verify.close(answers, soft_answers(NINE_QUERIES, 1.5)[0], "soft_answer(nine queries, ...)",
                 hint="Answer i belongs to query i alone: give the queries a new axis (query[..., None] - keys) "
                     "and softmax over the keys (dim=-1).", mistake="queries-mixed")
    what = "soft_answer(3, [1, 2, 4, 5], [150, 210, 340, 420], sharpness=1.5), all integers but the sharpness"
    integers = learner(submission, "soft_answer", 3, [1, 2, 4, 5], [150, 210, 340, 420], 1.5)
    verify.close(verify.number(integers, what), expected, what, atol=1e-6, mistake="integers-not-floats",
                 hint="Integer queries, keys and prices are numbers like any other: make every tensor float64.")


@pytest.mark.points(1)
def test_nearest_answer(submission):
    """nearest_answer is exercise 2's nearest lookup in torch, ties going to the first key (query 3 gives 210)."""
    queries = [1.2, 2.9, 3.0, 3.1, 4.5, 9.0]
    expected = [150.0, 210.0, 210.0, 340.0, 340.0, 420.0]
    for query, price in zip(queries, expected):
        what = f"nearest_answer({query:g}, ...)"
        hint, mistake = "Take torch.argmin of |query - keys| and index the values with it.", ""
        if query in (3.0, 4.5):
            hint = "Equally close keys: the first in `keys` wins (torch.argmin returns the first)."
            mistake = "tie-not-to-first"
        verify.close(verify.number(learner(submission, "nearest_answer", query, BEDROOMS, PRICES), what), price, what,
                     hint=hint, mistake=mistake)
    answers = verify.array(learner(submission, "nearest_answer", queries, BEDROOMS, PRICES),
                           "nearest_answer(six queries, ...)", shape=(6,))
    verify.close(answers, expected, "nearest_answer(six queries, ...)",
                 hint="Answer i belongs to query i: take argmin over the keys (dim=-1).", mistake="queries-mixed")


@pytest.mark.points(3)
@pytest.mark.parametrize("query,sharpness", [(3.0, 1.5), (2.0, 1.5), (3.5, 1.5), (3.0, 5.0), (2.0, 5.0), (3, 1.5)])
def test_answer_slope_lesson(submission, query, sharpness):
    """answer_slope gives the soft answer and d(answer)/d(query): 201.76 £k per bedroom at query 3, 28.66 at 2, 46.06 at 3.5."""
    what = f"answer_slope({query:g}, ..., sharpness={sharpness:g})"
    answer, slope = slope_pair(learner(submission, "answer_slope", query, BEDROOMS, PRICES, sharpness), what)
    verify.close(answer, soft_answers(query, sharpness)[0], f"the answer of {what}",
                 hint="The answer is soft_answer's, at the query you differentiate by.")
    hint, mistake = wrong_slope_hint(slope, query, sharpness)
    verify.close(slope, soft_slope(query, sharpness), f"the slope of {what}", atol=SLOPE_ATOL, rtol=1e-6,
                 **named_slope(slope, query, sharpness, hint, mistake))


# A high sharpness just off the jump between keys 2 and 4: the slope there is a small difference of large numbers,
# which float32's 7 digits get wrong by 0.19 £k per bedroom (68 times the tolerance), float64 by 1e-9.
SHARP_NEAR_THE_JUMP = [(3.005, 200.0), (2.995, 200.0)]


@pytest.mark.points(1)
def test_sharp_slope_needs_float64(submission):
    """At sharpness 200 just off query 3, the slope is right to £1 per bedroom: float64, as the docstring asks."""
    for query, sharpness in SHARP_NEAR_THE_JUMP:
        what = f"answer_slope({query:g}, ..., sharpness={sharpness:g})"
        answer, slope = slope_pair(learner(submission, "answer_slope", query, BEDROOMS, PRICES, sharpness), what)
        verify.close(answer, soft_answers(query, sharpness)[0], f"the answer of {what}", atol=1e-3, rtol=0)
        expected = soft_slope(query, sharpness)
        hint, mistake = "Let autograd differentiate the whole soft_answer, at the query.", ""
        if abs(slope - expected) < 1e-3 * abs(expected):  # near, but not within £1: rounding, not a wrong formula
            hint = ("That is the slope to 3 or 4 digits, as float32 computes it: here it is a small difference of "
                    "large numbers, and float32's 7 digits lose it. Make every tensor float64, as the docstring "
                    "asks: torch.as_tensor(x, dtype=torch.float64).")
            mistake = "float32-not-float64"
        verify.close(slope, expected, f"the slope of {what}", atol=SLOPE_ATOL, rtol=1e-6,
                     **named_slope(slope, query, sharpness, hint, mistake))


@pytest.mark.points(2)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_answer_slope_matches_finite_differences(submission, seed):
    """On random records the slope agrees with (answer(q + h) - answer(q - h)) / 2h."""
    rng = np.random.default_rng(seed)
    keys, values = rng.uniform(0, 10, 6), rng.normal(300, 80, 6)
    sharpness, step = rng.uniform(0.2, 3.0), 1e-5
    for query in rng.uniform(-1, 11, 4):
        what = f"answer_slope({query:.4g}, random records, sharpness={sharpness:.3g})"
        _, slope = slope_pair(learner(submission, "answer_slope", query, keys, values, sharpness), what)
        ahead, _ = soft_answers(query + step, sharpness, keys, values)
        behind, _ = soft_answers(query - step, sharpness, keys, values)
        verify.close(slope, (ahead - behind) / (2 * step), f"the slope of {what}", atol=SLOPE_ATOL, rtol=1e-5,
                     **named_slope(slope, query, sharpness, "The slope must include how the softmax's normalising "
                                   "sum moves too: let autograd differentiate the whole soft_answer, nothing "
                                   "detached.", "sum-detached", keys, values))


@pytest.mark.points(2)
def test_nearest_slope_is_zero(submission):
    """nearest_slope gives the nearest answer, and autograd finds no slope: 0 everywhere, even at the jump (query 3)."""
    for query in (1.2, 2.9, 3.0, 3.1, 4.6, 3):  # 3 bedrooms, an integer, as the lesson says it
        what = f"nearest_slope({query:g}, ...)"
        answer, slope = slope_pair(learner(submission, "nearest_slope", query, BEDROOMS, PRICES), what)
        verify.close(answer, nearest_answers(query), f"the answer of {what}",
                     hint="The answer is nearest_answer's, at the query you differentiate by.")
        if slope == 0:
            continue
        if query == 3.0:
            verify.fail(f"{what} gave a slope of {slope:.6g}. That is the size of the jump over a small step, a "
                        "finite difference, not what autograd gives: argmin has no slope, so there is no path back "
                        "to the query and the slope is 0.", "finite-difference")
        verify.fail(f"{what} gave a slope of {slope:.6g}, but the nearest answer stands still around {query:g}: "
                    "the slope is 0. Is the answer computed by nearest_answer, not by a soft lookup?",
                    "nearest-slope-of-soft-lookup")


FITS = {"lesson": (TRUE_SHARPNESS, 0.1), "from-above": (0.7, 3.0), "gentle": (0.3, 2.0)}


@pytest.mark.points(3)
@pytest.mark.parametrize("truth,start", FITS.values(), ids=FITS.keys())
def test_fit_recovers_sharpness(submission, truth, start):
    """Fitting nine answers made at a sharpness (1.5, the lesson's, and two others) recovers it within 0.005, the
    loss below 1e-6, in the default 200 steps."""
    answers, _ = soft_answers(NINE_QUERIES, truth)
    what = f"fit_sharpness on answers made at sharpness {truth:g}, from {start:g}"
    sharpness, losses = fit(submission, NINE_QUERIES, answers, start)
    verify.expect(len(losses) == 200, f"{what} returned {len(losses)} losses for its 200 steps: append loss.item() "
                  "once per step (an optimiser such as LBFGS calls its closure several times a step).",
                  mistake="not-one-loss-per-step")
    if abs(sharpness - truth) > 0.005:
        hint, mistake = recovery_hint(sharpness, losses, answers, truth, start)
        verify.fail(f"{what} returned {sharpness:.6g}. {hint}", mistake)
    verify.expect(losses[-1] < 1e-6, f"the sharpness is {sharpness:.6g}, but the last loss is {losses[-1]:.3g}, not "
                  "below 1e-6: the loss must be the mean squared error of the answers at the current sharpness.",
                  mistake="losses-not-mse")
    _, expected = judge_descent.descend(NINE_QUERIES, answers, start, 2, 5e-4)
    verify.close(losses[:2], expected, f"the first two losses of {what}", rtol=LOSS_RTOL, atol=0,
                 hint="losses[0] is the mean squared error at `start`, before any step, and losses[1] the one after a "
                     "step of lr times the gradient.")


@pytest.mark.points(2)
@pytest.mark.parametrize("truth,start", list(FITS.values())[:2], ids=list(FITS)[:2])
def test_fit_losses_go_down(submission, truth, start):
    """Each gradient step lowers the loss (within a millionth of the first), a thousandfold in all, from the loss at
    the start."""
    answers, _ = soft_answers(NINE_QUERIES, truth)
    sharpness, losses = fit(submission, NINE_QUERIES, answers, start)
    verify.expect(len(losses) > 1, f"fit_sharpness returned {len(losses)} losses; one per step is expected.",
                  mistake="not-one-loss-per-step")
    verify.close(losses[0], float(mse(start, NINE_QUERIES, answers)), f"losses[0] of fit_sharpness(..., "
                 f"start={start:g})", rtol=LOSS_RTOL, hint="The losses are those of the fit itself: losses[0] is the "
                 "mean squared error at `start`, before any step.", mistake="losses-not-mse")
    rises = np.flatnonzero(np.diff(losses) > 1e-6 * abs(losses[0]))
    _, expected = judge_descent.descend(NINE_QUERIES, answers, start, 50, 5e-4)
    unlike_descent = len(losses) >= 50 and not np.allclose(losses[:50], expected, rtol=1e-3, atol=0)
    if rises.size == 0 and not unlike_descent and losses[-1] < 1e-3 * losses[0]:
        return  # a right fit: which other optimiser's descent it resembles is asked of wrong ones only
    # Replayed for as many steps as were asked, no more: 70,000 losses sent back cost the judge 14 s of descents.
    rule, rule_mistake = rule_hint(sharpness, losses, answers, start, min(len(losses), STEPS))
    if rises.size == 0 and unlike_descent:
        verify.fail(f"the losses fall, but not as gradient descent makes them: after 50 steps from {start:g} the loss "
                    f"is {expected[-1]:.6g}, yours {losses[49]:.6g}. " +
                    (rule or "Each loss is the mean squared error at the sharpness of that step."),
                    rule_mistake if rule else "not-plain-descent")
    if rises.size == 0:
        verify.expect(losses[-1] < 1e-3 * losses[0], f"the loss went from {losses[0]:.6g} to {losses[-1]:.6g} in "
                      f"{len(losses)} steps: gradient descent from {start:g} brings it down by more than a thousand "
                      "times. " + (rule or "Is each loss the mean squared error at the current sharpness?"),
                      mistake=rule_mistake if rule else "losses-not-mse")
        return
    step = int(rises[0]) + 1
    message = f"the loss rose from {losses[step - 1]:.6g} to {losses[step]:.6g} at step {step}"
    if rule:
        verify.fail(f"{message}. {rule}", rule_mistake)
    if step == 1:
        verify.fail(f"{message}: the very first step went uphill. Move *against* the gradient: "
                    "log_sharpness -= lr * log_sharpness.grad.", "stepped-uphill")
    verify.fail(f"{message}, after falling at first: a step from there was not lr times the gradient of the mean "
                "squared error. The docstring's descent is plain (torch.optim.SGD without momentum does it too), with "
                "the gradient set back to zero after every step.", "not-plain-descent")


# Short runs, compared step by step with the judge's own descent: every step, and no step more or fewer.
RUNS = {"lesson-start": (1.5, 0.3, 8, 5e-4), "larger-steps": (0.6, 2.0, 6, 1e-3)}


@pytest.mark.points(2)
@pytest.mark.parametrize("truth,start,steps,lr", RUNS.values(), ids=RUNS.keys())
def test_fit_follows_gradient_descent(submission, truth, start, steps, lr):
    """A short fit takes exactly the docstring's steps, log_sharpness -= lr * gradient: its losses, step by step."""
    answers, _ = soft_answers(NINE_QUERIES, truth)
    what = f"fit_sharpness(..., start={start:g}, steps={steps}, lr={lr:g})"
    sharpness, losses = fit(submission, NINE_QUERIES, answers, start, steps, lr)
    verify.expect(len(losses) == steps, f"{what} returned {len(losses)} losses; there must be exactly one per step, "
                  f"{steps} of them.", mistake="not-one-loss-per-step")
    expected_sharpness, expected = judge_descent.descend(NINE_QUERIES, answers, start, steps, lr)
    wrong = np.flatnonzero(~np.isclose(losses, expected, rtol=LOSS_RTOL, atol=0))
    if wrong.size:
        step = int(wrong[0])
        hint, mistake = rule_hint(sharpness, losses, answers, start, steps, lr)
        if not hint:
            hint, mistake = ("The losses before it were right: the step from there was not lr times the gradient of "
                             "the mean squared error with respect to log_sharpness."), "not-plain-descent"
        if step == 0:
            hint, mistake = "losses[0] is the mean squared error at `start`, before any step.", "losses-not-mse"
        verify.fail(f"losses[{step}] of {what} is {losses[step]:.8g}; plain gradient descent gives "
                    f"{expected[step]:.8g}. {hint}", mistake)
    verify.close(sharpness, expected_sharpness, f"the sharpness after {what}", rtol=LOSS_RTOL, atol=0,
                 hint=f"After the last loss comes one more step: {steps} losses, {steps} steps, then the sharpness.",
                 mistake="last-step-missing")


@pytest.mark.points(1)
def test_fit_losses_are_mean_squared_error(submission):
    """losses holds one loss per step, the first being the mean squared error at the start, before any step."""
    answers, _ = soft_answers(NINE_QUERIES, TRUE_SHARPNESS)
    start, steps = 0.4, 7
    _, losses = fit(submission, NINE_QUERIES, answers, start, steps)
    verify.expect(len(losses) == steps, f"fit_sharpness(..., steps={steps}) returned {len(losses)} losses; "
                  "there must be one per step.", mistake="not-one-loss-per-step")
    expected = float(mse(start, NINE_QUERIES, answers))
    hint, mistake = first_loss_hint(losses[0], expected, len(answers))
    verify.close(losses[0], expected, f"losses[0] of fit_sharpness(..., start={start:g})", rtol=LOSS_RTOL, hint=hint,
                 mistake=mistake)


@pytest.mark.points(2)
def test_fit_keeps_sharpness_positive(submission):
    """Answers made at a gentle sharpness (0.05) are fitted from 0.1 with the sharpness staying positive."""
    answers, _ = soft_answers(NINE_QUERIES, 0.05)
    steps = 100  # 200 would do no more: from 0.1 a fit is within 1e-11 of 0.05 after 50, with momentum within 2e-4
    sharpness, losses = fit(submission, NINE_QUERIES, answers, START, steps)
    if sharpness <= 0:
        verify.fail(f"fit_sharpness returned a sharpness of {sharpness:.4g}. A negative sharpness rewards the "
                    "*farthest* keys. Learn its logarithm and use log_sharpness.exp(), which is always positive.",
                    "sharpness-negative")
    near = abs(sharpness - 0.05) <= 0.005
    rule, mistake = (None, "") if near else rule_hint(sharpness, losses, answers, START, steps)
    verify.close(sharpness, 0.05, "fit_sharpness on answers made at sharpness 0.05", atol=0.005, rtol=0,
                 hint=rule or "Learn log(sharpness), starting at log(start), and step it against its gradient.",
                 mistake=mistake)


NOISE = 2.0  # £k: a price quoted to the nearest couple of thousand pounds


@pytest.mark.points(1)
def test_fit_noisy_answers(submission):
    """Noisy answers (±2 £k) are fitted to the sharpness of least squared error (within 0.005), near 1.5."""
    clean, _ = soft_answers(NINE_QUERIES, TRUE_SHARPNESS)
    answers = clean + np.random.default_rng(0).normal(0, NOISE, len(clean))
    best = least_squares_sharpness(NINE_QUERIES, answers)
    steps = 120  # 200 would do no more: from 0.1 a fit is within 6e-5 of it after 100
    sharpness, losses = fit(submission, NINE_QUERIES, answers, START, steps)
    near = abs(sharpness - best) <= 0.005
    rule, mistake = (None, "") if near else rule_hint(sharpness, losses, answers, START, steps)
    verify.close(sharpness, best, "fit_sharpness on noisy answers", atol=0.005, rtol=0,
                 hint=rule or f"The sharpness with the least mean squared error is {best:.4f} for these answers (noise "
                 f"of {NOISE:g} £k moves it off 1.5); gradient descent on the mean squared error goes there.",
                 mistake=mistake if rule else "not-least-squares")


NEAREST_FITS = {"lesson": (2, 3.2, 20), "first-key": (0, 2.6, 7), "last-key": (3, 3.4, 5)}  # (which, start, steps)


@pytest.mark.points(2)
@pytest.mark.parametrize("which,start,steps", NEAREST_FITS.values(), ids=NEAREST_FITS.keys())
def test_nearest_fit_makes_no_progress(submission, which, start, steps):
    """Through the nearest lookup, gradient descent cannot move a misplaced key: the loss never changes."""
    answers = nearest_answers(NINE_QUERIES)
    what = f"fit_nearest_key(..., which={which}, start={start:g}, steps={steps})"
    result = learner(submission, "fit_nearest_key", NINE_QUERIES, answers, BEDROOMS, PRICES, which, start, steps,
                     graph_hint=NO_PATH, graph_mistake="no-gradient-not-zero")
    key, losses = descent(result, what, "(key, losses)")
    verify.expect(len(losses) == steps, f"{what} returned {len(losses)} losses; there must be one per step.",
                  mistake="not-one-loss-per-step")
    if abs(key - start) > 1e-6 or np.any(np.abs(losses - losses[0]) > 1e-9 * losses[0]):
        verify.fail(f"{what} moved: the key went from {start:g} to {key:.6g} and the loss from {losses[0]:.6g} to "
                    f"{losses[-1]:.6g}. Through the nearest lookup autograd has no gradient to give, so nothing may "
                    "move. Is the answer computed with nearest_answer?", "nearest-fit-moved")
    expected = nearest_loss(NINE_QUERIES, answers, which, start)
    verify.close(losses[0], expected, f"losses[0] of {what}", rtol=1e-7,  # float32 gets it right to 6e-8
                 hint=f"The loss is the mean squared error of nearest_answer with the guessed key in place of "
                     f"keys[{which}].", mistake="nearest-loss-not-mse")


@pytest.mark.points(1)
@pytest.mark.parametrize("kind", ["arrays", "lists", "tensors"])
def test_arguments_unchanged(submission, kind):
    """Every function of exercise 5 leaves the queries, answers, keys and values it is given as they were."""
    made = {"arrays": np.copy, "lists": lambda array: array.tolist(), "tensors": codec.tensor}[kind]
    queries, keys, values = made(NINE_QUERIES), made(BEDROOMS), made(PRICES)
    answers, nearest = made(soft_answers(NINE_QUERIES, 1.5)[0]), made(nearest_answers(NINE_QUERIES))
    calls = [("soft_answer", dict(query=queries, keys=keys, values=values, sharpness=1.5)),
             ("soft_answer", dict(query=3.0, keys=keys, values=values, sharpness=1.5)),
             ("nearest_answer", dict(query=queries, keys=keys, values=values)),
             ("answer_slope", dict(query=3.0, keys=keys, values=values, sharpness=1.5)),
             ("nearest_slope", dict(query=2.9, keys=keys, values=values)),
             ("fit_sharpness", dict(queries=queries, answers=answers, keys=keys, values=values, start=0.4, steps=5)),
             ("fit_nearest_key", dict(queries=queries, answers=nearest, keys=keys, values=values, which=2, start=3.2,
                                      steps=5))]
    for name, arguments in calls:
        what = f"{name}({', '.join(arguments)}) of {kind}"
        value, after = getattr(submission.learning, name).arguments_after(*arguments.values())
        verify.unchanged(arguments, after, what)
        # This check is about the arguments: the value need only be the kind of answer it is.
        if name == "soft_answer" and arguments["query"] is queries:
            verify.expect(rises_with_the_query(verify.array(value, what)), f"{what} returned {verify.show(value)}: "
                          "besides leaving the arrays alone, nine soft answers rise with the query, between the "
                          "smallest and the largest price.")
        elif name in ("fit_sharpness", "fit_nearest_key"):
            _, losses = descent(value, what, "(result, losses)")
            verify.expect(len(losses) == 5, f"{what} returned {len(losses)} losses for 5 steps.",
                          mistake="not-one-loss-per-step")


@pytest.mark.points(2)
@pytest.mark.parametrize("cases", VERY_SHARP.values(), ids=VERY_SHARP.keys())
def test_very_sharp_answers(submission, cases):
    """soft_answer and answer_slope stay finite for a very sharp lookup and for a query far from every key."""
    for query, sharpness, answer, slope, keys, values in cases:
        very_sharp_answer(submission, query, sharpness, answer, slope, keys, values)


@pytest.mark.points(1)
@pytest.mark.parametrize("kind", ["integers", "floats"])
def test_return_types(submission, kind):
    """The answers are float tensors, 0-d for one query; slopes, fitted numbers and losses are Python floats: the
    right ones."""
    made = (lambda x: np.array(x).round().astype(int)) if kind == "integers" else (lambda x: np.array(x, dtype=float))
    keys, values, learning = made(BEDROOMS), made(PRICES), submission.learning
    for name, extra, right in [("soft_answer", (1.5,), lambda q: soft_answers(q, 1.5, keys, values)[0]),
                               ("nearest_answer", (), lambda q: nearest_answers(q, keys, values))]:
        function = getattr(learning, name)
        promised(function, 3, keys, values, *extra, case="one query", what=f"{name}(3, {kind} records)",
                 expected=right(3))
        promised(function, made([1, 3, 4]), keys, values, *extra, case="several queries",
                 what=f"{name}(three queries, {kind} records)", expected=right([1, 3, 4]))
    promised(learning.answer_slope, 3, keys, values, 1.5, what=f"answer_slope(3, {kind} records, 1.5)",
             expected=(soft_answers(3, 1.5, keys, values)[0], soft_slope(3, 1.5, keys, values)), atol=SLOPE_ATOL)
    promised(learning.nearest_slope, 3, keys, values, what=f"nearest_slope(3, {kind} records)",
             expected=(nearest_answers(3, keys, values), 0.0))
    queries, answers, nearest = made(NINE_QUERIES), soft_answers(NINE_QUERIES, 1.5)[0], nearest_answers(NINE_QUERIES)
    promised(learning.fit_sharpness, queries, answers, keys, values, 0.4, 3,
             what=f"fit_sharpness(nine queries, {kind} records, start=0.4, steps=3)",
             expected=judge_descent.descend(queries, answers, 0.4, 3, 5e-4), rtol=LOSS_RTOL)
    promised(learning.fit_nearest_key, queries, nearest, keys, values, 2, 3.2, 3,
             what=f"fit_nearest_key(nine queries, {kind} records, which=2, start=3.2, steps=3)",
             expected=(3.2, [nearest_loss(queries, nearest, 2, 3.2)] * 3), rtol=LOSS_RTOL)
