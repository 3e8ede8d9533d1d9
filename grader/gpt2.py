"""The ground truth for the GPT-2 exercises: what transformers itself computes, and the lesson's shares.

Trusted code: only the kit's own workers (the ``kit`` fixture) and
``softlookup gpt2-report`` import it. A learner's worker never loads it, and
cannot read it: it is exactly what a dishonest submission would want to call.
"""

from __future__ import annotations

import numpy as np
import torch

from grader import lesson

def attention_patterns(model, tokenizer, text: str) -> tuple[list[str], np.ndarray]:
    """The ground truth: ``(tokens, attentions)`` as transformers itself computes them.

    ``attentions[layer, head, i, j]`` is the weight token ``i`` puts on token
    ``j``, shape [n_layer, n_head, T, T], float64. Hugging Face adds no
    "<|endoftext|>": put it at the start of ``text`` to get one.
    """
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        attentions = model(ids, output_attentions=True).attentions
    if not attentions:
        raise RuntimeError("the model returned no attentions: load it with attn_implementation='eager'")
    tokens = tokenizer.convert_ids_to_tokens(ids[0].tolist())
    return tokens, torch.cat(attentions).double().numpy()


def token_ids(tokenizer, text: str) -> list[int]:
    return list(tokenizer(text)["input_ids"])


def position(tokens: list[str], word: str) -> int:
    """Where ``word`` first occurs in ``tokens``, ignoring GPT-2's space marker "Ġ"."""
    bare = [token.removeprefix("Ġ") for token in tokens]
    return bare.index(word.strip().removeprefix("Ġ"))


def lesson_shares(model, tokenizer) -> dict[str, dict[str, float]]:
    """The lesson's shares, measured under both conventions: {convention: {claim label: share}}."""
    measured = {}
    for convention, prefix in lesson.CONVENTIONS.items():
        tokens, attentions = attention_patterns(model, tokenizer, prefix + lesson.SENTENCE)
        measured[convention] = {}
        for claim in lesson.CLAIMS:
            layer = attentions[claim.layer]
            pattern = layer.mean(axis=0) if claim.head is None else layer[claim.head]
            column = 0 if claim.target is None else position(tokens, claim.target)
            measured[convention][claim.label] = float(pattern[position(tokens, claim.source), column])
    return measured
