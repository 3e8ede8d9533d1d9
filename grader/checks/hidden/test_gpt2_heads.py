"""Hidden checks for GPT-2 heads: other seeds, sentences and model classes, against the reference.

Tiny GPT-2s with seeds 1-3, as GPT2Model ("base") and GPT2LMHeadModel ("lm"),
in both shapes of ``lesson.TINY_SHAPES``, on the kit's other sentences.
Tolerance: absolute 1e-5 on every weight.
"""

import numpy as np
import pytest

from grader.checks.gpt2_readouts import read_patterns
from grader.engine import verify
from grader.engine.confinement.codec import ModelSpec
from grader.lesson import lesson

SENTENCES = [
    "The dog chased the ball across the garden because it was bored",
    "A little bird sang in the old tree and it sounded happy",
    "The teacher thanked the student because she had worked hard",
    "<|endoftext|>When the rain stopped the children ran outside to play",
]
# (seed, model class, shape, sentence, layer, head)
CASES = [(1, "base", "standard", 0, 3, 2), (2, "lm", "standard", 1, 5, 0), (3, "base", "standard", 2, 1, 3),
         (1, "lm", "standard", 3, 4, 3), (2, "base", "narrow", 3, 2, 4)]
IDS = [f"seed{s}-{h}-{shape}-sentence{t}-L{layer}H{head}" for s, h, shape, t, layer, head in CASES]
TOLERANCE = 1e-5


def tiny(seed, kind, shape):
    """The spec of a tiny GPT-2, and how a message names it."""
    n_layer, n_head, _ = lesson.TINY_SHAPES[shape]
    name = f"a tiny {kind} GPT-2 (seed {seed}, {n_layer} layers of {n_head} heads)"
    return ModelSpec(kind="tiny", seed=seed, head=kind, shape=shape), name


WORKER_MODELS = [tiny(seed, kind, shape)[0] for seed, kind, shape, *_ in CASES]  # built before the first call


def compare(received, expected, what):
    tokens, pattern = verify.pair(received, what, "(tokens, pattern)")
    verify.expect(list(tokens) == list(expected[0]) if isinstance(tokens, (list, tuple)) else False,
                  f"the tokens of {what} differ from the tokenizer's: {verify.show(tokens)}")
    verify.close(verify.array(pattern, f"the pattern of {what}"), expected[1], f"the pattern of {what}",
                 atol=TOLERANCE, rtol=0)


@pytest.mark.points(2)
@pytest.mark.parametrize("seed,kind,shape,sentence,layer,head", CASES, ids=IDS)
def test_head_pattern_matches_reference(submission, reference, seed, kind, shape, sentence, layer, head):
    """head_pattern on other tiny GPT-2s and sentences matches the reference."""
    model, name = tiny(seed, kind, shape)
    args = (model, model.tokenizer(), SENTENCES[sentence], layer, head)
    compare(read_patterns(submission, "head_pattern", model, *args[2:]), reference.gpt2_heads.head_pattern(*args),
            f"head_pattern on {name}, layer {layer}, head {head}")


@pytest.mark.points(1)
@pytest.mark.parametrize("seed,kind,shape,sentence,layer,head", CASES, ids=IDS)
def test_layer_average_matches_reference(submission, reference, seed, kind, shape, sentence, layer, head):
    """layer_average on other tiny GPT-2s and sentences matches the reference."""
    model, name = tiny(seed, kind, shape)
    args = (model, model.tokenizer(), SENTENCES[sentence], layer)
    compare(read_patterns(submission, "layer_average", model, *args[2:]), reference.gpt2_heads.layer_average(*args),
            f"layer_average on {name}, layer {layer}")


@pytest.mark.points(2)
@pytest.mark.parametrize("seed,kind,shape,sentence,layer,head", CASES, ids=IDS)
def test_recompute_matches_reference(submission, reference, kit, seed, kind, shape, sentence, layer, head):
    """recompute_head_pattern on other tiny GPT-2s, GPT2Model included, matches the reference."""
    model, name = tiny(seed, kind, shape)
    ids = kit.gpt2.token_ids(model.tokenizer(), SENTENCES[sentence])
    what = f"recompute_head_pattern on {name}, layer {layer}, head {head}"
    expected = reference.gpt2_heads.recompute_head_pattern(model, ids, layer, head)
    received = verify.array(submission.gpt2_heads.recompute_head_pattern(model.without_attentions(), ids, layer, head),
                            f"the pattern of {what}", shape=expected.shape)
    verify.close(received, expected, f"the pattern of {what}", atol=TOLERANCE, rtol=0)


@pytest.mark.points(1)
@pytest.mark.parametrize("seed", [4, 5, 6])
def test_attention_share_matches_reference(submission, reference, seed):
    """attention_share on random token lists with repeats matches the reference."""
    rng = np.random.default_rng(seed)
    words = ["cat", "the", "it", "sat", "The", "mat"]
    tokens = [("Ġ" if i else "") + words[j] for i, j in enumerate(rng.integers(0, len(words), 12))]
    pattern = np.tril(rng.random((12, 12)) + 0.01)
    pattern /= pattern.sum(axis=1, keepdims=True)
    present = sorted({t.removeprefix("Ġ") for t in tokens})
    for source, target in rng.choice(present, size=(4, 2)).tolist():
        what = f"attention_share({tokens}, pattern, {source!r}, {target!r})"
        expected = reference.gpt2_heads.attention_share(tokens, pattern, source, target)
        received = verify.number(submission.gpt2_heads.attention_share(tokens, pattern, source, target), what)
        verify.close(received, expected, what, atol=1e-12, rtol=0)
