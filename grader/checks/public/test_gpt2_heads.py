"""Public checks for exercise 4: GPT-2 attention heads.

Graded on tiny seeded GPT-2s of two shapes (6 layers of 4 heads, and 3 layers
of 6 heads: ``lesson.TINY_SHAPES``), built inside each worker, against the
patterns transformers itself computes (``kit.gpt2``). The lesson's claims about
GPT-2 small run only where its weights are on disk.
"""

import numpy as np
import pytest

from grader.checks.fixtures import real_gpt2  # noqa: F401 (a fixture)
from grader.checks.gpt2_readouts import TOLERANCE, look_alikes, read_patterns, score_scale, slip_in
from grader.checks.promised import kept, promised
from grader.engine import verify
from grader.engine.confinement.codec import ModelSpec
from grader.engine.errors import SubmissionError
from grader.engine.results import ErrorKind
from grader.lesson import lesson

# Every kind of input the docstrings and the lesson allow that the checks (public and hidden) try, in one place;
# tests/checks/test_inputs.py holds each check named here to exist.
INPUTS = {
    "the lesson's sentence, and other sentences, on tiny GPT-2s of several shapes": (
        "test_tokens", "test_head_pattern", "test_pattern_is_causal_weights", "test_layer_average",
        "test_recompute_head_pattern", "hidden", "hidden",
        "hidden"),
    "GPT-2 small itself": ("test_lesson_claim_head_4_3", "test_lesson_claim_layer_4_average"),
    "tokens with and without 'Ġ', repeated tokens, tokens inside other tokens": (
        "test_attention_share", "hidden"),
    "a token that is not there": ("test_attention_share_unknown_token",),
    "the tokens, pattern and ids handed in": ("test_arguments_unchanged",),
    "a text of one token; a text with a space before or after its words": ("test_short_and_spaced_texts",),
    "a text of one token and the lesson's, judged by the type the docstring promises": ("test_return_types",),
}
# Left out on purpose: an empty text (GPT-2 has no pattern of 0 tokens), several sentences in a batch (the docstrings
# take one text).

# Each shape of lesson.TINY_SHAPES: a head size, head count or layer count written in as a number fails one.
MODELS = {shape: ModelSpec(kind="tiny", seed=0, head="lm", shape=shape) for shape in lesson.TINY_SHAPES}
TINY = MODELS["standard"]
WORKER_MODELS = list(MODELS.values())  # what workers build before the first call (grader.engine.plugin)
LESSON = lesson.SENTENCE
OTHER = "The dog chased the ball across the garden because it was bored"


def truth(kit, text, spec=TINY):
    """(tokens, attentions[layer, head, i, j]) as transformers computes them."""
    return kit.gpt2.attention_patterns(spec, spec.tokenizer(), text)


def learner_pattern(result, what, size):
    tokens, pattern = verify.pair(result, what, "(tokens, pattern)")
    return tokens, verify.array(pattern, f"the pattern of {what}", shape=(size, size))


@pytest.mark.points(1)
def test_tokens(submission, kit):
    """head_pattern's tokens are the tokenizer's own strings ("The", "Ġcat", ...)."""
    expected, _ = truth(kit, LESSON)
    tokens, _ = verify.pair(read_patterns(submission, "head_pattern", TINY, LESSON, 4, 3), "head_pattern(...)",
                            "(tokens, pattern)")
    verify.expect(isinstance(tokens, (list, tuple)) and all(isinstance(t, str) for t in tokens),
                  f"the tokens must be a list of strings; received {verify.show(tokens)}.")
    tokens = list(tokens)
    if tokens != expected:
        hint, mistake = "Use tokenizer.convert_ids_to_tokens on the ids you gave the model.", ""
        if [t.replace(" ", "Ġ") for t in tokens] == expected:
            hint = "Those are decoded words (' cat'); the tokens themselves write the space as 'Ġ' ('Ġcat'). " + hint
            mistake = "decoded-words-not-tokens"
        elif tokens[1:] == expected:
            hint = "Nothing should be added in front of the text: the tokenizer does not add <|endoftext|>."
            mistake = "token-added-in-front"
        verify.fail(f"tokens for {LESSON!r}: expected {expected}, received {tokens}. {hint}", mistake)


