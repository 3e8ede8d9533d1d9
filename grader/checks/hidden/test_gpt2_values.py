"""Hidden checks for exercise 6: other seeds, sentences and model classes, against the reference.

Tiny GPT-2s with seeds 1-3, as GPT2Model ("base") and GPT2LMHeadModel ("lm"),
in both shapes of ``lesson.TINY_SHAPES``, on the kit's other sentences, one
with <|endoftext|> first. Tolerance: 1e-5 absolute and relative on every number.
"""

import pytest

from grader.engine import verify
from grader.checks.hidden.test_gpt2_heads import CASES, IDS, SENTENCES, WORKER_MODELS, tiny  # noqa: F401 (WORKER_MODELS: declared here too)

TOLERANCE = 1e-5


def arguments(kit, seed, kind, shape, sentence):
    """The model's spec, its name in messages, and the sentence's ids."""
    model, name = tiny(seed, kind, shape)
    return model, name, kit.gpt2.token_ids(model.tokenizer(), SENTENCES[sentence])


def compare(received, expected, what):
    verify.close(verify.array(received, what, shape=expected.shape), expected, what, atol=TOLERANCE, rtol=TOLERANCE)


@pytest.mark.points(1)
@pytest.mark.parametrize("seed,kind,shape,sentence,layer,head", CASES, ids=IDS)
def test_head_vectors_matches_reference(submission, reference, kit, seed, kind, shape, sentence, layer, head):
    """head_vectors on other tiny GPT-2s, GPT2Model included, matches the reference."""
    model, name, ids = arguments(kit, seed, kind, shape, sentence)
    what = f"head_vectors on {name}, layer {layer}, head {head}"
    received = submission.gpt2_values.head_vectors(model, ids, layer, head)
    verify.expect(isinstance(received, (tuple, list)) and len(received) == 3,
                  f"{what} must return (queries, keys, values); received {verify.show(received)}.")
    for name, mine, expected in zip(("queries", "keys", "values"), received,
                                    reference.gpt2_values.head_vectors(model, ids, layer, head)):
        compare(mine, expected, f"the {name} of {what}")


@pytest.mark.points(2)
@pytest.mark.parametrize("seed,kind,shape,sentence,layer,head", CASES, ids=IDS)
def test_head_output_matches_reference(submission, reference, kit, seed, kind, shape, sentence, layer, head):
    """head_output on other tiny GPT-2s, GPT2Model included, matches the reference."""
    model, name, ids = arguments(kit, seed, kind, shape, sentence)
    compare(submission.gpt2_values.head_output(model, ids, layer, head),
            reference.gpt2_values.head_output(model, ids, layer, head),
            f"head_output on {name}, layer {layer}, head {head}")


@pytest.mark.points(1)
@pytest.mark.parametrize("seed,kind,shape,sentence,layer,head", CASES, ids=IDS)
def test_value_contributions_matches_reference(submission, reference, kit, seed, kind, shape, sentence, layer, head):
    """value_contributions at every position of other sentences matches the reference."""
    model, name, ids = arguments(kit, seed, kind, shape, sentence)
    for position in range(len(ids)):
        compare(submission.gpt2_values.value_contributions(model, ids, layer, head, position),
                reference.gpt2_values.value_contributions(model, ids, layer, head, position),
                f"value_contributions on {name}, layer {layer}, head {head}, position {position}")
