"""A catalogue of wrong implementations, and the check meant to catch each.

Each mistake is a function (or two) written the way a learner might get it
wrong; it is appended to a copy of the reference module, so it replaces the
right version. ``tests/test_wrong_implementations.py`` grades every one and
requires its check to fail with a message containing ``hint``; it also
requires every check in the registry to catch at least one mistake.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mistake:
    name: str
    module: str
    code: str
    caught_by: str
    hint: str  # a fragment of the message the learner must see

    @property
    def id(self) -> str:
        return f"{self.module}:{self.name}"


MISTAKES = [
    # -- softmax -----------------------------------------------------------------------
    Mistake("no max subtraction", "softmax", """
def softmax(x, axis=-1):
    e = np.exp(np.asarray(x, dtype=float))
    return e / e.sum(axis=axis, keepdims=True)
""", "test_large_scores", "subtract the largest score"),
    Mistake("axis ignored", "softmax", """
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)
""", "test_axis", "pass `axis` on"),
    Mistake("divide by the max", "softmax", """
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.max(axis=axis, keepdims=True)
""", "test_weights_positive_and_sum_to_one", "divide by the max"),
    Mistake("sum over every axis", "softmax", """
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max())
    return e / e.sum()
""", "test_axis", "keepdims=True"),
    Mistake("flattened result", "softmax", """
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).ravel()
""", "test_keeps_shape", "expected shape"),
    Mistake("scores clipped to [-50, 50]", "softmax", """
def softmax(x, axis=-1):
    x = np.clip(np.asarray(x, dtype=float), -50, 50)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
""", "test_minus_infinity_gets_zero", "not exactly 0"),
    Mistake("scores normalised without exp", "softmax", """
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float) + 10.0
    return x / x.sum(axis=axis, keepdims=True)