@pytest.mark.points(3)
@pytest.mark.parametrize("model,layer,head", [("standard", 4, 3), ("standard", 0, 0), ("standard", 2, 1),
                                              ("standard", 5, 2), ("narrow", 2, 5), ("narrow", 1, 4)])
def test_head_pattern(submission, kit, model, layer, head):
    """head_pattern returns the head's attention matrix, row i = where token i looks."""
    spec = MODELS[model]
    tokens, attentions = truth(kit, LESSON, spec)
    what = f"head_pattern(..., layer={layer}, head={head})"
    _, pattern = learner_pattern(read_patterns(submission, "head_pattern", spec, LESSON, layer, head), what,
                                 len(tokens))
    mistake = look_alikes(pattern, attentions, layer, head)
    verify.close(pattern, attentions[layer, head], f"the pattern of {what}", atol=TOLERANCE, rtol=0,
                 hint=f"This is {mistake[0]}." if mistake else
                 "Read model(ids, output_attentions=True).attentions[layer][0, head].",
                 mistake=mistake[1] if mistake else "")


@pytest.mark.points(1)
def test_pattern_is_causal_weights(submission, kit):
    """Each row of a pattern is a set of weights summing to 1, with nothing on future tokens (another sentence)."""
    expected_tokens, attentions = truth(kit, OTHER)
    _, pattern = learner_pattern(read_patterns(submission, "head_pattern", TINY, OTHER, 1, 2),
                                 "head_pattern(..., layer=1, head=2)", len(expected_tokens))
    verify.expect(np.all(pattern >= 0), "the pattern has negative entries; attention weights are never negative.",
                  mistake="negative-weights")
    verify.expect(np.all(np.triu(pattern, 1) == 0), "the pattern has weight above the diagonal: GPT-2 is causal, "
                  "no token attends to a later one. Did you transpose it?", mistake="pattern-transposed")
    verify.close(pattern.sum(axis=1), np.ones(len(expected_tokens)), "the row sums of the pattern", atol=TOLERANCE,
                 hint="Each row is a softmax: where token i's attention goes, 100% of it.",
                 mistake="rows-do-not-sum-to-one")
    verify.close(pattern, attentions[1, 2], f"the pattern of layer 1, head 2 for {OTHER!r}", atol=TOLERANCE, rtol=0,
                 hint="Causal weights that sum to 1, but not this head's: read the attentions the model returns.")


# A hand-made pattern, so the share is judged on its own: "Ġthe" occurs twice.
SHARE_TOKENS = ["The", "Ġcat", "Ġsat", "Ġon", "Ġthe", "Ġmat", "Ġbecause", "Ġit", "Ġwas", "Ġthe", "Ġend"]


def share_pattern(tokens, seed):
    rng = np.random.default_rng(seed)
    pattern = np.tril(rng.random((len(tokens), len(tokens))) + 0.01)
    return pattern / pattern.sum(axis=1, keepdims=True)


# Tokens of which an earlier one contains a later one ("Ġcats" holds "cat", "The" holds "he"): whole tokens match.
NESTED_TOKENS = ["The", "Ġcats", "Ġsat", "Ġon", "Ġhe", "Ġcat", "Ġsaw", "Ġat", "Ġit"]
SHARES = {"lesson": SHARE_TOKENS, "nested": NESTED_TOKENS}


def first_containing(tokens, token) -> int | None:
    """Where a match by substring would look: the first token that contains ``token`` without its 'Ġ'."""
    bare = token.removeprefix("Ġ").removeprefix(" ")
    return next((index for index, other in enumerate(tokens) if bare in other), None)


