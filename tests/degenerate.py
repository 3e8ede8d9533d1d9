"""A catalogue of degenerate answers: submissions that implement nothing and still look right.

A check that a lazy submission can pass is a check that hands out points for
nothing. Each strategy below makes every contract function of every exercise
answer the same lazy way, with the shape the contract asks for (a degenerate
answer with the right shape is the strong adversary: it gets past every
"is this an array of the right size" test):

* ``uniform``: equal weights over the entries a mask or the causal order
  allows, and the values averaged with those weights (the soft answer with
  sharpness 0, the mean price for a lookup);
* ``mean``: every number is the mean of the function's main input (the
  scores, the values, the pattern), or the mean weight 1/n when there is none;
* ``zeros``, ``ones``: every number is 0, or 1;
* ``echo``: every number comes from the main input (the scores, the query),
  repeated to the right shape;
* ``none``: every function returns ``None``;
* ``value_error``, ``exception``: every function raises (``ValueError``, or a
  plain ``Exception``).

The only real step a degenerate answer takes is the tokenizer's own tokens,
which GPT-2's functions need for their shape. ``tests/checks/test_degenerate.py``
grades every strategy and bounds the points they can collect.
"""

from __future__ import annotations

from pathlib import Path

STRATEGIES = ("uniform", "mean", "zeros", "ones", "echo", "none", "value_error", "exception")

# Shared by every degenerate module: one output slot filled the strategy's way.
PRELUDE = '''
import numpy as np

STRATEGY = {strategy!r}


def give_up():
    """True when the whole function answers None; raises for the raising strategies."""
    if STRATEGY == "value_error":
        raise ValueError("degenerate answer")
    if STRATEGY == "exception":
        raise Exception("degenerate answer")
    return STRATEGY == "none"


def constant(shape, data, echo):
    if STRATEGY == "zeros":
        return np.zeros(shape)
    if STRATEGY == "ones":
        return np.ones(shape)
    if STRATEGY == "echo":
        return np.resize(np.asarray(echo, dtype=float), shape)
    return np.full(shape, np.mean(data))


def weights(shape, data=None, echo=None, allowed=None, axis=-1):
    """Weights of ``shape``: equal over ``allowed`` entries for "uniform"."""
    if STRATEGY == "uniform" or (STRATEGY == "mean" and data is None):
        allowed = np.broadcast_to(np.ones(shape, bool) if allowed is None else allowed, shape)
        equal = allowed / allowed.sum(axis=axis, keepdims=True)
        return equal if STRATEGY == "uniform" else np.full(shape, 1 / shape[axis])
    return constant(shape, data, echo)


def mixed(weights_, values, shape, echo=None):
    """Values mixed by ``weights_`` for "uniform"; the strategy's constant otherwise."""
    values = np.asarray(values, dtype=float)
    if STRATEGY == "uniform":
        return weights_ @ values
    return constant(shape, values, echo)
'''

MODULES = {
    "softmax": '''
def softmax(x, axis=-1):
    if give_up():
        return None
    x = np.asarray(x, dtype=float)
    return weights(x.shape, data=x, echo=x, allowed=x > -np.inf, axis=axis)
''',
    "lookup": '''
def exact_lookup(query, keys, values):
    if give_up():
        return None
    return float(mixed(weights((len(keys),)), values, (), echo=query))


def nearest_lookup(query, keys, values):
    return exact_lookup(query, keys, values)


def soft_lookup(query, keys, values, sharpness=1.0):
    if give_up():
        return None
    queries = np.asarray(query, dtype=float)
    w = weights(queries.shape + (len(keys),), data=values, echo=query)
    answers = mixed(w, values, queries.shape, echo=query)
    return (float(answers) if queries.ndim == 0 else answers), w
''',
    "attention": '''
def attend(query, keys, values):
    if give_up():
        return None
    w = weights((len(keys),), data=values, echo=query)
    return mixed(w, values, np.shape(values)[1:], echo=query), w


def scaled_dot_product_attention(Q, K, V, mask=None):
    if give_up():
        return None
    w = weights((len(Q), len(K)), data=V, echo=Q, allowed=mask)
    return mixed(w, V, (len(Q), np.shape(V)[1]), echo=Q), w


def causal_mask(n):
    if give_up():
        return None
    return weights((n, n), echo=n) != 0
''',
    "gpt2_heads": '''
def head_pattern(model, tokenizer, text, layer, head):
    if give_up():
        return None
    ids = tokenizer(text)["input_ids"]
    return tokenizer.convert_ids_to_tokens(ids), causal_weights(ids)


def layer_average(model, tokenizer, text, layer):
    return head_pattern(model, tokenizer, text, layer, 0)


def attention_share(tokens, pattern, from_token, to_token):
    if give_up():
        return None
    return float(mixed(weights((len(tokens) ** 2,)), np.ravel(pattern), (), echo=pattern))


def recompute_head_pattern(model, input_ids, layer, head):
    if give_up():
        return None
    return causal_weights(list(input_ids))


def causal_weights(ids):
    size = len(ids)
    return weights((size, size), echo=ids, allowed=np.tri(size, dtype=bool))
''',
    "learning": '''
def soft_answer(query, keys, values, sharpness):
    if give_up():
        return None
    queries = np.asarray(query, dtype=float)
    return mixed(weights(queries.shape + (len(keys),), data=values, echo=query), values, queries.shape, echo=query)


def nearest_answer(query, keys, values):
    return soft_answer(query, keys, values, 0.0)


def answer_slope(query, keys, values, sharpness):
    if give_up():
        return None
    return float(soft_answer(query, keys, values, sharpness)), float(constant((), [query], query))


def nearest_slope(query, keys, values):
    return answer_slope(query, keys, values, 0.0)


def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    if give_up():
        return None
    return float(constant((), answers, start)), list(constant((steps,), answers, answers))


def fit_nearest_key(queries, answers, keys, values, which, start, steps=50, lr=1e-3):
    return fit_sharpness(queries, answers, keys, values, start, steps, lr)
''',
    "gpt2_values": '''
def head_vectors(model, input_ids, layer, head):
    if give_up():
        return None
    shape = (len(input_ids), model.config.n_embd // model.config.n_head)
    return tuple(constant(shape, input_ids, input_ids) for _ in range(3))


def head_output(model, input_ids, layer, head):
    if give_up():
        return None
    values = head_vectors(model, input_ids, layer, head)[2]
    size = len(input_ids)
    return mixed(weights((size, size), echo=input_ids, allowed=np.tri(size, dtype=bool)), values, values.shape,
                 echo=input_ids)


def value_contributions(model, input_ids, layer, head, position):
    if give_up():
        return None
    return weights((len(input_ids),), echo=input_ids, allowed=np.arange(len(input_ids)) <= position)
''',
}


def write(folder: Path, strategy: str) -> Path:
    """A submission in ``folder`` whose every function answers the ``strategy`` way."""
    folder.mkdir(parents=True, exist_ok=True)
    for module, body in MODULES.items():
        (folder / f"{module}.py").write_text(PRELUDE.format(strategy=strategy) + body)
    return folder
