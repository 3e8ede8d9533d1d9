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
  plain ``Exception``);
* ``one_hot``: a hard lookup everywhere: all the weight on the best score (the
  nearest key, the best-matching key, each token on itself), the value it
  picks, a slope of 0, a fit that never moves and a loss that never changes;
* ``memorise``: the lesson's and the docstrings' own examples answered with
  their published numbers (77.68% for "cat", £275.11k and 49.45%, the slope
  201.76, a loss curve falling from 2702.98 to 1e-18 and a sharpness of 1.5, a
  nearest fit stuck at 2588.89), and ``one_hot`` for everything else.

The only real step a degenerate answer takes is the tokenizer's own tokens,
which GPT-2's functions need for their shape. ``tests/checks/test_degenerate.py``
grades every strategy and bounds the points they can collect.
"""

from __future__ import annotations

from pathlib import Path

STRATEGIES = ("uniform", "mean", "zeros", "ones", "echo", "none", "value_error", "exception", "one_hot", "memorise")

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
    """Values mixed by ``weights_`` for "uniform" and the hard lookups; the strategy's constant otherwise."""
    values = np.asarray(values, dtype=float)
    if STRATEGY in ("uniform", "one_hot", "memorise"):
        return weights_ @ values
    return constant(shape, values, echo)


HARD = STRATEGY in ("one_hot", "memorise")


def hard(scores, allowed=None, axis=-1):
    """All the weight on the best allowed score of each row (the first of equal ones): a hard lookup."""
    scores = np.moveaxis(np.where(True if allowed is None else allowed, np.asarray(scores, dtype=float), -np.inf),
                         axis, -1)
    one_hot = (np.arange(scores.shape[-1]) == np.argmax(scores, axis=-1)[..., None]).astype(float)
    return np.moveaxis(one_hot, -1, axis)


# What "memorise" knows: the lesson's examples and the docstrings' own numbers, by their inputs.
LESSON_SCORES = [-1.53, 2.44, 0.79, -1.05, -0.64]
LESSON_ATTENTION = [0.0147, 0.7768, 0.1492, 0.0237, 0.0357]
DOCSTRING_SCORES, DOCSTRING_WEIGHTS = [2.0, 1.0, 0.0], [0.665, 0.245, 0.090]
HOUSE_WEIGHTS, HOUSE_ANSWER = [0.0054935, 0.4945065, 0.4945065, 0.0054935], 275.1099


def known(value, example) -> bool:
    return STRATEGY == "memorise" and np.shape(value) == np.shape(example) and np.allclose(value, example)
'''

MODULES = {
    "softmax": '''
def softmax(x, axis=-1):
    if give_up():
        return None
    x = np.asarray(x, dtype=float)
    if known(x, LESSON_SCORES):
        return np.array(LESSON_ATTENTION)
    if known(x, DOCSTRING_SCORES):
        return np.array(DOCSTRING_WEIGHTS)
    if HARD:
        return hard(x, axis=axis)
    return weights(x.shape, data=x, echo=x, allowed=x > -np.inf, axis=axis)
''',
    "lookup": '''
def exact_lookup(query, keys, values):
    if give_up():
        return None
    return float(np.mean(values) if HARD else mixed(weights((len(keys),)), values, (), echo=query))


def nearest_lookup(query, keys, values):  # a hard lookup is the nearest one done right: the lazy ones stay lazy
    return exact_lookup(query, keys, values)


def soft_lookup(query, keys, values, sharpness=1.0):
    if give_up():
        return None
    queries = np.asarray(query, dtype=float)
    if known(query, 3.0) and known(sharpness, 1.5):
        return HOUSE_ANSWER, np.array(HOUSE_WEIGHTS)
    if HARD:
        w = hard(-np.abs(queries[..., None] - np.asarray(keys, dtype=float)))
        answers = mixed(w, values, queries.shape)
        return (float(answers) if queries.ndim == 0 else answers), w
    w = weights(queries.shape + (len(keys),), data=values, echo=query)
    answers = mixed(w, values, queries.shape, echo=query)
    return (float(answers) if queries.ndim == 0 else answers), w