@pytest.mark.points(2)
@pytest.mark.parametrize("tokens,source,target,row,column", [
    ("lesson", "it", "cat", 7, 1), ("lesson", "Ġit", " cat", 7, 1), ("lesson", " was", "The", 8, 0),
    ("lesson", "end", "the", 10, 4), ("lesson", "the", "The", 4, 0), ("lesson", "mat", "mat", 5, 5),
    ("nested", "cat", "he", 5, 4), ("nested", "it", "at", 8, 7),
])
def test_attention_share(submission, tokens, source, target, row, column):
    """attention_share reads pattern[row of from_token, column of to_token], matching whole tokens without 'Ġ'."""
    tokens = SHARES[tokens]
    pattern = share_pattern(tokens, 0)
    what = f"attention_share(tokens, pattern, {source!r}, {target!r})"
    received = verify.number(submission.gpt2_heads.attention_share(tokens, pattern, source, target), what)
    expected = pattern[row, column]
    if not np.isclose(received, expected, atol=1e-12):
        hint = "Find the first position of each token (ignoring a leading 'Ġ' or space) and read pattern[row, column]."
        mistake = ""
        nested = (first_containing(tokens, source), first_containing(tokens, target))
        if None not in nested and nested != (row, column) and np.isclose(received, pattern[nested]):
            hint = (f"That is pattern{list(nested)}, the first tokens that *contain* {source!r} and {target!r} "
                    f"({tokens[nested[0]]!r}, {tokens[nested[1]]!r}): match whole tokens, once 'Ġ' is removed, "
                    "not parts of them.")
            mistake = "matched-as-substrings"
        elif np.isclose(received, pattern[column, row]):
            hint = "That is pattern[to, from]: the row belongs to the token that attends (from_token)."
            mistake = "row-and-column-swapped"
        elif target == "the" and np.isclose(received, pattern[row, 9]):
            hint = "'the' occurs twice; the rule is to use its first occurrence."
            mistake = "not-the-first-occurrence"
        elif target == "the" and np.isclose(received, pattern[row, 0]):
            hint = "Case counts: 'the' is not 'The'."
            mistake = "case-ignored"
        digits = verify.digits_to_differ(expected, received)
        verify.fail(f"{what}: expected {verify.show(expected, digits)}, "
                    f"received {verify.show(received, digits)}. {hint}", mistake)


@pytest.mark.points(1)
def test_attention_share_unknown_token(submission):
    """A token that is not in the sentence raises ValueError whose message names it and the tokens there are (as
    the docstring promises), whichever of the two it is; tokens that are there give their share."""
    pattern = share_pattern(SHARE_TOKENS, 1)
    what = "attention_share(tokens, pattern, 'it', 'cat')"
    verify.close(verify.number(submission.gpt2_heads.attention_share(SHARE_TOKENS, pattern, "it", "cat"), what),
                 pattern[7, 1], f"{what}, where both tokens are there", atol=1e-12, rtol=0)
    for pair in (("it", "dog"), ("dog", "cat")):
        expect_missing_token_named(submission, pattern, *pair)


def expect_missing_token_named(submission, pattern, from_token, to_token):
    call = f"attention_share(..., {from_token!r}, {to_token!r})"
    try:
        received = submission.gpt2_heads.attention_share(SHARE_TOKENS, pattern, from_token, to_token)
    except SubmissionError as error:
        if error.kind != ErrorKind.EXCEPTION:  # not implemented, a crash, a time-out: say so as it is
            raise
        if not error.message.startswith("ValueError"):
            verify.fail(f"{call} raised {error.message.split(':')[0]}; the docstring asks for a ValueError that "
                        "names the missing token.", "missing-token-not-a-valueerror")
        text = error.message.partition(":")[2]
        unnamed = [token.lstrip("Ġ") for token in dict.fromkeys(SHARE_TOKENS) if token.lstrip("Ġ") not in text]
        verify.expect("dog" in text and not unnamed, lambda: (
            f"{call} raised ValueError({text.strip()[:200]!r}): right to raise, but the message must help the caller "
            f"fix the call, as the docstring promises: name the token asked for ('dog') and list the tokens there "
            f"are{' (it leaves out ' + ', '.join(repr(t) for t in unnamed[:3]) + ')' if unnamed else ''}."),
            "missing-token-message-unhelpful")
        return
    verify.fail(f"{call} returned {verify.show(received)}, but there is no 'dog' in the sentence: raise ValueError "
                "naming it.", "missing-token-not-a-valueerror")


