"""Public checks for exercise 6: what a GPT-2 head moves.

Graded on the tiny seeded GPT-2s of exercise 4 (6 layers of 4 heads of size
16, and 3 layers of 6 heads of size 8) against what transformers itself
computes (``kit.gpt2.head_readouts``): the q, k and v that ``attn.c_attn``
makes, and the head's columns of the merged heads that ``attn.c_proj``
receives, both read with forward hooks. The lesson's claim about GPT-2 small
runs only where its weights are on disk.
"""

import numpy as np
import pytest

from grader.checks.fixtures import real_gpt2  # noqa: F401 (a fixture)
from grader.checks.gpt2_readouts import SLIP_HINTS, SLIP_MISTAKES  # one name per slip
from grader.checks.promised import promised
from grader.engine import verify
from grader.engine.confinement.codec import ModelSpec
from grader.engine.errors import SubmissionError
from grader.engine.results import ErrorKind
from grader.lesson import lesson

# Every kind of input the docstrings and the lesson allow that the checks (public and hidden) try, in one place;
# tests/checks/test_inputs.py holds each check named here to exist.
INPUTS = {
    "the lesson's sentence, and other sentences, on tiny GPT-2s of several shapes, GPT2Model included": (
        "test_head_vectors", "test_head_output", "test_value_contributions", "hidden",
        "hidden", "hidden"),
    "the first position (a token that sees only itself), and every position": (
        "test_first_token_moves_only_itself", "hidden"),
    "GPT-2 small itself": ("test_lesson_claim_value_4_3",),
    "the ids handed in": ("test_arguments_unchanged",),
    "a text of one token (one id)": ("test_one_token_text",),
    "a text of one token and the lesson's, judged by the type the docstring promises": ("test_return_types",),
}
# Left out on purpose: a text with a space before or after its words (these functions take ids, not text: exercise
# 4's test_short_and_spaced_texts tries it where the text is tokenized), no ids at all (no token, no pattern).

# Each shape of lesson.TINY_SHAPES: a head size, head count or layer count written in as a number fails one.
MODELS = {shape: ModelSpec(kind="tiny", seed=0, head="lm", shape=shape) for shape in lesson.TINY_SHAPES}
WORKER_MODELS = list(MODELS.values())  # what workers build before the first call (grader.engine.plugin)
TOLERANCE = 1e-5  # float32 inside torch, compared in float64
VECTORS = ("queries", "keys", "values")


@pytest.fixture(scope="module")
def truths(kit):
    """{shape: transformers' own readouts of every head of that tiny GPT-2 on the lesson's sentence, and its ids}"""
    ids = kit.gpt2.token_ids(MODELS["standard"].tokenizer(), lesson.SENTENCE)
    return {shape: {**kit.gpt2.head_readouts(spec, spec.tokenizer(), lesson.SENTENCE), "ids": ids}
            for shape, spec in MODELS.items()}


def head_array(received, what, truth):
    """``received`` as a (T, head size) array, with a hint when its width is off."""
    n_layer, n_head, tokens, size = truth["values"].shape
    array = verify.array(received, what)
    if array.shape != (tokens, size):
        hint = (f"One head is n_embd // n_head = {size} columns wide in this model (64 in GPT-2 small): read both "
                "from model.config instead of writing a number.")
        mistake = "head-size-written-in"
        if array.shape == (tokens, n_head * size):
            hint += f" {n_head * size} columns are every head together, or the block's output after c_proj."
            mistake = "every-head-together"
        verify.fail(f"{what}: expected shape {(tokens, size)}, received shape {array.shape}. {hint}", mistake)
    return array


def diagnose(received, candidates: dict) -> tuple[str | None, str]:
    """The first mistake whose result ``received`` equals, if any: what to say, and its name.

    ``candidates``: {what to say: (the mistake's name, its result)}."""
    for mistake, (name, result) in candidates.items():
        if np.shape(result) == np.shape(received) and np.allclose(received, result, atol=TOLERANCE):
            return mistake, name
    return None, ""


def neighbours(index, count):
    return [other for other in (index - 1, index + 1) if 0 <= other < count]


@pytest.mark.points(3)
@pytest.mark.parametrize("model,layer,head", [("standard", 4, 3), ("standard", 0, 0), ("standard", 2, 1),
                                              ("narrow", 2, 5), ("narrow", 0, 1)])
