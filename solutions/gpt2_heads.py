"""Exercise 4: a real GPT-2 head.

GPT-2 small has 12 layers, each with 12 attention heads. Every head is the
attention of exercise 3: each token makes a query, a key and a value, here
with matrices that were learned from text rather than written by hand, and
every token takes a causal soft lookup over the tokens up to itself. Nobody
told any head what to look for; some heads learned jobs we can read off
their patterns, such as linking a pronoun to the noun it stands for.

Here you read those patterns out of a Hugging Face ``transformers`` model,
ask how much one token attends to another, and finally recompute a head's
pattern from the model's own weights, to see that there is nothing more to
it than ``softmax(q . k / sqrt(d))`` with the future masked.

Your functions get a ``model`` and its ``tokenizer``. The checks use a small
GPT-2 with random weights (biases and layer norms included), so its patterns
mean nothing; the same code runs unchanged on GPT-2 small, where they do.
The tokens, patterns and ids your functions are given stay as they were.
"""

import numpy as np
import torch


def head_pattern(model, tokenizer, text, layer, head):
    """The attention pattern of one head: return ``(tokens, pattern)``.

    ``tokenizer(text, return_tensors="pt")["input_ids"]`` gives the ids, a
    tensor of shape (1, T). Calling ``model(ids, output_attentions=True)``
    returns an output whose ``.attentions`` holds one tensor per layer, of
    shape (1, n_head, T, T). Read it under ``torch.no_grad()``: no training
    happens here, so torch need not remember how to take gradients.

    ``tokens`` are the strings the tokenizer made of the ids
    (``tokenizer.convert_ids_to_tokens``). GPT-2 writes a leading space as
    "Ġ", so "The cat sat" gives ``["The", "Ġcat", "Ġsat"]``.

    ``pattern[i, j]`` is how much token ``i`` attends to token ``j``. Row
    ``i`` is a softmax, so it sums to 1, and everything right of the
    diagonal is 0: no token sees the future. For GPT-2 small and "The cat
    sat on the mat because it was tired", row 7 is where " it" looks.

    Args:
        model: a Hugging Face GPT-2 (``GPT2Model`` or ``GPT2LMHeadModel``).
        tokenizer: its tokenizer.
        text: the sentence; it is not changed (nothing is added in front).
        layer, head: which head, counting from 0.

    Returns:
        ``tokens``, a list of T strings, and ``pattern``, a numpy array (T, T).
    """
    ### BEGIN SOLUTION
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        attentions = model(ids, output_attentions=True).attentions
    tokens = tokenizer.convert_ids_to_tokens(ids[0].tolist())
    return tokens, attentions[layer][0, head].numpy()
    ### END SOLUTION


def attention_share(tokens, pattern, from_token, to_token):
    """How much weight ``from_token`` puts on ``to_token``: one number of ``pattern``.

    That is ``pattern[row of from_token, column of to_token]``. Tokens are
    matched whole, without GPT-2's space marker, on both sides: "it", " it"
    and "Ġit" all name the token "Ġit", and "cat" is not "Ġcats". Case
    counts: "The" and "the" are different tokens. When a token occurs more
    than once, the first one counts, for the row and for the column alike.

    Example::

        tokens  = ["The", "Ġcat", "Ġit"]
        pattern = [[1.0, 0.0, 0.0],
                   [0.3, 0.7, 0.0],
                   [0.1, 0.6, 0.3]]
        attention_share(tokens, pattern, "it", "cat")   # 0.6
        attention_share(tokens, pattern, "it", "The")   # 0.1

    Args:
        tokens: the T token strings of the pattern.
        pattern: a (T, T) array, as ``head_pattern`` returns it.
        from_token, to_token: the two tokens, with or without the marker.

    Returns:
        A Python float (``float(...)``: a float32 read out of GPT-2's
        pattern is not one).

    Raises:
        ValueError: a token is not in ``tokens``; the message names it and
        lists the tokens there are.
    """
    ### BEGIN SOLUTION
    def bare(token):
        return token[1:] if token[:1] in ("Ġ", " ") else token

    names = [bare(token) for token in tokens]
    for token in (from_token, to_token):
        if bare(token) not in names:
            raise ValueError(f"no token {token!r} in {list(tokens)}")
    row, column = names.index(bare(from_token)), names.index(bare(to_token))
    return float(np.asarray(pattern)[row, column])
    ### END SOLUTION