@pytest.mark.points(2)
@pytest.mark.parametrize("model,layer", [("standard", 4), ("standard", 1), ("narrow", 2)])
def test_layer_average(submission, kit, model, layer):
    """layer_average is the mean of the layer's head patterns."""
    spec = MODELS[model]
    tokens, attentions = truth(kit, LESSON, spec)
    what = f"layer_average(..., layer={layer})"
    _, pattern = learner_pattern(read_patterns(submission, "layer_average", spec, LESSON, layer), what, len(tokens))
    hint, mistake = "Average attentions[layer][0] over the head axis (dim 0).", ""
    n_head = attentions.shape[1]
    counts = {heads for _, heads, _ in lesson.TINY_SHAPES.values()} | {12}  # head counts a learner might write in
    miscounts = [(f"the sum over the heads divided by {count}: this model has {n_head} heads (model.config.n_head)",
                  "head-count-written-in", attentions[layer].sum(axis=0) / count)
                 for count in sorted(counts - {n_head})]
    for name, named, other in [("the maximum over the heads", "max-over-heads", attentions[layer].max(axis=0)),
                               ("the sum over the heads", "sum-over-heads", attentions[layer].sum(axis=0)),
                               (f"layer {layer - 1}'s average", "layer-off-by-one", attentions[layer - 1].mean(axis=0)),
                               ("one head's pattern", "one-head-for-the-layer", attentions[layer, 0]), *miscounts]:
        if np.allclose(pattern, other, atol=TOLERANCE):
            hint, mistake = f"That is {name}; the layer's pattern is the mean over its heads.", named
    verify.close(pattern, attentions[layer].mean(axis=0), f"the pattern of {what}", atol=TOLERANCE, rtol=0, hint=hint,
                 mistake=mistake)


# Texts the docstring allows that the lesson's sentences are not: one token (a 1 x 1 pattern), and a space before or
# after the words, which GPT-2 keeps as tokens of their own ("ĠThe" for " The"): "it is not changed".
EDGE_TEXTS = {"one-token": "The", "leading-space": " The cat sat", "trailing-space": "The cat sat "}


@pytest.mark.points(1)
@pytest.mark.parametrize("text", EDGE_TEXTS.values(), ids=EDGE_TEXTS.keys())
def test_short_and_spaced_texts(submission, kit, text):
    """A text of one token, or with a space before or after, gives its own tokens and a (T, T) pattern, unchanged."""
    expected, attentions = truth(kit, text)
    for function, where, pattern_of in [("head_pattern", (1, 2), attentions[1, 2]),
                                        ("layer_average", (1,), attentions[1].mean(axis=0))]:
        what = f"{function}(..., {text!r}, {', '.join(map(str, where))})"
        tokens, pattern = verify.pair(read_patterns(submission, function, TINY, text, *where), what,
                                      "(tokens, pattern)")
        verify.expect(list(tokens) == expected, lambda: (
            f"{what} gave the tokens {verify.show(list(tokens))}; the tokenizer makes {verify.show(expected)} of "
            "this text. Hand the text to the tokenizer as it is: a space before or after the words is part of it "
            "(strip() or split() changes it)."), mistake="text-changed")
        one = " (a text of one token has a 1 x 1 pattern: index [0, head], never squeeze())" * (len(expected) == 1)
        pattern = verify.array(pattern, f"the pattern of {what}{one}", shape=(len(expected), len(expected)))
        verify.close(pattern, pattern_of, f"the pattern of {what}", atol=TOLERANCE, rtol=0,
                     hint="Read the attentions of the text as it is, at this layer and head.")


@pytest.mark.points(4)
@pytest.mark.parametrize("model,layer,head", [("standard", 4, 3), ("standard", 0, 1), ("standard", 3, 0),
                                              ("standard", 5, 2), ("narrow", 2, 5), ("narrow", 0, 1)])