def test_head_vectors(submission, kit, truths, model, layer, head):
    """head_vectors returns the head's queries, keys and values: ln_1, c_attn, the head's columns of each third."""
    truth = truths[model]
    slipped = kit.gpt2.slipped_head(MODELS[model], MODELS[model].tokenizer(), lesson.SENTENCE, layer, head)
    what = f"head_vectors(model, ids, layer={layer}, head={head})"
    received = submission.gpt2_values.head_vectors(MODELS[model], truth["ids"], layer, head)
    verify.expect(isinstance(received, (tuple, list)) and len(received) == 3,
                  lambda: f"{what} must return three arrays (queries, keys, values); received {verify.show(received)}.")
    n_layer, n_head = truth["values"].shape[:2]
    for name, vectors in zip(VECTORS, received):
        vectors = head_array(vectors, f"the {name} of {what}", truth)
        candidates = {f"the {other}: c_attn's output holds queries, keys and values in that order":
                      ("thirds-out-of-order", truth[other][layer, head]) for other in VECTORS if other != name}
        candidates |= {f"head {other}'s {name}: head h owns columns h*s to (h+1)*s of each third":
                       ("head-off-by-one", truth[name][layer, other]) for other in neighbours(head, n_head)}
        candidates |= {f"layer {other}'s {name}: block {layer}'s input is hidden_states[{layer}]":
                       ("layer-off-by-one", truth[name][other, head]) for other in neighbours(layer, n_layer)}
        candidates |= {f"the {name} {SLIP_HINTS[slip]}": (SLIP_MISTAKES[slip], readouts[name])
                       for slip, readouts in slipped.items()}
        mistake, named = diagnose(vectors, candidates)
        verify.close(vectors, truth[name][layer, head], f"the {name} of {what}", atol=TOLERANCE, rtol=TOLERANCE,
                     hint=f"These are {mistake}." if mistake else
                     "Take hidden_states[layer], apply block.ln_1, then block.attn.c_attn, split it into three "
                     "n_embd-wide parts and keep the head's columns of each.", mistake=named)


@pytest.mark.points(4)
@pytest.mark.parametrize("model,layer,head", [("standard", 4, 3), ("standard", 0, 0), ("standard", 3, 2),
                                              ("standard", 5, 1), ("narrow", 1, 4)])
def test_head_output(submission, kit, truths, model, layer, head):
    """head_output is the pattern times the values: what transformers' merged heads hold before c_proj."""
    truth = truths[model]
    slipped = kit.gpt2.slipped_head(MODELS[model], MODELS[model].tokenizer(), lesson.SENTENCE, layer, head)
    what = f"head_output(model, ids, layer={layer}, head={head})"
    output = head_array(submission.gpt2_values.head_output(MODELS[model], truth["ids"], layer, head), what, truth)
    n_layer, n_head = truth["values"].shape[:2]
    pattern, values = truth["attentions"][layer, head], truth["values"][layer, head]
    candidates = {
        "the pattern transposed: row i mixes the values with row i of the pattern (where token i looks)":
            ("pattern-transposed", pattern.T @ values),
        "the keys mixed: keys only decide the weights; the values are what moves":
            ("keys-for-values", pattern @ truth["keys"][layer, head]),
        "the values themselves, unmixed: multiply them by the pattern": ("values-not-mixed", values),
    }
    candidates |= {f"this head's pattern applied to head {other}'s values: take the same head's columns for both":
                   ("values-of-another-head", pattern @ truth["values"][layer, other])
                   for other in neighbours(head, n_head)}
    candidates |= {f"head {other}'s output: head h owns columns h*s to (h+1)*s":
                   ("head-off-by-one", truth["outputs"][layer, other]) for other in neighbours(head, n_head)}
    candidates |= {f"layer {other}'s output: block {layer}'s input is hidden_states[{layer}]":
                   ("layer-off-by-one", truth["outputs"][other, head]) for other in neighbours(layer, n_layer)}
    candidates |= {f"the output of queries, keys and values {SLIP_HINTS[slip]}":
                   (SLIP_MISTAKES[slip], readouts["attentions"] @ readouts["values"])
                   for slip, readouts in slipped.items()}
    mistake, named = diagnose(output, candidates)
    verify.close(output, truth["outputs"][layer, head], f"the output of {what}", atol=TOLERANCE, rtol=TOLERANCE,
                 hint=f"This is {mistake}." if mistake else
                 "Mix the head's values with its pattern: scaled_dot_product_attention(queries, keys, values, "
                 "causal_mask(T)) from exercise 3.", mistake=named)


@pytest.mark.points(1)
def test_first_token_moves_only_itself(submission, truths):
    """The first token can attend only to itself, so the head's output there is its own value vector."""
    truth = truths["standard"]
    what = "row 0 of head_output(model, ids, layer=1, head=2)"
    output = head_array(submission.gpt2_values.head_output(MODELS["standard"], truth["ids"], 1, 2),
                        "head_output(...)", truth)
    verify.close(output[0], truth["values"][1, 2, 0], what, atol=TOLERANCE, rtol=TOLERANCE,
                 hint="Token 0 sees no earlier token, so all its weight is on itself and its output is its own "
                     "value. Is the future masked (causal_mask), and row i the weights of token i?",
                 mistake="future-not-masked")