""", "test_shift_invariance", "cancels"),
    Mistake("scores standardised first", "softmax", """
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    x = (x - x.mean(axis=axis, keepdims=True)) / (x.std(axis=axis, keepdims=True) + 1e-12)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
""", "test_sharpness_limits", "largest score"),
    Mistake("powers of 2 instead of e", "softmax", """
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = 2.0 ** (x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
""", "test_lesson_scores", "exp(score)"),
    Mistake("axis 1 taken as the last axis", "softmax", """
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    axis = 0 if axis == 0 else -1
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
""", "test_matches_reference", "axis=1"),
    # -- lookup --------------------------------------------------------------------------
    Mistake("exact lookup returns the key", "lookup", """
def exact_lookup(query, keys, values):
    for key in keys:
        if key == query:
            return key
    return None
""", "test_exact_lookup_finds_key", "Return the value stored"),
    Mistake("exact lookup returns 0 when missing", "lookup", """
def exact_lookup(query, keys, values):
    for key, value in zip(keys, values):
        if key == query:
            return value
    return 0
""", "test_exact_lookup_missing_key", "answer is None"),
    Mistake("exact lookup falls back to the nearest", "lookup", """
def exact_lookup(query, keys, values):
    return nearest_lookup(query, keys, values)
""", "test_exact_lookup_missing_key", "finds nothing when nothing matches"),
    Mistake("nearest uses argmax", "lookup", """
def nearest_lookup(query, keys, values):
    return values[int(np.argmax(np.abs(np.asarray(keys) - query)))]
""", "test_nearest_lookup", "farthest"),
    Mistake("nearest tie goes to the last key", "lookup", """
def nearest_lookup(query, keys, values):
    distances = np.abs(np.asarray(keys, dtype=float) - query)
    return values[len(keys) - 1 - int(np.argmin(distances[::-1]))]
""", "test_nearest_tie_rule", "tie rule"),
    Mistake("soft score sign flipped", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    keys, values = np.asarray(keys, dtype=float), np.asarray(values, dtype=float)
    q = np.asarray(query, dtype=float)
    w = softmax(sharpness * (q[..., None] - keys) ** 2)
    a = w @ values
    return (float(a), w) if q.ndim == 0 else (a, w)
""", "test_squared_distance_scores", "sign of the score is flipped"),
    Mistake("absolute distance instead of squared", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    keys, values = np.asarray(keys, dtype=float), np.asarray(values, dtype=float)
    q = np.asarray(query, dtype=float)
    w = softmax(-sharpness * np.abs(q[..., None] - keys))
    a = w @ values
    return (float(a), w) if q.ndim == 0 else (a, w)
""", "test_squared_distance_scores", "not squared"),
    Mistake("sharpness ignored", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    keys, values = np.asarray(keys, dtype=float), np.asarray(values, dtype=float)
    q = np.asarray(query, dtype=float)
    w = softmax(-(q[..., None] - keys) ** 2)
    a = w @ values
    return (float(a), w) if q.ndim == 0 else (a, w)
""", "test_squared_distance_scores", "`sharpness` is ignored"),
    Mistake("sharpness divides the score", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    keys, values = np.asarray(keys, dtype=float), np.asarray(values, dtype=float)
    q = np.asarray(query, dtype=float)
    w = softmax(-(q[..., None] - keys) ** 2 / sharpness)
    a = w @ values
    return (float(a), w) if q.ndim == 0 else (a, w)
""", "test_sharpness_limits", "closest key"),
    Mistake("keys averaged instead of values", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    keys = np.asarray(keys, dtype=float)
    q = np.asarray(query, dtype=float)
    w = softmax(-sharpness * (q[..., None] - keys) ** 2)
    a = w @ keys
    return (float(a), w) if q.ndim == 0 else (a, w)
""", "test_lesson_table", "average the values"),
    Mistake("weights never normalised", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    keys, values = np.asarray(keys, dtype=float), np.asarray(values, dtype=float)
    q = np.asarray(query, dtype=float)
    w = np.exp(-sharpness * (q[..., None] - keys) ** 2)
    a = w @ values
    return (float(a), w) if q.ndim == 0 else (a, w)
""", "test_soft_weights_sum_to_one", "softmax"),
    Mistake("hard lookup: all weight on the best key", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    keys, values = np.asarray(keys, dtype=float), np.asarray(values, dtype=float)
    q = np.asarray(query, dtype=float)
    scores = -sharpness * (q[..., None] - keys) ** 2
    w = (scores == scores.max(axis=-1, keepdims=True)).astype(float)
    w = w / w.sum(axis=-1, keepdims=True)
    a = w @ values
    return (float(a), w) if q.ndim == 0 else (a, w)
""", "test_soft_answer_is_smooth", "picking one value"),
    Mistake("answer mixes scores, not weights", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    keys, values = np.asarray(keys, dtype=float), np.asarray(values, dtype=float)
    q = np.asarray(query, dtype=float)
    scores = -sharpness * (q[..., None] - keys) ** 2
    a = -(scores @ values) / len(keys)
    return (float(a), softmax(scores)) if q.ndim == 0 else (a, softmax(scores))
""", "test_soft_answer_within_values", "outside the prices' range"),
    Mistake("softmax across queries", "lookup", """
def soft_lookup(query, keys, values, sharpness=1.0):
    keys, values = np.asarray(keys, dtype=float), np.asarray(values, dtype=float)
    q = np.asarray(query, dtype=float)
    scores = -sharpness * (q[..., None] - keys) ** 2
    if q.ndim == 0:
        w = softmax(scores)
        return float(w @ values), w
    w = softmax(scores, axis=0)
    return w @ values, w
""", "test_many_queries", "Row i must be"),
    Mistake("exact lookup rounds the price", "lookup", """
def exact_lookup(query, keys, values):
    for key, value in zip(keys, values):
        if key == query:
            return int(value)
    return None
""", "test_exact_matches_reference", "expected"),
    Mistake("nearest lookup rounds the price", "lookup", """
def nearest_lookup(query, keys, values):
    return int(values[int(np.argmin(np.abs(np.asarray(keys, dtype=float) - query)))])
""", "test_nearest_matches_reference", "expected"),
    Mistake("soft answer rounded to pence", "lookup", """
_right_soft_lookup = soft_lookup
def soft_lookup(query, keys, values, sharpness=1.0):
    answer, weights = _right_soft_lookup(query, keys, values, sharpness)
    return np.round(answer, 2), weights
""", "test_soft_matches_reference", "expected"),
    # -- attention -----------------------------------------------------------------------
    Mistake("attend score sign flipped", "attention", """
def attend(query, keys, values):
    w = softmax(-(np.asarray(keys) @ np.asarray(query)))
    return w @ np.asarray(values), w
""", "test_two_number_example", "sign flipped"),
    Mistake("attend averages the keys", "attention", """
def attend(query, keys, values):
    w = softmax(np.asarray(keys) @ np.asarray(query))
    return w @ np.asarray(keys), w
""", "test_output_mixes_values", "*keys*"),
    Mistake("attend never normalises", "attention", """
def attend(query, keys, values):
    w = np.exp(np.asarray(keys) @ np.asarray(query))
    return w @ np.asarray(values), w
""", "test_attend_weights_sum_to_one", "softmax"),
    Mistake("attend uses cosine similarity", "attention", """
def attend(query, keys, values):
    q = np.asarray(query) / np.linalg.norm(query)
    k = np.asarray(keys) / np.linalg.norm(keys, axis=1, keepdims=True)
    w = softmax(k @ q)
    return w @ np.asarray(values), w
""", "test_query_length_is_sharpness", "grow in proportion"),
    Mistake("attend output mixes the scores", "attention", """
def attend(query, keys, values):
    scores = np.asarray(keys) @ np.asarray(query)
    return scores @ np.asarray(values), softmax(scores)
""", "test_output_inside_values", "outside the range"),
    Mistake("no sqrt(d) scaling", "attention", """
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = np.asarray(Q) @ np.asarray(K).T
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = softmax(scores)
    return w @ np.asarray(V), w
""", "test_scores_scaled_by_sqrt_d", "not divided by sqrt(d_k)"),
    Mistake("scores divided by d instead of sqrt(d)", "attention", """
def scaled_dot_product_attention(Q, K, V, mask=None):
    K = np.asarray(K)
    scores = np.asarray(Q) @ K.T / K.shape[-1]
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = softmax(scores)
    return w @ np.asarray(V), w
""", "test_scores_scaled_by_sqrt_d", "divided by d_k, not sqrt(d_k)"),
    Mistake("softmax down the columns", "attention", """
def scaled_dot_product_attention(Q, K, V, mask=None):
    K = np.asarray(K)
    scores = np.asarray(Q) @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = softmax(scores, axis=0)
    return w @ np.asarray(V), w
""", "test_matrix_output_mixes_values", "Softmax each row"),
    Mistake("masked scores set to -10", "attention", """
def scaled_dot_product_attention(Q, K, V, mask=None):
    K = np.asarray(K)
    scores = np.asarray(Q) @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -10.0)
    w = softmax(scores)
    return w @ np.asarray(V), w
