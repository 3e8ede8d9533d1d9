"""What the GPT-2 checks share: a learner's patterns read with the verdict of reading them wrong, and the slips.

The public and hidden checks of exercise 4 call ``gpt2_heads`` through
:func:`read_patterns`, so an empty tuple of attentions is told why wherever it
happens; exercises 4 and 6 name the slips of recomputing a head (those of
``kit.gpt2.slipped_head``) in the same words and by the same names.

A recomputed pattern that is not the model's is compared with its look-alikes: another head's or layer's pattern
(:func:`look_alikes`), a slip's (:func:`slip_in`), or the right scores rescaled (:func:`score_scale`).
"""

import numpy as np

from grader.engine import verify
from grader.engine.errors import SubmissionError
from grader.engine.results import ErrorKind

TOLERANCE = 1e-5  # float32 attention inside torch, compared in float64


# What each slip of kit.gpt2.slipped_head did, in the lesson's words: "the pattern (or the queries, ...) <hint>".
SLIP_HINTS = {
    "c_attn's bias left out": "without c_attn's bias: a Conv1D computes x @ W + b, and GPT-2's biases are not 0, so "
                              "add block.attn.c_attn.bias (or call block.attn.c_attn itself)",
    "ln_2 in place of ln_1": "made from block.ln_2: that one normalises the input of the block's MLP, after attention; "
                             "attention reads block.ln_1(hidden)",
    "ln_f in place of ln_1": "made from the model's ln_f: that one normalises the output of the last block; each "
                             "block's attention reads its own block.ln_1(hidden)",
    "ln_1 skipped": "made without the block's LayerNorm: apply block.ln_1 to hidden_states[layer] before c_attn",
    "q, k and v side by side within each head": "read from c_attn's output as if each head's q, k and v lay side by "
        "side (GPT-NeoX's layout): GPT-2's holds all the queries, then all the keys, then all the values, n_embd "
        "columns each, and head h is columns h*s:(h+1)*s of each third",
    "a head's columns strided": "made of every n_head-th column: a head's columns are one block of each third, "
        "h*s:(h+1)*s (reshape a third to (T, n_head, s), not (T, s, n_head))",
}

# Each slip's stable name (exercises.toml's mistakes of gpt2_heads), as the class summary counts it.
SLIP_MISTAKES = {
    "c_attn's bias left out": "c-attn-bias-left-out",
    "ln_2 in place of ln_1": "ln2-instead-of-ln1",
    "ln_f in place of ln_1": "lnf-instead-of-ln1",
    "ln_1 skipped": "ln1-skipped",
    "q, k and v side by side within each head": "qkv-side-by-side-per-head",
    "a head's columns strided": "head-columns-strided",
}

# transformers 5's GPT-2 output ends with cross_attentions, () for GPT-2: the errors of reading it as the attentions.
EMPTY_ATTENTIONS = ("stack expects a non-empty TensorList", "tuple index out of range")


def read_patterns(submission, function: str, spec, text, *where):
    """``gpt2_heads.<function>(spec, its tokenizer, text, *where)``; an error that says the attentions were an empty
    tuple is told why. ``tuple index out of range`` alone could be an index off by one: asked again for layer 0,
    an empty tuple fails as well."""
    try:
        return getattr(submission.gpt2_heads, function)(spec, spec.tokenizer(), text, *where)
    except SubmissionError as error:
        empty = error.kind == ErrorKind.EXCEPTION and EMPTY_ATTENTIONS[0] in error.message
        if error.kind == ErrorKind.EXCEPTION and EMPTY_ATTENTIONS[1] in error.message and where[0] != 0:
            try:
                getattr(submission.gpt2_heads, function)(spec, spec.tokenizer(), text, 0, *where[1:])
            except SubmissionError as again:
                empty = again.kind == ErrorKind.EXCEPTION and EMPTY_ATTENTIONS[1] in again.message
        elif error.kind == ErrorKind.EXCEPTION and EMPTY_ATTENTIONS[1] in error.message:
            empty = True
        if empty:
            verify.fail(f"{error} The attentions were an empty tuple. In transformers 5 a GPT-2's output ends with "
                        "cross_attentions, which is () for GPT-2, so outputs[-1] (the idiom of bertviz and older "
                        "tutorials) holds no attentions: name the field, "
                        "model(ids, output_attentions=True).attentions.",
                        "attentions-read-as-last-output")
        raise


def slip_in(received, slipped: dict, name: str) -> tuple[str, str] | None:
    """Which slip of ``slipped`` (kit.gpt2.slipped_head) gives ``received`` as its ``name``, if any: in words, and
    its name."""
    for slip, readouts in slipped.items():
        if np.shape(readouts[name]) == np.shape(received) and np.allclose(received, readouts[name], atol=TOLERANCE):
            return SLIP_HINTS[slip], SLIP_MISTAKES[slip]
    return None


def look_alikes(received, attentions, layer, head) -> tuple[str, str] | None:
    """The likely mistake, if ``received`` is some other pattern of the model: in words, and its name."""
    n_layer, n_head = attentions.shape[:2]
    candidates = {("the pattern transposed: row i must be where token i looks (pattern[i, j], not [j, i])",
                   "pattern-transposed"): attentions[layer, head].T}
    for other in (layer - 1, layer + 1):
        if 0 <= other < n_layer:
            candidates[(f"layer {other}'s pattern: layers count from 0, so layer {layer} is "
                        f"attentions[{layer}]", "layer-off-by-one")] = attentions[other, head]
    for other in (head - 1, head + 1):
        if 0 <= other < n_head:
            candidates[(f"head {other}'s pattern: heads count from 0, so head {head} is "
                        f"attentions[{layer}][0, {head}]", "head-off-by-one")] = attentions[layer, other]
    for mistake, pattern in candidates.items():
        if np.allclose(received, pattern, atol=TOLERANCE):
            return mistake
    return None


def score_scale(received, expected):
    """How many times larger the received scores are, if they are the expected ones rescaled (else None)."""
    pairs = [(np.log(received[i, :i + 1]), np.log(expected[i, :i + 1])) for i in range(1, len(expected))]
    r = np.concatenate([a - a.mean() for a, _ in pairs])
    e = np.concatenate([b - b.mean() for _, b in pairs])
    factor = float(r @ e / (e @ e))
    return factor if np.allclose(r, factor * e, atol=1e-3) else None