@pytest.mark.points(1)
def test_one_token_text(submission, truths):
    """A text of one token: its output is its own value vector, of shape (1, s), and its one share is 1."""
    truth = truths["standard"]
    ids = truth["ids"][:1]  # the lesson's first token alone: causal, it has the same q, k and v as in the sentence
    one = {**truth, "values": truth["values"][:, :, :1], "tokens": truth["tokens"][:1]}
    what = f"head_output(model, {ids}, layer=1, head=2), a text of one token"
    try:
        output = head_array(submission.gpt2_values.head_output(MODELS["standard"], ids, 1, 2), what, one)
        shares = submission.gpt2_values.value_contributions(MODELS["standard"], ids, 1, 2, 0)
    except SubmissionError as error:
        if error.kind != ErrorKind.EXCEPTION:
            raise
        verify.fail(f"{what} raised {error.message}. A text of one token is a sentence too: keep its token axis "
                    "(hidden_states[layer][0], shape (1, n_embd); never squeeze(), which takes it away).",
                    "token-axis-squeezed")
    verify.close(output, truth["values"][1, 2, :1], what, atol=TOLERANCE, rtol=TOLERANCE,
                 hint="One token attends only to itself: its output is its own value vector.")
    verify.close(verify.array(shares, f"value_contributions(model, {ids}, 1, 2, position=0)", shape=(1,)), [1.0],
                 f"value_contributions(model, {ids}, 1, 2, position=0)", atol=1e-6,
                 hint="One token is all there is: its share is 1.")


def contributions(submission, spec, truth, layer, head, position):
    what = f"value_contributions(model, ids, layer={layer}, head={head}, position={position})"
    shares = verify.array(submission.gpt2_values.value_contributions(spec, truth["ids"], layer, head, position), what)
    tokens = len(truth["tokens"])
    verify.expect(shares.shape == (tokens,), f"{what}: expected shape ({tokens},), one share per token of the "
                  f"sentence (0 after position {position}); received shape {shares.shape}.")
    return what, shares


@pytest.mark.points(4)
@pytest.mark.parametrize("model,layer,head,position", [("standard", 4, 3, 7), ("standard", 1, 2, 9),
                                                       ("standard", 5, 0, 4), ("narrow", 2, 1, 8)])
def test_value_contributions(submission, truths, model, layer, head, position):
    """value_contributions: token j's share is |weight_j * v_j| over their sum; shares sum to 1, 0 after the position."""
    truth = truths[model]
    what, shares = contributions(submission, MODELS[model], truth, layer, head, position)
    verify.expect(np.all(shares >= 0), f"{what} has negative shares {verify.show(shares)}: sizes are lengths.",
                  mistake="sizes-not-lengths")
    verify.expect(np.all(shares[position + 1:] == 0), f"{what} gives shares to tokens after position {position}: "
                  f"{verify.show(shares)}. Their weight is 0, so their share is 0.", mistake="future-not-masked")
    verify.close(shares.sum(), 1.0, f"the sum of the shares of {what}",
                 hint="Shares are the sizes divided by their sum.", mistake="not-divided-by-sum")
    weights, values = truth["attentions"][layer, head, position], truth["values"][layer, head]

    def lengths(name, of_head=head):
        return np.linalg.norm(truth[name][layer, of_head], axis=1)

    def normalised(sizes):
        return sizes / sizes.sum()

    candidates = {
        "the attention weights alone: multiply each by the length of its value vector": ("weights-alone", weights),
        "shares of the keys' lengths: the values are what moves":
            ("keys-for-values", normalised(weights * lengths("keys"))),
        "squared sizes: a piece's size is its length, weight_j * |v_j|":
            ("sizes-squared", normalised((weights * lengths("values")) ** 2)),
        f"read from column {position} of the pattern: the weights of token {position} are its row":
            ("pattern-transposed", normalised(truth["attentions"][layer, head, :, position] * lengths("values"))),
    }
    candidates |= {f"shares of head {other}'s values: use the same head's values":
                   ("values-of-another-head", normalised(weights * lengths("values", other)))
                   for other in neighbours(head, truth["values"].shape[1])}
    mistake, named = diagnose(shares, candidates)
    verify.close(shares, lesson.value_shares(weights, values), what, atol=1e-6, rtol=1e-5,
                 hint=f"These are {mistake}." if mistake else
                 "Take row `position` of the head's weights, multiply each weight by the length of its token's "
                 "value vector (np.linalg.norm along axis 1), and divide these sizes by their sum.", mistake=named)