""", "test_mask_gives_exact_zero", "a small one such as -10 still leaves weight"),
    Mistake("mask ignored", "attention", """
def scaled_dot_product_attention(Q, K, V, mask=None):
    K = np.asarray(K)
    w = softmax(np.asarray(Q) @ K.T / np.sqrt(K.shape[-1]))
    return w @ np.asarray(V), w
""", "test_mask_gives_exact_zero", "not exactly 0"),
    Mistake("mask inverted", "attention", """
def scaled_dot_product_attention(Q, K, V, mask=None):
    K = np.asarray(K)
    scores = np.asarray(Q) @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    w = softmax(scores)
    return w @ np.asarray(V), w
""", "test_mask_true_means_allowed", "inverted"),
    Mistake("mask applied after softmax", "attention", """
def scaled_dot_product_attention(Q, K, V, mask=None):
    K = np.asarray(K)
    w = softmax(np.asarray(Q) @ K.T / np.sqrt(K.shape[-1]))
    if mask is not None:
        w = w * mask
    return w @ np.asarray(V), w
""", "test_causal_attention", "first row"),
    Mistake("causal mask above the diagonal", "attention", """
def causal_mask(n):
    return np.triu(np.ones((n, n), dtype=bool))
""", "test_causal_mask", "see the future"),
    Mistake("causal mask without the diagonal", "attention", """
def causal_mask(n):
    return np.tril(np.ones((n, n), dtype=bool), k=-1)
""", "test_causal_mask", "attend to itself"),
    Mistake("causal mask of floats", "attention", """
def causal_mask(n):
    return np.tril(np.ones((n, n)))
""", "test_causal_mask", "boolean array"),
    Mistake("attend squeezes a single key away", "attention", """
def attend(query, keys, values):
    w = softmax(np.squeeze(np.asarray(keys) @ np.asarray(query)))
    return w @ np.squeeze(np.asarray(values)), w