''',
    "attention": '''
def attend(query, keys, values):
    if give_up():
        return None
    w = weights((len(keys),), data=values, echo=query)
    if HARD:
        w = hard(np.asarray(keys, dtype=float) @ np.asarray(query, dtype=float))
    if known(query, [1.4, 0.3]):
        w = np.array(LESSON_ATTENTION)
    return mixed(w, values, np.shape(values)[1:], echo=query), w


def scaled_dot_product_attention(Q, K, V, mask=None):
    if give_up():
        return None
    w = weights((len(Q), len(K)), data=V, echo=Q, allowed=mask)
    if HARD:
        w = hard(np.asarray(Q, dtype=float) @ np.asarray(K, dtype=float).T, allowed=mask)
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
    if HARD:  # each token on itself
        return np.eye(size)
    return weights((size, size), echo=ids, allowed=np.tri(size, dtype=bool))
''',
    "learning": '''
SLOPES = {(3.0, 1.5): 201.76, (2.0, 1.5): 28.66, (3.5, 1.5): 46.06, (3.0, 5.0): 650.0, (2.0, 5.0): 3.99}


def soft_answer(query, keys, values, sharpness):
    if give_up():
        return None
    queries = np.asarray(query, dtype=float)
    if known(query, 3.0) and known(sharpness, 1.5):
        return np.array(HOUSE_ANSWER)
    if HARD:
        return mixed(hard(-np.abs(queries[..., None] - np.asarray(keys, dtype=float))), values, queries.shape)
    return mixed(weights(queries.shape + (len(keys),), data=values, echo=query), values, queries.shape, echo=query)


def nearest_answer(query, keys, values):  # the hard lookup's own answer is the nearest one: lazy here too
    queries = np.asarray(query, dtype=float)
    return np.full(queries.shape, np.mean(values)) if HARD else soft_answer(query, keys, values, 0.0)


def answer_slope(query, keys, values, sharpness):
    if give_up():
        return None
    if STRATEGY == "memorise" and (float(query), float(sharpness)) in SLOPES:
        return float(soft_answer(query, keys, values, sharpness)), SLOPES[float(query), float(sharpness)]
    slope = 0.0 if HARD else float(constant((), [query], query))
    return float(soft_answer(query, keys, values, sharpness)), slope


def nearest_slope(query, keys, values):
    if HARD and not give_up():
        return float(nearest_answer(query, keys, values)), 1.0
    return answer_slope(query, keys, values, 0.0)


def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    if give_up():
        return None
    if STRATEGY == "memorise":  # the lesson's curve, made up: from 2702.98 down to 1e-18, ending at 1.5
        return 1.5, list(np.geomspace(2702.98, 9.5e-19, steps))
    if HARD:  # a fit that never moves, and the hard lookup's loss at every step
        nearest = mixed(hard(-np.abs(np.asarray(queries, dtype=float)[:, None] - np.asarray(keys, dtype=float))),
                        values, np.shape(queries))
        return float(start), [float(np.mean((nearest - np.asarray(answers, dtype=float)) ** 2))] * steps
    return float(constant((), answers, start)), list(constant((steps,), answers, answers))


def fit_nearest_key(queries, answers, keys, values, which, start, steps=50, lr=1e-3):
    if STRATEGY == "memorise":
        return float(start), [2588.89] * steps
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
    if HARD:  # all on the token itself
        return (np.arange(len(input_ids)) == position).astype(float)
    return weights((len(input_ids),), echo=input_ids, allowed=np.arange(len(input_ids)) <= position)
''',
}


def write(folder: Path, strategy: str) -> Path:
    """A submission in ``folder`` whose every function answers the ``strategy`` way."""
    folder.mkdir(parents=True, exist_ok=True)
    for module, body in MODULES.items():
        (folder / f"{module}.py").write_text(PRELUDE.format(strategy=strategy) + body)
    return folder