def layer_average(model, tokenizer, text, layer):
    """The pattern of a whole layer: the mean of its heads' patterns.

    Same ``(tokens, pattern)`` as ``head_pattern``, but ``pattern`` is the
    average over all heads of ``layer`` (``model.config.n_head`` of them).
    An average of softmax rows is still a row of weights that sums to 1.

    Why look at it: heads specialise. If one head of a layer sends 90% of
    " it"'s attention to " cat" and three others send 0%, the layer average
    shows 22.5%: averaging hides the head that does the job.

    Returns:
        ``tokens`` (list of T strings) and ``pattern``, a numpy array (T, T).
    """
    ### BEGIN SOLUTION
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        attentions = model(ids, output_attentions=True).attentions
    tokens = tokenizer.convert_ids_to_tokens(ids[0].tolist())
    return tokens, attentions[layer][0].mean(dim=0).numpy()
    ### END SOLUTION


def recompute_head_pattern(model, input_ids, layer, head):
    """Recompute one head's pattern from the model's weights, without ``output_attentions``.

    Every step is exercise 3:

    1. The input of block ``layer`` is ``hidden_states[layer]``, from
       ``model(ids, output_hidden_states=True)`` (``hidden_states[0]`` is
       the embeddings, which enter block 0).
    2. The block first normalises it: ``x = block.ln_1(hidden)``.
    3. ``block.attn.c_attn`` makes the queries, keys and values in one go.
       It is a ``Conv1D``, which despite its name is ``x @ W + b``; its
       ``W`` has shape (d, 3d) (d = ``n_embd``), so the output holds q, k
       and v side by side, d columns each.
    4. Head ``h`` owns columns ``h * s`` to ``(h + 1) * s`` of each, with
       ``s = d // n_head`` the head size (64 in GPT-2 small: 12 x 64 = 768).
    5. ``scores = q @ k.T / sqrt(s)``; a future position (column after the
       row) gets ``-inf``; softmax along each row.

    The blocks are ``model.h`` in a ``GPT2Model``; a ``GPT2LMHeadModel``
    keeps its ``GPT2Model`` as ``model.transformer``. Handle both.

    Args:
        model: a Hugging Face GPT-2 (``GPT2Model`` or ``GPT2LMHeadModel``).
        input_ids: the token ids of one sentence, a list or 1-D array.
        layer, head: which head, counting from 0.

    Returns:
        The (T, T) pattern as a numpy array; it matches ``head_pattern``.
    """
    ### BEGIN SOLUTION
    base = getattr(model, "transformer", model)
    ids = torch.as_tensor(np.asarray(input_ids), dtype=torch.long).reshape(1, -1)
    size = model.config.n_embd // model.config.n_head
    columns = slice(head * size, (head + 1) * size)
    with torch.no_grad():
        hidden = base(ids, output_hidden_states=True).hidden_states[layer][0]
        block = base.h[layer]
        x = block.ln_1(hidden)
        qkv = x @ block.attn.c_attn.weight + block.attn.c_attn.bias
        q, k, _ = qkv.split(model.config.n_embd, dim=-1)  # the values do not shape the pattern
        scores = q[:, columns] @ k[:, columns].T / size**0.5
        future = torch.ones_like(scores, dtype=torch.bool).triu(diagonal=1)
        pattern = torch.softmax(scores.masked_fill(future, -torch.inf), dim=-1)
    return pattern.numpy()
    ### END SOLUTION