""", "test_attend_matches_reference", "attend"),
    Mistake("attention squeezes single queries away", "attention", """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = np.squeeze(Q), np.asarray(K), np.asarray(V)
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(np.squeeze(mask), scores, -np.inf)
    w = softmax(scores)
    return w @ V, w
""", "test_sdpa_matches_reference", "shape"),
    Mistake("causal mask capped at 8 tokens", "attention", """
def causal_mask(n):
    return np.tril(np.ones((min(n, 8), min(n, 8)), dtype=bool))
""", "test_causal_mask_matches_reference", "expected shape"),
    # -- gpt2_heads ----------------------------------------------------------------------
    Mistake("decoded words instead of tokens", "gpt2_heads", """
_right_head_pattern = head_pattern
def head_pattern(model, tokenizer, text, layer, head):
    tokens, pattern = _right_head_pattern(model, tokenizer, text, layer, head)
    return [tokenizer.convert_tokens_to_string([t]) for t in tokens], pattern
""", "test_tokens", "decoded words"),
    Mistake("layer off by one", "gpt2_heads", """
def head_pattern(model, tokenizer, text, layer, head):
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        attentions = model(ids, output_attentions=True).attentions
    return tokenizer.convert_ids_to_tokens(ids[0].tolist()), attentions[layer - 1][0, head].numpy()
""", "test_head_pattern", "layers count from 0"),
    Mistake("head off by one", "gpt2_heads", """
def head_pattern(model, tokenizer, text, layer, head):
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        attentions = model(ids, output_attentions=True).attentions
    return tokenizer.convert_ids_to_tokens(ids[0].tolist()), attentions[layer][0, head - 1].numpy()
""", "test_head_pattern", "heads count from 0"),
    Mistake("pattern transposed", "gpt2_heads", """
_right_head_pattern = head_pattern
def head_pattern(model, tokenizer, text, layer, head):
    tokens, pattern = _right_head_pattern(model, tokenizer, text, layer, head)
    return tokens, pattern.T
""", "test_pattern_is_causal_weights", "above the diagonal"),
    Mistake("share read from the wrong side", "gpt2_heads", """
_right_share = attention_share
def attention_share(tokens, pattern, from_token, to_token):
    return _right_share(tokens, pattern, to_token, from_token)
""", "test_attention_share", "pattern[to, from]"),
    Mistake("share of the last occurrence", "gpt2_heads", """
def attention_share(tokens, pattern, from_token, to_token):
    names = [t.lstrip("Ġ ") for t in tokens]
    last = lambda name: len(names) - 1 - names[::-1].index(name.lstrip("Ġ "))
    return float(np.asarray(pattern)[last(from_token), last(to_token)])
""", "test_attention_share_matches_reference", "expected"),
    Mistake("share without a ValueError", "gpt2_heads", """
_right_share = attention_share
def attention_share(tokens, pattern, from_token, to_token):
    try:
        return _right_share(tokens, pattern, from_token, to_token)
    except ValueError:
        return 0.0
""", "test_attention_share_unknown_token", "raise ValueError"),
    Mistake("max over heads instead of mean", "gpt2_heads", """
def layer_average(model, tokenizer, text, layer):
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        attentions = model(ids, output_attentions=True).attentions
    return tokenizer.convert_ids_to_tokens(ids[0].tolist()), attentions[layer][0].max(dim=0).values.numpy()
""", "test_layer_average", "maximum over the heads"),
    Mistake("average of the previous layer", "gpt2_heads", """
_right_average = layer_average
def layer_average(model, tokenizer, text, layer):
    return _right_average(model, tokenizer, text, layer - 1)
""", "test_layer_average_matches_reference", "expected"),
    Mistake("no causal mask", "gpt2_heads", """
def recompute_head_pattern(model, input_ids, layer, head):
    base = getattr(model, "transformer", model)
    ids = torch.as_tensor(np.asarray(input_ids)).reshape(1, -1)
    d, size = model.config.n_embd, model.config.n_embd // model.config.n_head
    with torch.no_grad():
        x = base.h[layer].ln_1(base(ids, output_hidden_states=True).hidden_states[layer][0])
        q, k, _ = base.h[layer].attn.c_attn(x).split(d, dim=-1)
        scores = q[:, head * size:(head + 1) * size] @ k[:, head * size:(head + 1) * size].T / size**0.5
        return torch.softmax(scores, dim=-1).numpy()
""", "test_recompute_head_pattern", "future tokens"),
    Mistake("no sqrt(d) scaling", "gpt2_heads", """