def test_recompute_head_pattern(submission, kit, model, layer, head):
    """recompute_head_pattern rebuilds the head's pattern from the weights: ln_1, c_attn, q.k/sqrt(d), mask, softmax."""
    spec = MODELS[model]
    tokens, attentions = truth(kit, LESSON, spec)
    ids = kit.gpt2.token_ids(spec.tokenizer(), LESSON)
    what = f"recompute_head_pattern(model, ids, layer={layer}, head={head})"
    # A model that cannot report its attention weights: only a recompute can pass.
    pattern = verify.array(submission.gpt2_heads.recompute_head_pattern(spec.without_attentions(), ids, layer, head),
                           f"the pattern of {what}", shape=(len(tokens), len(tokens)))
    expected = attentions[layer, head]
    if np.allclose(pattern, expected, atol=TOLERANCE):
        return
    if np.any(np.triu(pattern, 1) > TOLERANCE):
        verify.fail(f"{what} puts weight on future tokens: set the scores above the diagonal to -inf before softmax.",
                    "future-not-masked")
    if not np.allclose(pattern.sum(axis=1), 1, atol=TOLERANCE):
        verify.fail(f"the rows of {what} do not sum to 1: apply softmax along each row (dim=-1).",
                    "softmax-not-along-rows")
    _, n_head, n_embd = lesson.TINY_SHAPES[model]
    head_size = (f"The head size is n_embd // n_head: {n_embd // n_head} in this tiny model ({n_embd} / {n_head} "
                 "heads), 64 only in GPT-2 small (768 / 12 heads), so do not write the number in.")
    if np.allclose(pattern, np.tri(len(tokens)) / np.arange(1, len(tokens) + 1)[:, None], atol=TOLERANCE):
        verify.fail(f"{what} gives every token the same weight: the scores of each row are all equal, as if q.k "
                    f"were 0. Is the head's slice of columns empty (a head size too large) or were the scores "
                    f"multiplied by 0? {head_size}", "head-columns-empty")
    alike = look_alikes(pattern, attentions, layer, head)
    slip = slip_in(pattern, kit.gpt2.slipped_head(spec, spec.tokenizer(), LESSON, layer, head), "attentions")
    factor = score_scale(np.clip(pattern, 1e-30, None), expected)
    if slip:
        hint, mistake = f"This is the pattern {slip[0]}.", slip[1]
    elif alike:
        hint, mistake = f"This is {alike[0]}.", alike[1]
    elif factor is not None and factor > 1.5:
        hint = f"Your scores are {factor:.1f} times too large: divide q.k by sqrt(head size), the square root."
        mistake = "not-divided-by-sqrt-dk"
    elif factor is not None and 0 < factor < 0.67:
        hint = f"Your scores are {1 / factor:.1f} times too small: divide by sqrt(head size), not by the head size."
        mistake = "divided-by-dk"
    else:
        hint = ("Check each step: the block's input is hidden_states[layer], then block.ln_1, then c_attn; q, k "
                "and v are the three n_embd-wide thirds, and head h is columns h*size:(h+1)*size of q and of k. "
                + head_size)
        mistake = ""
    verify.close(pattern, expected, f"the pattern of {what}", atol=TOLERANCE, rtol=0, hint=hint, mistake=mistake)


@pytest.mark.points(1)
@pytest.mark.parametrize("kind", ["arrays", "lists"])  # the ids; the pattern is an array, as head_pattern gives it
def test_arguments_unchanged(submission, kit, kind):
    """attention_share and recompute_head_pattern leave the tokens, pattern and ids they are given as they were."""
    pattern, tokens = share_pattern(SHARE_TOKENS, 2), list(SHARE_TOKENS)
    ids = kit.gpt2.token_ids(TINY.tokenizer(), LESSON)
    ids = np.array(ids) if kind == "arrays" else list(ids)
    share, after = submission.gpt2_heads.attention_share.arguments_after(tokens, pattern, "it", "cat")
    verify.unchanged({"tokens": tokens, "pattern": pattern}, after[:2], "attention_share(tokens, pattern, 'it', 'cat')")
    verify.close(verify.number(share, "attention_share(...)"), pattern[7, 1], "attention_share(tokens, pattern, 'it', "
                 "'cat')", atol=1e-12, rtol=0, hint="Besides leaving its arguments alone, it reads the pattern at the "
                 "row of 'it' and the column of 'cat'.")
    recomputed, after = submission.gpt2_heads.recompute_head_pattern.arguments_after(
        TINY.without_attentions(), ids, 1, 2)
    verify.unchanged({"input_ids": ids}, after[1:2], f"recompute_head_pattern(model, ids as {kind}, 1, 2)")
    recomputed = verify.array(recomputed, "recompute_head_pattern(...)", shape=(len(ids), len(ids)))
    causal = np.tri(len(ids), dtype=bool)
    verify.expect(np.allclose(recomputed.sum(axis=1), 1, atol=TOLERANCE) and np.all(recomputed[~causal] == 0) and
                  np.all(recomputed[causal] > 0) and not np.allclose(recomputed[-1], recomputed[-1, 0]),
                  "besides leaving the ids alone, recompute_head_pattern returns a softmax of each row's scores: "
                  "causal, every earlier token some weight, rows summing to 1.")


# -- the lesson's claims, on GPT-2 small when its weights are here ------------------------

HEAD_CLAIMS = [claim for claim in lesson.CLAIMS if claim.head is not None]
LAYER_CLAIMS = [claim for claim in lesson.CLAIMS if claim.head is None]


