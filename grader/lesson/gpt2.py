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


# The slips a recomputation of a head makes most, each as what it feeds c_attn, for the checks' hints.
SLIPS = ("c_attn's bias left out", "ln_2 in place of ln_1", "ln_f in place of ln_1", "ln_1 skipped",
         "q, k and v side by side within each head", "a head's columns strided")


def slipped_head(model, tokenizer, text: str, layer: int, head: int) -> dict[str, dict[str, np.ndarray]]:
    """One head recomputed with each of :data:`SLIPS`: {slip: {"attentions": (T, T), "queries", "keys", "values"}}.

    A check compares a wrong answer with these to name the slip; on a model
    whose biases and LayerNorms are random, every one of them differs from
    the head's true numbers.
    """
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    base = getattr(model, "transformer", model)
    block, width = base.h[layer], model.config.n_embd
    size = width // model.config.n_head
    columns = slice(head * size, (head + 1) * size)
    slipped = {}
    with torch.no_grad():
        hidden = base(ids, output_hidden_states=True).hidden_states[layer][0]
        for slip in SLIPS:
            normalise = {"ln_2 in place of ln_1": block.ln_2, "ln_f in place of ln_1": base.ln_f,
                         "ln_1 skipped": torch.nn.Identity()}.get(slip, block.ln_1)
            qkv = normalise(hidden) @ block.attn.c_attn.weight
            if slip != "c_attn's bias left out":
                qkv = qkv + block.attn.c_attn.bias
            if slip == "q, k and v side by side within each head":  # GPT-NeoX's layout, not GPT-2's
                queries, keys, values = qkv.reshape(len(qkv), -1, 3, size)[:, head].double().unbind(1)
            elif slip == "a head's columns strided":  # (T, size, n_head) where GPT-2 has (T, n_head, size)
                queries, keys, values = (third.reshape(len(qkv), size, -1)[:, :, head].double()
                                         for third in qkv.split(width, dim=-1))
            else:
                queries, keys, values = (third[:, columns].double() for third in qkv.split(width, dim=-1))
            scores = (queries @ keys.T / size**0.5).masked_fill(
                torch.ones(len(ids[0]), len(ids[0]), dtype=torch.bool).triu(1), -torch.inf)
            slipped[slip] = {"attentions": torch.softmax(scores, dim=-1).numpy(), "queries": queries.numpy(),
                             "keys": keys.numpy(), "values": values.numpy()}
    return slipped


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
