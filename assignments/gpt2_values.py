"""Exercise 6: what a GPT-2 head moves.

Exercise 4 looked at where a head's attention goes: its pattern, made by
queries and keys. That is only half of a lookup. The other half is what
comes back: the weighted sum of the *values*. The key decides who gets
attention; the value decides what information moves. At layer 4, head 3 of
GPT-2 small, " it" attends mostly to " cat", so the head's output at " it"
is mostly cat's value vector. It is added to the residual stream at the
position of " it", and from there on the model carries "it" as the cat.

Here you take one head apart into its query, key and value vectors,
recompute its output with the attention of exercise 3, and measure how much
of that output comes from each token. ``head_output`` and
``value_contributions`` use your ``scaled_dot_product_attention`` and
``causal_mask`` from ``attention.py``: finish exercise 3 first.

The checks use the tiny GPT-2s of exercise 4 (4 heads of size 16, and 6
heads of size 8); the same code runs unchanged on GPT-2 small (12 heads of
size 64). The ids your functions are given stay as they were.
"""

import numpy as np
import torch

from attention import causal_mask, scaled_dot_product_attention


def head_vectors(model, input_ids, layer, head):
    """One head's query, key and value vectors for every token: ``(queries, keys, values)``.

    The first steps of ``recompute_head_pattern`` in exercise 4:

    1. The input of block ``layer`` is ``hidden_states[layer]`` from
       ``model(ids, output_hidden_states=True)`` (a ``GPT2LMHeadModel``
       keeps its ``GPT2Model`` as ``model.transformer``; handle both).
    2. ``block.ln_1`` normalises it; ``block.attn.c_attn`` turns it into
       q, k and v side by side, ``n_embd`` columns each, in that order.
    3. Head ``h`` owns columns ``h * s`` to ``(h + 1) * s`` of each, where
       ``s = n_embd // n_head`` is the head size: 64 in GPT-2 small, 16 or
       8 in the tiny models. Read it from ``model.config``; write no number.

    Args:
        model: a Hugging Face GPT-2 (``GPT2Model`` or ``GPT2LMHeadModel``).
        input_ids: the token ids of one sentence, a list or 1-D array.
        layer, head: which head, counting from 0.

    Returns:
        Three numpy arrays of shape (T, s): row ``j`` belongs to token ``j``.
    """
    # YOUR CODE HERE
    raise NotImplementedError("head_vectors(): replace this line with your code")


def head_output(model, input_ids, layer, head):
    """The head's output at every token: its pattern times its values, shape (T, s).

    This is exercise 3, on vectors GPT-2 learned:
    ``scaled_dot_product_attention(queries, keys, values, causal_mask(T))``
    divides by ``sqrt(s)``, masks the future, applies softmax and mixes the
    values. Row ``i`` of the output is ``sum_j pattern[i, j] * values[j]``.

    In the model, the heads' outputs are laid side by side (head ``h`` in
    columns ``h * s`` to ``(h + 1) * s``) and then mixed by the block's
    output projection, ``attn.c_proj``. Yours is the head's part *before*
    that projection; the checks read the same numbers out of transformers.

    The first token can attend only to itself, so row 0 is exactly its own
    value vector.

    Returns:
        A numpy array of shape (T, s).
    """
    # YOUR CODE HERE
    raise NotImplementedError("head_output(): replace this line with your code")


def value_contributions(model, input_ids, layer, head, position):
    """How much of the head's output at ``position`` comes from each token, as shares that sum to 1.

    The output at ``position`` is a sum of pieces, ``weight_j * values[j]``,
    one per token ``j`` (``weight_j`` from row ``position`` of the pattern).
    The size of a piece is its length, ``weight_j * |values[j]|``; divide
    the sizes by their sum to get shares.

    A share differs from the attention weight when the value vectors differ
    in length: a token that gets 40% of the attention but has a short value
    vector hands over less than 40% of what moves. Tokens after
    ``position`` get weight 0, so their share is 0.

    Example, with two tokens: weights (0.6, 0.4) and value lengths (1.0,
    3.0) give sizes (0.6, 1.2) and shares (0.333, 0.667): the token that
    got less attention moved twice as much.

    Returns:
        A numpy array of shape (T,), summing to 1.
    """
    # YOUR CODE HERE
    raise NotImplementedError("value_contributions(): replace this line with your code")