@pytest.fixture(scope="module")
def real_shares(kit, real_gpt2):
    """GPT-2 small's spec, and the lesson's shares as transformers measures them on it."""
    return real_gpt2, kit.gpt2.lesson_shares(real_gpt2, real_gpt2.tokenizer())


def learner_shares(submission, real, claims):
    """{convention: {claim label: share}} measured with the learner's own functions."""
    measured = {}
    for convention, prefix in lesson.CONVENTIONS.items():
        text, measured[convention] = prefix + lesson.SENTENCE, {}
        for claim in claims:
            if claim.head is None:
                tokens, pattern = submission.gpt2_heads.layer_average(real, real.tokenizer(), text, claim.layer)
            else:
                tokens, pattern = submission.gpt2_heads.head_pattern(real, real.tokenizer(), text, claim.layer,
                                                                     claim.head)
            target = claim.target or tokens[0]
            share = submission.gpt2_heads.attention_share(tokens, pattern, claim.source, target)
            measured[convention][claim.label] = verify.number(share, f"attention_share for {claim.label}")
    return measured


def judge_claims(claims, learner, truth):
    """Pass if the learner's numbers reproduce the claims under either convention; else say what was measured."""
    if any(all(lesson.reproduces(numbers[c.label], c) for c in claims) for numbers in learner.values()):
        return

    def listing(numbers):
        return "; ".join(f"{convention}: " + ", ".join(f"{c.label} {100 * numbers[convention][c.label]:.1f}%"
                                                     for c in claims) for convention in lesson.CONVENTIONS)

    wanted = ", ".join(f"{c.label} {100 * c.share:.0f}%" for c in claims)
    verify.fail(f"The lesson says {wanted}. Your code measured {listing(learner)}. transformers itself measures "
                f"{listing(truth)}. If those agree with yours, the lesson's figures do not hold on these weights "
                "under either convention; if not, your code differs from GPT-2's.")


@pytest.mark.points(0)  # needs GPT-2 small's weights: no score may depend on the machine that graded it
@pytest.mark.gpt2_weights
def test_lesson_claim_head_4_3(submission, real_shares):
    """GPT-2 small, layer 4 head 3: " it" gives " cat" 84% and " mat" 4% (the lesson's claim)."""
    real, truth = real_shares
    judge_claims(HEAD_CLAIMS, learner_shares(submission, real, HEAD_CLAIMS), truth)


@pytest.mark.points(0)  # needs GPT-2 small's weights: no score may depend on the machine that graded it
@pytest.mark.gpt2_weights
def test_lesson_claim_layer_4_average(submission, real_shares):
    """GPT-2 small, layer 4 averaged: " it" gives " cat" 10% and the first token 51% (the lesson's claim)."""
    real, truth = real_shares
    judge_claims(LAYER_CLAIMS, learner_shares(submission, real, LAYER_CLAIMS), truth)


@pytest.mark.points(1)
@pytest.mark.parametrize("text", [EDGE_TEXTS["one-token"], LESSON], ids=["one-token", "lesson"])
def test_return_types(submission, kit, text):
    """The tokens are a list of strings, the patterns 2-D numpy arrays of floats, the share a Python float: the right
    ones."""
    heads, (tokens, attentions) = submission.gpt2_heads, truth(kit, text)
    for name, where, pattern in [("head_pattern", (1, 2), attentions[1, 2]),
                                 ("layer_average", (1,), attentions[1].mean(axis=0))]:  # read as every check reads them
        kept(getattr(heads, name), read_patterns(submission, name, TINY, text, *where), f"{name}(..., {text!r}, ...)",
             expected=(tokens, pattern), atol=TOLERANCE, rtol=TOLERANCE)
    ids = kit.gpt2.token_ids(TINY.tokenizer(), text)
    promised(heads.recompute_head_pattern, TINY.without_attentions(), ids, 1, 2,
             what=f"recompute_head_pattern(model, ids of {text!r}, 1, 2)", shape=(len(tokens), len(tokens)),
             expected=attentions[1, 2], atol=TOLERANCE, rtol=TOLERANCE)
    pattern = share_pattern(SHARE_TOKENS, 2).astype(np.float32)
    promised(heads.attention_share, list(SHARE_TOKENS), pattern, "it", "cat",
             what="attention_share(tokens, a float32 pattern as GPT-2 gives it, 'it', 'cat')", expected=pattern[7, 1])