@pytest.mark.points(1)
@pytest.mark.parametrize("kind", ["array", "list"])
def test_arguments_unchanged(submission, truths, kind):
    """head_vectors, head_output and value_contributions leave the ids they are given as they were."""
    truth, spec = truths["standard"], MODELS["standard"]
    for name, where in [("head_vectors", (1, 2)), ("head_output", (1, 2)), ("value_contributions", (1, 2, 7))]:
        ids = np.array(truth["ids"]) if kind == "array" else list(truth["ids"])
        value, after = getattr(submission.gpt2_values, name).arguments_after(spec, ids, *where)
        verify.unchanged({"input_ids": ids}, after[1:2], f"{name}(model, ids as a {kind}, ...)")
        # About the arguments: the value need only have the shape of its answer.
        if name == "value_contributions":
            shares, position = verify.array(value, f"{name}(...)"), where[-1]
            verify.expect(shares.shape == (len(ids),) and np.isclose(shares.sum(), 1) and np.all(
                shares[:position + 1] > 0) and np.all(shares[position + 1:] == 0) and not np.allclose(
                shares[:position + 1], shares[0]), f"besides leaving the ids alone, {name} returns shares: one per "
                "token, every token up to the position some of it, summing to 1.")
        else:
            head_array(value[0] if name == "head_vectors" and isinstance(value, (tuple, list)) else value,
                       f"{name}(...)", truth)


# -- the lesson's claim, on GPT-2 small when its weights are here ------------------------


@pytest.mark.points(0)  # needs GPT-2 small's weights: no score may depend on the machine that graded it
@pytest.mark.gpt2_weights
def test_lesson_claim_value_4_3(submission, kit, real_gpt2):
    """GPT-2 small, layer 4 head 3: what moves into " it" comes mostly from " cat" (the lesson's claim)."""
    claim = lesson.VALUE_CLAIM
    truth = kit.gpt2.lesson_value_shares(real_gpt2, real_gpt2.tokenizer())
    learner = {}
    for convention, prefix in lesson.CONVENTIONS.items():
        tokens = truth[convention]["tokens"]
        ids = kit.gpt2.token_ids(real_gpt2.tokenizer(), prefix + lesson.SENTENCE)
        shares = submission.gpt2_values.value_contributions(real_gpt2, ids, claim.layer, claim.head,
                                                            lesson.position(tokens, claim.source))
        learner[convention] = verify.array(shares, f"value_contributions for {claim.label}", shape=(len(tokens),))

    def largest(tokens, shares):
        return tokens[int(np.argmax(shares))].removeprefix("Ġ")

    if any(largest(truth[c]["tokens"], shares) == claim.target for c, shares in learner.items()):
        return

    def listing(measured):
        parts = []
        for convention, shares in measured.items():
            tokens = truth[convention]["tokens"]
            target = shares[lesson.position(tokens, claim.target)]
            parts.append(f"{convention}: largest {largest(tokens, shares)!r} {100 * np.max(shares):.1f}% "
                         f"({claim.target!r} {100 * target:.1f}%)")
        return "; ".join(parts)

    verify.fail(f"The lesson says the largest share of what moves into {claim.source!r} at layer {claim.layer} head "
                f"{claim.head} comes from {claim.target!r}. Your code measured {listing(learner)}. transformers "
                f"itself measures {listing({c: truth[c]['value'] for c in truth})}. If those agree with yours, the "
                "claim does not hold on these weights under either convention; if not, your code differs from GPT-2's.")


@pytest.mark.points(1)
@pytest.mark.parametrize("text", ["one-token", "lesson"])
def test_return_types(submission, truths, text):
    """head_vectors, head_output and value_contributions return 2-D (and 1-D) numpy arrays of floats: the right ones.

    The text of one token is the lesson's first ("The"): causal, its vectors are those it has in the sentence."""
    truth = truths["standard"]
    count = len(truth["ids"]) if text == "lesson" else 1
    head = {name: truth[name][1, 2, :count] for name in ("queries", "keys", "values", "outputs")}
    expected = {"head_vectors": (head["queries"], head["keys"], head["values"]), "head_output": head["outputs"],
                "value_contributions": lesson.value_shares(truth["attentions"][1, 2, 0, :count], head["values"])}
    for name, where in [("head_vectors", (1, 2)), ("head_output", (1, 2)), ("value_contributions", (1, 2, 0))]:
        promised(getattr(submission.gpt2_values, name), MODELS["standard"], list(truth["ids"][:count]), *where,
                 what=f"{name}(model, ids of the {text} text, ...)", expected=expected[name], atol=TOLERANCE,
                 rtol=TOLERANCE)
