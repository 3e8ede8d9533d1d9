"""The ground truth for the GPT-2 exercises: what transformers itself computes, and the lesson's shares.

Trusted code: only the kit's own workers (the ``kit`` fixture) and
``softlookup gpt2-report`` import it. A learner's worker never loads it, and
cannot read it: it is exactly what a dishonest submission would want to call.
"""

from __future__ import annotations

import numpy as np
import torch

from grader.lesson import lesson


def head_readouts(model, tokenizer, text: str) -> dict:
    """The ground truth of every head, read from transformers' own forward pass.

    Returns float64 arrays under these names, next to ``tokens``:

    * ``attentions[layer, head, i, j]``: the weight token ``i`` puts on
      token ``j`` (``output_attentions``), shape [n_layer, n_head, T, T];
    * ``queries``, ``keys``, ``values[layer, head, j]``: token ``j``'s
      vectors in that head, the three thirds of ``attn.c_attn``'s output,
      read by a forward hook, shape [n_layer, n_head, T, head size];
    * ``outputs[layer, head, i]``: the head's output at token ``i``, its
      columns of the merged heads that ``attn.c_proj`` receives (a forward
      hook reads them), before the output projection mixes the heads.

    Hugging Face adds no "<|endoftext|>": put it at the start of ``text``.
    """
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    base = getattr(model, "transformer", model)
    made, merged = [], []  # per layer: c_attn's output (q, k, v side by side) and c_proj's input
    hooks = [hook for block in base.h for hook in (
        block.attn.c_attn.register_forward_hook(lambda module, inputs, output: made.append(output[0])),
        block.attn.c_proj.register_forward_hook(lambda module, inputs, output: merged.append(inputs[0][0])),
    )]
    try:
        with torch.no_grad():
            attentions = model(ids, output_attentions=True).attentions
    finally:
        for hook in hooks:
            hook.remove()
    if not attentions:
        raise RuntimeError("the model returned no attentions: load it with attn_implementation='eager'")
    n_head, size = model.config.n_head, model.config.n_embd // model.config.n_head

    def by_head(columns):  # [n_layer of (T, n_embd)] -> [n_layer, n_head, T, size]
        stacked = torch.stack(columns).double()
        return stacked.reshape(len(columns), -1, n_head, size).transpose(1, 2).numpy()

    queries, keys, values = zip(*(layer.split(model.config.n_embd, dim=-1) for layer in made))
    return {
        "tokens": tokenizer.convert_ids_to_tokens(ids[0].tolist()),
        "attentions": torch.cat(attentions).double().numpy(),
        "queries": by_head(queries),
        "keys": by_head(keys),
        "values": by_head(values),
        "outputs": by_head(merged),
    }


def attention_patterns(model, tokenizer, text: str) -> tuple[list[str], np.ndarray]:
    """``(tokens, attentions)`` as transformers computes them: attentions[layer, head, i, j], float64."""
    readouts = head_readouts(model, tokenizer, text)
    return readouts["tokens"], readouts["attentions"]


def token_ids(tokenizer, text: str) -> list[int]:
    return list(tokenizer(text)["input_ids"])


def lesson_shares(model, tokenizer) -> dict[str, dict[str, float]]:
    """The lesson's shares, measured under both conventions: {convention: {claim label: share}}."""
    measured = {}
    for convention, prefix in lesson.CONVENTIONS.items():
        tokens, attentions = attention_patterns(model, tokenizer, prefix + lesson.SENTENCE)
        measured[convention] = {}
        for claim in lesson.CLAIMS:
            layer = attentions[claim.layer]
            pattern = layer.mean(axis=0) if claim.head is None else layer[claim.head]
            column = 0 if claim.target is None else lesson.position(tokens, claim.target)
            measured[convention][claim.label] = float(pattern[lesson.position(tokens, claim.source), column])
    return measured


def lesson_value_shares(model, tokenizer) -> dict[str, dict]:
    """What the lesson's head moves into " it", under both conventions.

    {convention: {"tokens": [...], "attention": its attention row, "value":
    its value shares}}: who gets attention, and whose value vector makes up
    the head's output.
    """
    claim, measured = lesson.VALUE_CLAIM, {}
    for convention, prefix in lesson.CONVENTIONS.items():
        readouts = head_readouts(model, tokenizer, prefix + lesson.SENTENCE)
        row = readouts["attentions"][claim.layer, claim.head, lesson.position(readouts["tokens"], claim.source)]
        measured[convention] = {"tokens": readouts["tokens"], "attention": row,
                                "value": lesson.value_shares(row, readouts["values"][claim.layer, claim.head])}
    return measured