def recompute_head_pattern(model, input_ids, layer, head):
    base = getattr(model, "transformer", model)
    ids = torch.as_tensor(np.asarray(input_ids)).reshape(1, -1)
    d, size = model.config.n_embd, model.config.n_embd // model.config.n_head
    with torch.no_grad():
        x = base.h[layer].ln_1(base(ids, output_hidden_states=True).hidden_states[layer][0])
        q, k, _ = base.h[layer].attn.c_attn(x).split(d, dim=-1)
        scores = q[:, head * size:(head + 1) * size] @ k[:, head * size:(head + 1) * size].T
        future = torch.ones_like(scores, dtype=torch.bool).triu(1)
        return torch.softmax(scores.masked_fill(future, -torch.inf), dim=-1).numpy()
""", "test_recompute_head_pattern", "times too large"),
    Mistake("ln_1 skipped", "gpt2_heads", """
def recompute_head_pattern(model, input_ids, layer, head):
    base = getattr(model, "transformer", model)
    ids = torch.as_tensor(np.asarray(input_ids)).reshape(1, -1)
    d, size = model.config.n_embd, model.config.n_embd // model.config.n_head
    with torch.no_grad():
        x = base(ids, output_hidden_states=True).hidden_states[layer][0]
        q, k, _ = base.h[layer].attn.c_attn(x).split(d, dim=-1)
        scores = q[:, head * size:(head + 1) * size] @ k[:, head * size:(head + 1) * size].T / size**0.5
        future = torch.ones_like(scores, dtype=torch.bool).triu(1)
        return torch.softmax(scores.masked_fill(future, -torch.inf), dim=-1).numpy()
""", "test_recompute_head_pattern", "block.ln_1"),
    Mistake("the next block's hidden state", "gpt2_heads", """
def recompute_head_pattern(model, input_ids, layer, head):
    base = getattr(model, "transformer", model)
    ids = torch.as_tensor(np.asarray(input_ids)).reshape(1, -1)
    d, size = model.config.n_embd, model.config.n_embd // model.config.n_head
    with torch.no_grad():
        x = base.h[layer].ln_1(base(ids, output_hidden_states=True).hidden_states[layer + 1][0])
        q, k, _ = base.h[layer].attn.c_attn(x).split(d, dim=-1)
        scores = q[:, head * size:(head + 1) * size] @ k[:, head * size:(head + 1) * size].T / size**0.5
        future = torch.ones_like(scores, dtype=torch.bool).triu(1)
        return torch.softmax(scores.masked_fill(future, -torch.inf), dim=-1).numpy()
""", "test_recompute_head_pattern", "hidden_states[layer]"),
    Mistake("another head's keys", "gpt2_heads", """
def recompute_head_pattern(model, input_ids, layer, head):
    base = getattr(model, "transformer", model)
    ids = torch.as_tensor(np.asarray(input_ids)).reshape(1, -1)
    d, n = model.config.n_embd, model.config.n_head
    size = d // n
    other = (head + 1) % n
    with torch.no_grad():
        x = base.h[layer].ln_1(base(ids, output_hidden_states=True).hidden_states[layer][0])
        q, k, _ = base.h[layer].attn.c_attn(x).split(d, dim=-1)
        scores = q[:, head * size:(head + 1) * size] @ k[:, other * size:(other + 1) * size].T / size**0.5
        future = torch.ones_like(scores, dtype=torch.bool).triu(1)
        return torch.softmax(scores.masked_fill(future, -torch.inf), dim=-1).numpy()
""", "test_recompute_head_pattern", "head h is columns"),
    Mistake("recompute only for GPT2LMHeadModel", "gpt2_heads", """
_right_recompute = recompute_head_pattern
def recompute_head_pattern(model, input_ids, layer, head):
    model.transformer  # GPT2Model has no .transformer: this raises for it
    return _right_recompute(model, input_ids, layer, head)
""", "test_recompute_matches_reference", "transformer"),
    Mistake("head_pattern cut to the lesson's 10 tokens", "gpt2_heads", """
_right_head_pattern = head_pattern
def head_pattern(model, tokenizer, text, layer, head):
    tokens, pattern = _right_head_pattern(model, tokenizer, text, layer, head)
    return tokens[:10], pattern[:10, :10]
""", "test_head_pattern_matches_reference", "tokens"),
]
