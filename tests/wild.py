"""Implementations from the wild: correct code written the way public code writes it, and unstable code that is not.

``RIGHT`` maps a name to whole modules (``{module: source}``) that replace the
reference solutions in a submission folder. Each is an independent, correct
implementation of the contract in the docstrings of ``solutions/*.py``,
written in the style of well-known public code (picoGPT, d2l, the Annotated
Transformer, PyTorch's documented reference of scaled_dot_product_attention,
minGPT/nanoGPT, TransformerLens, Hugging Face) and adapted to the kit's
contract by renaming and argument order only. Every one must keep full marks:
a failure is a grader bug (a tolerance too tight for float32, a tie broken
another way, a tensor returned), never a reason to change the code here.

``UNSTABLE`` lists wrong implementations that look right on friendly numbers
and fall over on unfriendly ones (underflow, overflow, the caller's array
changed): each must lose the named check, with a message that contains the
fragment, so a learner who wrote it is told what went wrong.
"""

from __future__ import annotations

from dataclasses import dataclass


# ---------------------------------------------------------------------------------------------------------------------
# softmax.py
# ---------------------------------------------------------------------------------------------------------------------

SOFTMAX_PICOGPT = '''\
import numpy as np


def softmax(x, axis=-1):
    # jaymody/picoGPT, gpt2.py; picoGPT fixes the axis at -1, here it is passed on
    exp_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)
'''

SOFTMAX_LOGSUMEXP = '''\
import numpy as np


def logsumexp(a, axis=-1):
    a_max = np.max(a, axis=axis, keepdims=True)
    return a_max + np.log(np.sum(np.exp(a - a_max), axis=axis, keepdims=True))


def softmax(x, axis=-1):
    """softmax(x) = exp(x - logsumexp(x)): the normaliser taken in log space."""
    x = np.asarray(x, dtype=np.float64)
    return np.exp(x - logsumexp(x, axis=axis))
'''

SOFTMAX_LOGADDEXP = '''\
import numpy as np


def softmax(x, axis=-1):
    scores = np.array(x, dtype=float)
    log_normaliser = np.logaddexp.reduce(scores, axis=axis, keepdims=True)
    return np.exp(scores - log_normaliser)
'''

SOFTMAX_TORCH = '''\
import torch


def softmax(x, axis=-1):
    return torch.softmax(torch.as_tensor(x, dtype=torch.float64), dim=axis)
'''

SOFTMAX_F_FLOAT32 = '''\
import numpy as np
import torch
import torch.nn.functional as F


def softmax(x, axis=-1):
    scores = torch.from_numpy(np.array(x, dtype=np.float32))
    return F.softmax(scores, dim=axis).numpy()
'''

SOFTMAX_LOG_SOFTMAX = '''\
import torch
from torch import nn


def softmax(x, axis=-1):
    log_weights = nn.LogSoftmax(dim=axis)(torch.tensor(x, dtype=torch.float64))
    return log_weights.exp()
'''

SOFTMAX_LOOPS = '''\
import math

import numpy as np


def softmax_of_list(scores):
    top = max(scores)
    exps = [math.exp(score - top) for score in scores]
    total = math.fsum(exps)
    return [e / total for e in exps]


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    moved = np.moveaxis(x, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    weights = np.array([softmax_of_list(row.tolist()) for row in rows]).reshape(moved.shape)
    return np.moveaxis(weights, -1, axis)
'''

SOFTMAX_SCIPY_APPLY_ALONG_AXIS = '''\
import numpy as np


def _softmax_1d(x):
    # the body of scipy.special.softmax (scipy is not needed for five lines)
    x_max = np.amax(x, keepdims=True)
    exp_x_shifted = np.exp(x - x_max)
    return exp_x_shifted / np.sum(exp_x_shifted, keepdims=True)


def softmax(x, axis=-1):
    return np.apply_along_axis(_softmax_1d, axis, np.asarray(x, dtype=float))
'''


SOFTMAX_TORCH_FUNC_VMAP = '''\
import torch
from torch.func import vmap


def softmax(x, axis=-1):
    scores = torch.as_tensor(x, dtype=torch.float64)
    rows = scores.movedim(axis, -1)
    flat = rows.reshape(-1, rows.shape[-1])
    weights = vmap(lambda row: torch.exp(row - row.max()) / torch.exp(row - row.max()).sum())(flat)
    return weights.reshape(rows.shape).movedim(-1, axis).numpy()
'''

SOFTMAX_SCIPY = '''\
from scipy.special import softmax as scipy_softmax


def softmax(x, axis=-1):
    return scipy_softmax(x, axis=axis)
'''

SOFTMAX_EINSUM_NORMALISER = '''\
import numpy as np


def softmax(x, axis=-1):
    scores = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    totals = np.einsum("...k->...", exps)  # one sum per row, in einsum's own words
    return np.moveaxis(np.einsum("...k,...->...k", exps, 1.0 / totals), -1, axis)
'''


# ---------------------------------------------------------------------------------------------------------------------
# lookup.py
# ---------------------------------------------------------------------------------------------------------------------

LOOKUP_D2L = '''\
import torch
from torch.nn import functional as F


def exact_lookup(query, keys, values):
    hits = torch.nonzero(torch.as_tensor(keys, dtype=torch.float64) == query).flatten()
    if len(hits) == 0:
        return None
    return values[int(hits[0])]


def nearest_lookup(query, keys, values):
    distances = (torch.as_tensor(keys, dtype=torch.float64) - query).abs()
    return values[int(torch.argmin(distances))]  # the first of equally small distances


def soft_lookup(query, keys, values, sharpness=1.0):
    # d2l.ai, "Attention Pooling: Nadaraya-Watson Kernel Regression": NWKernelRegression.forward,
    # with the Gaussian kernel's learned width w standing for the sharpness
    queries = torch.as_tensor(query, dtype=torch.float64).reshape(-1)
    keys = torch.as_tensor(keys, dtype=torch.float64)
    values = torch.as_tensor(values, dtype=torch.float64)
    # Shape of queries and attention_weights: (no. of queries, no. of key-value pairs)
    repeated_queries = queries.repeat_interleave(keys.shape[0]).reshape((-1, keys.shape[0]))
    attention_weights = F.softmax(-sharpness * (repeated_queries - keys) ** 2, dim=1)
    # Shape of values: (no. of queries, no. of key-value pairs)
    answers = torch.bmm(attention_weights.unsqueeze(1), values.repeat((len(queries), 1)).unsqueeze(-1)).reshape(-1)
    if torch.as_tensor(query).ndim == 0:
        return answers[0].item(), attention_weights[0]
    return answers, attention_weights
'''

LOOKUP_DICT_LOGADDEXP = '''\
import numpy as np


def exact_lookup(query, keys, values):
    table = dict(zip(reversed(list(keys)), reversed(list(values))))  # the first occurrence is written last
    return table.get(query)


def nearest_lookup(query, keys, values):
    best = min(range(len(keys)), key=lambda j: abs(keys[j] - query))  # min keeps the first of equals
    return values[best]


def soft_lookup(query, keys, values, sharpness=1.0):
    keys = np.asarray(keys, dtype=float)
    values = np.asarray(values, dtype=float)
    queries = np.atleast_1d(np.asarray(query, dtype=float))
    scores = -sharpness * np.subtract.outer(queries, keys) ** 2
    weights = np.exp(scores - np.logaddexp.reduce(scores, axis=1, keepdims=True))
    answers = np.einsum("qk,k->q", weights, values)
    if np.ndim(query) == 0:
        return answers.item(), weights[0]
    return answers, weights
'''

LOOKUP_TORCH_FLOAT32 = '''\
import torch


def exact_lookup(query, keys, values):
    for position, key in enumerate(keys):
        if key == query:
            return values[position]
    return None


def nearest_lookup(query, keys, values):
    distances = [abs(key - query) for key in keys]
    return values[distances.index(min(distances))]


def soft_lookup(query, keys, values, sharpness=1.0):
    q = torch.as_tensor(query, dtype=torch.float32)
    k = torch.as_tensor(keys, dtype=torch.float32)
    v = torch.as_tensor(values, dtype=torch.float32)
    weights = (-sharpness * (q.unsqueeze(-1) - k).pow(2)).softmax(dim=-1)
    if q.ndim == 0:  # the docstring promises a float answer: a tensor stands for an array, never for a float
        return (weights @ v).item(), weights
    return weights @ v, weights
'''

LOOKUP_TORCH_VMAP = '''\
import numpy as np
import torch


def exact_lookup(query, keys, values):
    matches = np.flatnonzero(np.asarray(keys) == query)
    return values[matches[0]] if matches.size else None


def nearest_lookup(query, keys, values):
    order = np.argsort(np.abs(np.asarray(keys, dtype=float) - query), kind="stable")
    return values[order[0]]


def soft_lookup(query, keys, values, sharpness=1.0):
    keys = torch.as_tensor(np.asarray(keys, dtype=float))
    values = torch.as_tensor(np.asarray(values, dtype=float))

    def one(q):
        weights = torch.softmax(-sharpness * (q - keys) ** 2, dim=0)
        return torch.dot(weights, values), weights

    queries = torch.as_tensor(np.asarray(query, dtype=float))
    if queries.ndim == 0:
        answer, weights = one(queries)
        return float(answer), weights.numpy()
    answers, weights = torch.vmap(one)(queries)
    return answers.numpy(), weights.numpy()
'''

LOOKUP_LOOPS_MATH = '''\
import math

import numpy as np  # the loops' lists made arrays at the end: the docstring promises arrays


def exact_lookup(query, keys, values):
    return next((value for key, value in zip(keys, values) if key == query), None)


def nearest_lookup(query, keys, values):
    best_value, best_distance = None, math.inf
    for key, value in zip(keys, values):
        if abs(key - query) < best_distance:  # strictly closer: a tie keeps the earlier key
            best_value, best_distance = value, abs(key - query)
    return best_value


def soft_lookup(query, keys, values, sharpness=1.0):
    try:
        several = iter(query)
    except TypeError:
        several = None
    if several is not None:
        answers, rows = [], []
        for q in several:
            answer, weights = soft_lookup(float(q), keys, values, sharpness)
            answers.append(answer)
            rows.append(weights)
        return np.asarray(answers), np.asarray(rows)
    scores = [-sharpness * (query - float(key)) ** 2 for key in keys]
    top = max(scores)
    exps = [math.exp(score - top) for score in scores]
    total = math.fsum(exps)
    weights = [e / total for e in exps]
    return math.fsum(w * float(v) for w, v in zip(weights, values)), np.asarray(weights)
'''


LOOKUP_SKLEARN_STYLE = '''\
import numpy as np

from softmax import softmax


class NadarayaWatson:
    """Kernel regression in scikit-learn's manner: fit stores the records, predict blends them.

    The kernel is an RBF, exp(-gamma * |x - key|^2) as sklearn.metrics.pairwise.rbf_kernel writes it, so gamma
    is the lesson's sharpness; it is normalised in log space, which is a softmax of -gamma * distance^2.
    """

    def __init__(self, gamma=1.0):
        self.gamma = gamma

    def fit(self, X, y):
        self.X_ = np.asarray(X, dtype=float).reshape(-1, 1)
        self.y_ = np.asarray(y, dtype=float)
        return self

    def weights(self, X):
        X = np.asarray(X, dtype=float).reshape(-1, 1)
        squared = (X - self.X_.T) ** 2  # (n_queries, n_records)
        return softmax(-self.gamma * squared, axis=1)

    def predict(self, X):
        return self.weights(X) @ self.y_


def exact_lookup(query, keys, values):
    matches = np.flatnonzero(np.asarray(keys) == query)
    return values[int(matches[0])] if matches.size else None


def nearest_lookup(query, keys, values):
    model = NadarayaWatson().fit(keys, values)
    return values[int(np.argmin(np.abs(model.X_[:, 0] - query)))]


def soft_lookup(query, keys, values, sharpness=1.0):
    model = NadarayaWatson(gamma=sharpness).fit(keys, values)
    weights = model.weights(np.atleast_1d(query))
    answers = weights @ model.y_
    if np.ndim(query) == 0:
        return float(answers[0]), weights[0]
    return answers, weights
'''


# ---------------------------------------------------------------------------------------------------------------------
# attention.py
# ---------------------------------------------------------------------------------------------------------------------

LOOKUP_TORCH_CDIST = '''\
import torch
import torch.nn.functional as F


def _column(x):
    return torch.as_tensor(x, dtype=torch.float64).reshape(-1, 1)


def exact_lookup(query, keys, values):
    hits = (_column(keys)[:, 0] == float(query)).nonzero()
    return values[int(hits[0, 0])] if len(hits) else None


def nearest_lookup(query, keys, values):
    distances = torch.cdist(_column(query), _column(keys))[0]  # torch.argmin returns the first of equal ones
    return values[int(torch.argmin(distances))]


def soft_lookup(query, keys, values, sharpness=1.0):
    squared = torch.cdist(_column(query), _column(keys)) ** 2  # (queries, keys)
    weights = F.softmax(-sharpness * squared, dim=-1)
    answers = weights @ torch.as_tensor(values, dtype=torch.float64)
    if torch.as_tensor(query).ndim == 0:
        return answers.item(), weights[0].numpy()
    return answers.numpy(), weights.numpy()
'''

ATTENTION_ANNOTATED = '''\
import math

import numpy as np
import torch


def attention(query, key, value, mask=None, dropout=None):
    "Compute 'Scaled Dot Product Attention'"
    # harvardnlp, The Annotated Transformer
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


def subsequent_mask(size):
    "Mask out subsequent positions."
    attn_shape = (1, size, size)
    subsequent_mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
    return subsequent_mask == 0


def as_tensor(a):
    return torch.as_tensor(np.asarray(a, dtype=np.float64))


def attend(query, keys, values):
    scores = torch.matmul(as_tensor(keys), as_tensor(query))  # no 1/sqrt(d_k) for a single query here
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, as_tensor(values)), p_attn


def scaled_dot_product_attention(Q, K, V, mask=None):
    return attention(as_tensor(Q), as_tensor(K), as_tensor(V), None if mask is None else torch.as_tensor(mask))


def causal_mask(n):
    return subsequent_mask(n)[0]
'''

ATTENTION_PYTORCH_REFERENCE = '''\
import math

import numpy as np
import torch


# The reference implementation in the documentation of torch.nn.functional.scaled_dot_product_attention,
# returning its weights too.
def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    attn_bias = torch.zeros(L, S, dtype=query.dtype, device=query.device)
    if is_causal:
        assert attn_mask is None
        temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
        attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn_bias.masked_fill_(attn_mask.logical_not(), float("-inf"))
        else:
            attn_bias = attn_mask + attn_bias
    attn_weight = query @ key.transpose(-2, -1) * scale_factor
    attn_weight += attn_bias
    attn_weight = torch.softmax(attn_weight, dim=-1)
    attn_weight = torch.dropout(attn_weight, dropout_p, train=True)
    return attn_weight @ value, attn_weight


def _tensors(*arrays):
    return [torch.from_numpy(np.array(a, dtype=np.float64)) for a in arrays]


def attend(query, keys, values):
    q, k, v = _tensors(query, keys, values)
    output, weights = _sdpa(q[None, :], k, v, scale=1.0)  # a plain dot product: no scaling
    return output[0], weights[0]


def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = _tensors(Q, K, V)
    return _sdpa(q, k, v, attn_mask=None if mask is None else torch.as_tensor(np.asarray(mask, dtype=bool)))


def causal_mask(n):
    return torch.ones(n, n, dtype=torch.bool).tril(diagonal=0).numpy()
'''

ATTENTION_TORCH_SDPA = '''\
import numpy as np
import torch
import torch.nn.functional as F


def _weights(q, k, mask, scale):
    scores = q @ k.T * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def attend(query, keys, values):
    q, k, v = (torch.as_tensor(np.asarray(a, dtype=float)) for a in (query, keys, values))
    # torch's fused attention returns the output only, so the weights are computed beside it
    output = F.scaled_dot_product_attention(q[None], k, v, scale=1.0)[0]
    return output, _weights(q[None], k, None, 1.0)[0]


def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = (torch.as_tensor(np.asarray(a, dtype=float)) for a in (Q, K, V))
    m = None if mask is None else torch.as_tensor(np.asarray(mask, dtype=bool))
    output = F.scaled_dot_product_attention(q, k, v, attn_mask=m)  # True takes part, as in the kit
    return output, _weights(q, k, m, k.shape[-1] ** -0.5)


def causal_mask(n):
    return torch.ones(n, n, dtype=torch.bool).tril()
'''

ATTENTION_MINGPT = '''\
import math

import torch
from torch.nn import functional as F


def attend(query, keys, values):
    q = torch.tensor(query, dtype=torch.float64)
    k = torch.tensor(keys, dtype=torch.float64)
    v = torch.tensor(values, dtype=torch.float64)
    att = F.softmax(k @ q, dim=-1)
    return att @ v, att


def scaled_dot_product_attention(Q, K, V, mask=None):
    # karpathy/minGPT, CausalSelfAttention.forward, for one head and with the mask passed in
    q = torch.tensor(Q, dtype=torch.float64)
    k = torch.tensor(K, dtype=torch.float64)
    v = torch.tensor(V, dtype=torch.float64)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    if mask is not None:
        att = att.masked_fill(torch.tensor(mask) == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    y = att @ v
    return y, att


def causal_mask(n):
    # minGPT registers torch.tril(torch.ones(block_size, block_size)) as its "bias" buffer
    return torch.tril(torch.ones(n, n)).view(n, n) == 1
'''

ATTENTION_NANOGPT_FLOAT32 = '''\
import math

import numpy as np
import torch
import torch.nn.functional as F


def _f32(a):
    return torch.as_tensor(np.asarray(a), dtype=torch.float32)


def attend(query, keys, values):
    att = F.softmax(_f32(keys) @ _f32(query), dim=-1)
    return att @ _f32(values), att


def scaled_dot_product_attention(Q, K, V, mask=None):
    # karpathy/nanoGPT's "manual implementation of attention", in float32
    q, k, v = _f32(Q), _f32(K), _f32(V)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    if mask is not None:
        att = att.masked_fill(torch.as_tensor(np.asarray(mask)).logical_not(), float("-inf"))
    att = F.softmax(att, dim=-1)
    return att @ v, att


def causal_mask(n):
    return torch.tril(torch.ones(n, n, dtype=torch.bool))
'''

ATTENTION_EINSUM_NUMPY = '''\
import numpy as np


def _stable_softmax(scores):
    shifted = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def attend(query, keys, values):
    weights = _stable_softmax(np.einsum("d,nd->n", np.asarray(query, float), np.asarray(keys, float)))
    return np.einsum("n,nv->v", weights, np.asarray(values, float)), weights


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    scores = np.einsum("md,nd->mn", Q, K) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores[~np.asarray(mask, dtype=bool)] = -np.inf
    weights = _stable_softmax(scores)
    return np.einsum("mn,nv->mv", weights, V), weights


def causal_mask(n):
    return np.tri(n, dtype=bool)
'''

ATTENTION_LOOPS = '''\
import math

import numpy as np


def _row_softmax(scores):
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


def _dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def _mix(weights, values):
    return [sum(w * value[c] for w, value in zip(weights, values)) for c in range(len(values[0]))]


def attend(query, keys, values):
    query, keys, values = (np.asarray(a, dtype=float).tolist() for a in (query, keys, values))
    weights = _row_softmax([_dot(query, key) for key in keys])
    return np.array(_mix(weights, values)), np.array(weights)


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=float).tolist() for a in (Q, K, V))
    scale = math.sqrt(len(K[0]))
    outputs, rows = [], []
    for i, query in enumerate(Q):
        scores = [_dot(query, key) / scale if mask is None or mask[i][j] else -math.inf for j, key in enumerate(K)]
        weights = _row_softmax(scores)
        rows.append(weights)
        outputs.append(_mix(weights, V))
    return np.array(outputs), np.array(rows)


def causal_mask(n):
    return np.array([[j <= i for j in range(n)] for i in range(n)], dtype=bool)
'''


ATTENTION_EINOPS_STYLE = '''\
import torch


def einsum(pattern, *tensors):
    """einops.einsum's notation (names of any length, spaces between them) on torch.einsum's one-letter axes."""
    inputs, output = pattern.split("->")
    names = {}
    letters = iter("abcdefghijklmnopqrstuvwxyz")

    def short(part):
        return "".join(names.setdefault(name, next(letters)) for name in part.split())

    return torch.einsum(",".join(short(part) for part in inputs.split(",")) + "->" + short(output), *tensors)


def _t(a):
    return torch.as_tensor(a, dtype=torch.float64)


def attend(query, keys, values):
    q, k, v = _t(query), _t(keys), _t(values)
    weights = torch.softmax(einsum("d_k, key d_k -> key", q, k), dim=-1)
    return einsum("key, key d_v -> d_v", weights, v).numpy(), weights.numpy()


def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = _t(Q), _t(K), _t(V)
    scores = einsum("query d_k, key d_k -> query key", q, k) / k.shape[-1] ** 0.5
    if mask is not None:
        scores = scores.masked_fill(~torch.as_tensor(mask, dtype=torch.bool), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return einsum("query key, key d_v -> query d_v", weights, v).numpy(), weights.numpy()


def causal_mask(n):
    return torch.ones(n, n, dtype=torch.bool).tril().numpy()
'''

ATTENTION_HALF_PRECISION_MASK = '''\
import numpy as np
import torch
import torch.nn.functional as F


def _mask_in_half(n):
    # The mask is 0s and 1s, exact in any precision: built in bfloat16, as a mixed-precision model would.
    return torch.ones(n, n, dtype=torch.bfloat16).tril() > 0.5


def attend(query, keys, values):
    q = torch.as_tensor(np.asarray(query, dtype=np.float32))
    k = torch.as_tensor(np.asarray(keys, dtype=np.float32))
    v = torch.as_tensor(np.asarray(values, dtype=np.float32))
    weights = torch.softmax(k @ q, dim=0)
    return (weights @ v).numpy(), weights.numpy()


def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = (torch.as_tensor(np.asarray(a, dtype=np.float32)) for a in (Q, K, V))
    scores = q @ k.T / k.shape[-1] ** 0.5
    if mask is not None:
        scores = scores.masked_fill(~torch.as_tensor(np.asarray(mask), dtype=torch.bool), float("-inf"))
    weights = F.softmax(scores, dim=-1)
    return (weights @ v).numpy(), weights.numpy()


def causal_mask(n):
    return _mask_in_half(n).numpy()
'''

ATTENTION_TORCH_FUNC_VMAP = '''\
import torch
from torch.func import vmap


def _t(a):
    return torch.as_tensor(a, dtype=torch.float64)


def _one_query(q, keys, values, allowed, scale):
    scores = torch.where(allowed, keys @ q * scale, torch.tensor(float("-inf"), dtype=torch.float64))
    weights = torch.softmax(scores, dim=-1)
    return weights @ values, weights


def attend(query, keys, values):
    keys = _t(keys)
    output, weights = _one_query(_t(query), keys, _t(values), torch.ones(len(keys), dtype=torch.bool), 1.0)
    return output.numpy(), weights.numpy()


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = _t(Q), _t(K), _t(V)
    allowed = torch.ones(len(Q), len(K), dtype=torch.bool) if mask is None else torch.as_tensor(mask).bool()
    output, weights = vmap(_one_query, in_dims=(0, None, None, 0, None))(Q, K, V, allowed, K.shape[-1] ** -0.5)
    return output.numpy(), weights.numpy()


def causal_mask(n):
    return torch.tril(torch.ones(n, n)).bool().numpy()
'''


# ---------------------------------------------------------------------------------------------------------------------
# gpt2_heads.py
# ---------------------------------------------------------------------------------------------------------------------

HEADS_HUGGING_FACE_HOOKS = '''\
import math
import re

import torch


def head_pattern(model, tokenizer, text, layer, head):
    input_ids = tokenizer.encode(text, return_tensors="pt")
    with torch.no_grad():
        outputs = model(input_ids, output_attentions=True)
    attention = outputs.attentions[layer]  # (batch, heads, T, T)
    tokens = tokenizer.convert_ids_to_tokens(input_ids[0].tolist())
    return tokens, attention[0, head].cpu().numpy()


def _bare(token):
    return re.sub("^[Ġ ]", "", token)


def attention_share(tokens, pattern, from_token, to_token):
    words = [_bare(t) for t in tokens]
    for token in (from_token, to_token):
        if _bare(token) not in words:
            raise ValueError(f"token {token!r} is not among {tokens}")
    return float(pattern[words.index(_bare(from_token))][words.index(_bare(to_token))])


def layer_average(model, tokenizer, text, layer):
    input_ids = tokenizer.encode(text, return_tensors="pt")
    with torch.no_grad():
        attentions = torch.stack(model(input_ids, output_attentions=True).attentions)  # (layers, 1, heads, T, T)
    return tokenizer.convert_ids_to_tokens(input_ids[0].tolist()), attentions[layer, 0].mean(dim=0).numpy()


def recompute_head_pattern(model, input_ids, layer, head):
    gpt2 = model.transformer if hasattr(model, "transformer") else model
    captured = {}
    hook = gpt2.h[layer].attn.c_attn.register_forward_hook(lambda module, args, output: captured.update(qkv=output))
    try:
        with torch.no_grad():
            gpt2(torch.tensor([[int(i) for i in input_ids]]))
    finally:
        hook.remove()
    n_embd, n_head = model.config.n_embd, model.config.n_head
    head_dim = n_embd // n_head
    query, key, _ = captured["qkv"][0].split(n_embd, dim=-1)
    q = query.reshape(-1, n_head, head_dim)[:, head]
    k = key.reshape(-1, n_head, head_dim)[:, head]
    scores = q @ k.T / math.sqrt(head_dim)
    T = scores.shape[0]
    scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
    return torch.softmax(scores, dim=-1)  # a tensor with no gradient history stands for an array
'''

HEADS_TRANSFORMER_LENS = '''\
import numpy as np
import torch


def _cache_attentions(model, tokenizer, text):
    tokens = tokenizer.tokenize(text)
    ids = torch.tensor([tokenizer.convert_tokens_to_ids(tokens)])
    with torch.no_grad():
        out = model.forward(input_ids=ids, output_attentions=True, return_dict=True)
    return tokens, [a[0].numpy() for a in out.attentions]  # blocks.{layer}.attn.hook_pattern


def head_pattern(model, tokenizer, text, layer, head):
    tokens, patterns = _cache_attentions(model, tokenizer, text)
    return tokens, patterns[layer][head]


def attention_share(tokens, pattern, from_token, to_token):
    clean = [t[1:] if t.startswith(("Ġ", " ")) else t for t in tokens]

    def position(token):
        token = token[1:] if token.startswith(("Ġ", " ")) else token
        found = next((i for i, t in enumerate(clean) if t == token), None)
        if found is None:
            raise ValueError(f"{token!r} is not one of the tokens {list(tokens)}")
        return found

    return float(np.asarray(pattern)[position(from_token), position(to_token)])


def layer_average(model, tokenizer, text, layer):
    tokens, patterns = _cache_attentions(model, tokenizer, text)
    n_heads = model.config.n_head
    return tokens, sum(patterns[layer][h] for h in range(n_heads)) / n_heads


def recompute_head_pattern(model, input_ids, layer, head):
    # TransformerLens' Attention.forward, with GPT-2's fused c_attn cut into W_Q and W_K per head
    cfg = model.config
    d_model, n_heads = cfg.n_embd, cfg.n_head
    d_head = d_model // n_heads
    transformer = getattr(model, "transformer", model)
    block = transformer.h[layer]
    W, b = block.attn.c_attn.weight, block.attn.c_attn.bias
    W_Q = W[:, :d_model].reshape(d_model, n_heads, d_head).permute(1, 0, 2)  # [n_heads, d_model, d_head]
    W_K = W[:, d_model:2 * d_model].reshape(d_model, n_heads, d_head).permute(1, 0, 2)
    b_Q = b[:d_model].reshape(n_heads, d_head)
    b_K = b[d_model:2 * d_model].reshape(n_heads, d_head)
    with torch.no_grad():
        ids = torch.as_tensor(np.asarray(input_ids, dtype=np.int64))[None]
        resid_pre = transformer(ids, output_hidden_states=True).hidden_states[layer][0]  # [pos, d_model]
        normalized = block.ln_1(resid_pre)
        q = torch.einsum("pd,ndh->pnh", normalized, W_Q) + b_Q
        k = torch.einsum("pd,ndh->pnh", normalized, W_K) + b_K
        attn_scores = torch.einsum("qnh,knh->nqk", q, k) / d_head ** 0.5
        n_pos = attn_scores.shape[-1]
        mask = torch.triu(torch.ones(n_pos, n_pos, dtype=torch.bool), diagonal=1)
        attn_scores = attn_scores.masked_fill(mask, -1e5)  # IGNORE
        pattern = attn_scores.softmax(dim=-1)
    return pattern[head].numpy()
'''

HEADS_ATTN_HOOKS_NUMPY = '''\
import numpy as np
import torch


def _blocks(model):
    return (model.transformer if hasattr(model, "transformer") else model).h


def _layer_weights(model, tokenizer, text, layer):
    """The eager attention of block `layer` returns (output, weights): catch them with a forward hook."""
    ids = tokenizer(text, return_tensors="pt").input_ids
    caught = []
    handle = _blocks(model)[layer].attn.register_forward_hook(lambda module, args, output: caught.append(output[1]))
    try:
        with torch.inference_mode():
            model(ids, output_attentions=True)
    finally:
        handle.remove()
    return tokenizer.convert_ids_to_tokens(ids[0].tolist()), caught[0][0].double().numpy()


def head_pattern(model, tokenizer, text, layer, head):
    tokens, weights = _layer_weights(model, tokenizer, text, layer)
    return tokens, weights[head]


def attention_share(tokens, pattern, from_token, to_token):
    first = {}
    for index, token in enumerate(tokens):
        first.setdefault(token.removeprefix("Ġ"), index)
    wanted = [token.removeprefix("Ġ").removeprefix(" ") for token in (from_token, to_token)]
    missing = [token for token, word in zip((from_token, to_token), wanted) if word not in first]
    if missing:
        raise ValueError(f"no {missing[0]!r} among the tokens {list(tokens)}")
    return float(pattern[first[wanted[0]], first[wanted[1]]])


def layer_average(model, tokenizer, text, layer):
    tokens, weights = _layer_weights(model, tokenizer, text, layer)
    return tokens, np.mean(weights, axis=0)


def _layer_norm(x, ln):
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    weight, bias = (p.detach().double().numpy() for p in (ln.weight, ln.bias))
    return (x - mean) / np.sqrt(variance + ln.eps) * weight + bias


def recompute_head_pattern(model, input_ids, layer, head):
    ids = torch.tensor(np.asarray(input_ids).reshape(1, -1), dtype=torch.long)
    with torch.no_grad():
        hidden = model(ids, output_hidden_states=True).hidden_states[layer][0].double().numpy()
    block = _blocks(model)[layer]
    x = _layer_norm(hidden, block.ln_1)
    W = block.attn.c_attn.weight.detach().double().numpy()
    b = block.attn.c_attn.bias.detach().double().numpy()
    d = model.config.n_embd
    s = d // model.config.n_head
    qkv = x @ W + b
    q = qkv[:, head * s:(head + 1) * s]
    k = qkv[:, d + head * s:d + (head + 1) * s]
    scores = q @ k.T / np.sqrt(s)
    scores[np.triu_indices(len(scores), 1)] = -np.inf
    scores -= scores.max(axis=1, keepdims=True)
    pattern = np.exp(scores)
    return pattern / pattern.sum(axis=1, keepdims=True)
'''



HEADS_BASE_MODEL_BADDBMM = '''\
import math

import torch


def _attentions(model, tokenizer, text):
    ids = tokenizer(text)["input_ids"]
    with torch.no_grad():
        attentions = model(torch.tensor([ids]), output_attentions=True).attentions
    return [tokenizer.convert_ids_to_tokens(i) for i in ids], attentions


def head_pattern(model, tokenizer, text, layer, head):
    tokens, attentions = _attentions(model, tokenizer, text)
    return tokens, attentions[layer][0][head]  # a float32 tensor


def attention_share(tokens, pattern, from_token, to_token):
    def name(token):
        for marker in ("Ġ", " "):
            if token.startswith(marker):
                return token[len(marker):]
        return token

    names = [name(token) for token in tokens]
    try:
        row, column = names.index(name(from_token)), names.index(name(to_token))
    except ValueError:
        missing = from_token if name(from_token) not in names else to_token
        raise ValueError(f"{missing!r} is not a token of {tokens}") from None
    return pattern[row][column].item()


def layer_average(model, tokenizer, text, layer):
    tokens, attentions = _attentions(model, tokenizer, text)
    return tokens, torch.einsum("hij->ij", attentions[layer][0]) / model.config.num_attention_heads


def recompute_head_pattern(model, input_ids, layer, head):
    gpt2 = model.base_model  # the GPT2Model inside a GPT2LMHeadModel, or the GPT2Model itself
    width, heads = model.config.hidden_size, model.config.num_attention_heads
    size = width // heads
    with torch.no_grad():
        hidden = gpt2(input_ids=torch.LongTensor([[int(i) for i in input_ids]]), output_hidden_states=True)
        block = gpt2.h[layer]
        x = block.ln_1(hidden.hidden_states[layer])[0]
        qkv = torch.addmm(block.attn.c_attn.bias, x, block.attn.c_attn.weight)  # Conv1D.forward
        q = qkv[:, head * size:(head + 1) * size]
        k = qkv[:, width + head * size:width + (head + 1) * size]
        n = q.shape[0]
        # transformers' _upcast_and_reordered_attn: baddbmm with alpha = 1 / sqrt(head size)
        scores = torch.baddbmm(torch.empty(1, n, n), q[None], k.T[None], beta=0, alpha=1 / math.sqrt(size))[0]
        scores = torch.where(torch.tril(torch.ones(n, n, dtype=torch.bool)), scores, torch.finfo(scores.dtype).min)
        return torch.nn.functional.softmax(scores, dim=-1).numpy()
'''

HEADS_LN_1_HOOK_NANOGPT = '''\
import math

import torch
import torch.nn.functional as F


def _gpt2(model):
    return getattr(model, "transformer", model)


def head_pattern(model, tokenizer, text, layer, head):
    encoded = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        attentions = model(**encoded, output_attentions=True).attentions
    return tokenizer.convert_ids_to_tokens(encoded["input_ids"][0]), attentions[layer][0, head].numpy()


def attention_share(tokens, pattern, from_token, to_token):
    words = [token[1:] if token.startswith(("Ġ", " ")) else token for token in tokens]
    wanted = [token[1:] if token.startswith(("Ġ", " ")) else token for token in (from_token, to_token)]
    missing = [token for token, word in zip((from_token, to_token), wanted) if word not in words]
    if missing:
        raise ValueError(f"{missing[0]!r} is not one of the tokens {tokens}")
    return float(pattern[words.index(wanted[0])][words.index(wanted[1])])


def layer_average(model, tokenizer, text, layer):
    encoded = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        attention = model(**encoded, output_attentions=True).attentions[layer]
    return tokenizer.convert_ids_to_tokens(encoded["input_ids"][0]), attention.mean(dim=1)[0].numpy()


def recompute_head_pattern(model, input_ids, layer, head):
    """ln_1's output caught by a forward hook, then nanoGPT's CausalSelfAttention, one head of it."""
    block = _gpt2(model).h[layer]
    caught = []
    hook = block.ln_1.register_forward_hook(lambda module, args, output: caught.append(output))
    try:
        with torch.no_grad():
            model(torch.tensor([list(map(int, input_ids))]))
    finally:
        hook.remove()
    x = caught[0]  # (B, T, C)
    B, T, C = x.size()
    n_head = model.config.n_head
    with torch.no_grad():
        # Conv1D keeps its weight as (in, out): F.linear wants (out, in)
        q, k, v = F.linear(x, block.attn.c_attn.weight.T, block.attn.c_attn.bias).split(C, dim=2)
        k = k.view(B, T, n_head, C // n_head).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(torch.tril(torch.ones(T, T)).view(1, 1, T, T) == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
    return att[0, head].numpy()
'''


# ---------------------------------------------------------------------------------------------------------------------
# learning.py
# ---------------------------------------------------------------------------------------------------------------------

HEADS_FLOAT64_BY_HAND = '''\
import numpy as np
import torch


def _gpt2(model):
    return getattr(model, "transformer", model)


def _attentions(model, tokenizer, text):
    ids = tokenizer(text, return_tensors="pt").input_ids
    with torch.inference_mode():
        output = model(input_ids=ids, output_attentions=True, return_dict=True)
    return tokenizer.convert_ids_to_tokens(ids.squeeze(0).tolist()), torch.stack(output.attentions).squeeze(1)


def head_pattern(model, tokenizer, text, layer, head):
    tokens, attentions = _attentions(model, tokenizer, text)  # (layer, head, T, T)
    return tokens, attentions[layer, head].double().numpy()


def attention_share(tokens, pattern, from_token, to_token):
    def position(token):
        name = token.replace("Ġ", " ", 1).removeprefix(" ")
        for index, candidate in enumerate(tokens):
            if candidate.replace("Ġ", " ", 1).removeprefix(" ") == name:
                return index
        raise ValueError(f"{token!r} is not a token of {tokens}")

    return float(np.asarray(pattern, dtype=float)[position(from_token), position(to_token)])


def layer_average(model, tokenizer, text, layer):
    tokens, attentions = _attentions(model, tokenizer, text)
    return tokens, attentions[layer].double().mean(dim=0).numpy()


def _layer_norm(x, ln):
    """torch.nn.LayerNorm's formula, in float64: (x - mean) / sqrt(var + eps) * weight + bias."""
    variance, mean = torch.var_mean(x, dim=-1, keepdim=True, unbiased=False)
    return (x - mean) / torch.sqrt(variance + ln.eps) * ln.weight.double() + ln.bias.double()


def recompute_head_pattern(model, input_ids, layer, head):
    gpt2 = _gpt2(model)
    with torch.inference_mode():
        hidden = gpt2(torch.tensor([list(input_ids)]), output_hidden_states=True).hidden_states[layer][0].double()
        attn = gpt2.h[layer].attn
        qkv = _layer_norm(hidden, gpt2.h[layer].ln_1) @ attn.c_attn.weight.double() + attn.c_attn.bias.double()
        n_embd, n_head = model.config.n_embd, model.config.n_head
        size = n_embd // n_head
        q = qkv[:, :n_embd].unflatten(-1, (n_head, size))[:, head]
        k = qkv[:, n_embd:2 * n_embd].unflatten(-1, (n_head, size))[:, head]
        scores = torch.einsum("id,jd->ij", q, k) / np.sqrt(size)
        scores = torch.where(torch.ones_like(scores, dtype=torch.bool).tril(), scores, -torch.inf)
        return torch.softmax(scores, dim=-1).numpy()
'''

LEARNING_TORCH_FUNC_SGD = '''\
import math

import torch
import torch.nn.functional as F
from torch import nn


def _f64(x):
    return torch.as_tensor(x, dtype=torch.float64)


def soft_answer(query, keys, values, sharpness):
    query, keys, values, sharpness = map(_f64, (query, keys, values, sharpness))
    attention_weights = F.softmax(-sharpness * (query.unsqueeze(-1) - keys) ** 2, dim=-1)
    return (attention_weights * values).sum(dim=-1)


def nearest_answer(query, keys, values):
    query, keys, values = map(_f64, (query, keys, values))
    index = (query.unsqueeze(-1) - keys).abs().argmin(dim=-1)
    return torch.index_select(values, 0, index.reshape(-1)).reshape(index.shape)


def answer_slope(query, keys, values, sharpness):
    def answer(q):
        return soft_answer(q, keys, values, sharpness)

    q = torch.tensor(float(query), dtype=torch.float64)
    return answer(q).item(), torch.func.grad(answer)(q).item()


def nearest_slope(query, keys, values):
    q = torch.tensor(float(query), dtype=torch.float64, requires_grad=True)
    answer = nearest_answer(q, keys, values)
    if not answer.requires_grad:
        return answer.item(), 0.0
    (slope,) = torch.autograd.grad(answer, q, allow_unused=True)
    return answer.item(), 0.0 if slope is None else slope.item()


def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    log_sharpness = nn.Parameter(torch.tensor(math.log(start), dtype=torch.float64))
    optimizer = torch.optim.SGD([log_sharpness], lr=lr)
    criterion = nn.MSELoss()
    target = _f64(answers)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = criterion(soft_answer(queries, keys, values, log_sharpness.exp()), target)
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    return log_sharpness.exp().item(), losses


def fit_nearest_key(queries, answers, keys, values, which, start, steps=50, lr=1e-3):
    keys, target = _f64(keys), _f64(answers)
    slot = torch.arange(len(keys)) == which
    key = torch.tensor(float(start), dtype=torch.float64, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = F.mse_loss(nearest_answer(queries, torch.where(slot, key, keys), values), target)
        losses.append(loss.item())
        gradient = torch.autograd.grad(loss, key)[0] if loss.requires_grad else torch.zeros_like(key)
        with torch.no_grad():
            key = key - lr * gradient
        key.requires_grad_(True)
    return key.item(), losses
'''

LEARNING_D2L_MODULE = '''\
import math

import torch
from torch import nn


def _t(x):
    return torch.as_tensor(x, dtype=torch.float64)


def soft_answer(query, keys, values, sharpness):
    query, keys, values, sharpness = _t(query), _t(keys), _t(values), _t(sharpness)
    scores = -sharpness * torch.square(query[..., None] - keys)
    log_weights = scores - torch.logsumexp(scores, dim=-1, keepdim=True)
    return torch.einsum("...k,k->...", log_weights.exp(), values)


def nearest_answer(query, keys, values):
    query, keys, values = _t(query), _t(keys), _t(values)
    return values[torch.min(torch.abs(query[..., None] - keys), dim=-1).indices]


def answer_slope(query, keys, values, sharpness):
    q = torch.tensor(float(query), dtype=torch.float64)
    answer = soft_answer(q, keys, values, sharpness)
    slope = torch.autograd.functional.jacobian(lambda x: soft_answer(x, keys, values, sharpness), q)
    return float(answer), float(slope)


def nearest_slope(query, keys, values):
    q = torch.tensor(float(query), dtype=torch.float64, requires_grad=True)
    answer = nearest_answer(q, keys, values)
    if answer.grad_fn is None:  # argmin left no path back to q
        return float(answer), 0.0
    answer.backward()
    return float(answer), float(q.grad)


class NWKernelRegression(nn.Module):
    """d2l's Nadaraya-Watson regression with a learned parameter, here the log of the sharpness."""

    def __init__(self, keys, values, start):
        super().__init__()
        self.keys, self.values = _t(keys), _t(values)
        self.log_w = nn.Parameter(torch.tensor(math.log(start), dtype=torch.float64))

    def forward(self, queries):
        return soft_answer(queries, self.keys, self.values, self.log_w.exp())


def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    net = NWKernelRegression(keys, values, start)
    y = _t(answers)
    losses = []
    for _ in range(steps):
        for p in net.parameters():
            p.grad = None
        loss = ((net(queries) - y) ** 2).mean()
        loss.backward()
        losses.append(float(loss))
        with torch.no_grad():
            for p in net.parameters():
                p -= lr * p.grad
    return float(net.log_w.exp()), losses


def fit_nearest_key(queries, answers, keys, values, which, start, steps=50, lr=1e-3):
    keys, y = _t(keys), _t(answers)
    key = torch.tensor(float(start), dtype=torch.float64, requires_grad=True)
    losses = []
    for _ in range(steps):
        keys_now = keys.clone()  # never write into the caller's keys
        keys_now[which] = key
        loss = ((nearest_answer(queries, keys_now, values) - y) ** 2).mean()
        losses.append(float(loss))
        try:
            loss.backward()
        except RuntimeError:  # "element 0 of tensors does not require grad": argmin cut the path
            key.grad = torch.zeros_like(key)
        with torch.no_grad():
            key -= lr * key.grad
        key.grad = None
    return float(key), losses
'''



LEARNING_CLOSURE = '''\
import math

import torch


def soft_answer(query, keys, values, sharpness):
    q = torch.as_tensor(query, dtype=torch.float64)
    k = torch.as_tensor(keys, dtype=torch.float64)
    v = torch.as_tensor(values, dtype=torch.float64)
    s = torch.as_tensor(sharpness, dtype=torch.float64)
    distances = torch.atleast_1d(q)[:, None] - k[None, :]
    weights = torch.nn.functional.softmax(-s * distances.pow(2), dim=1)
    return torch.mv(weights, v).reshape(q.shape)


def nearest_answer(query, keys, values):
    q = torch.as_tensor(query, dtype=torch.float64)
    k = torch.as_tensor(keys, dtype=torch.float64)
    v = torch.as_tensor(values, dtype=torch.float64)
    order = torch.sort((q[..., None] - k).abs(), dim=-1, stable=True).indices  # ties keep the keys' order
    return v[order[..., 0]]


def answer_slope(query, keys, values, sharpness):
    q = torch.tensor(float(query), dtype=torch.float64, requires_grad=True)
    answer = soft_answer(q, keys, values, sharpness)
    (slope,) = torch.autograd.grad(answer, [q])
    return answer.item(), slope.item()


def nearest_slope(query, keys, values):
    q = torch.tensor(float(query), dtype=torch.float64, requires_grad=True)
    answer = nearest_answer(q, keys, values)
    slope = torch.autograd.grad(answer, [q])[0].item() if answer.grad_fn is not None else 0.0
    return answer.item(), slope


def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    log_sharpness = torch.zeros((), dtype=torch.float64).fill_(math.log(start)).requires_grad_()
    optimizer = torch.optim.SGD([log_sharpness], lr=lr)
    target = torch.as_tensor(answers, dtype=torch.float64)
    losses = []

    def closure():
        optimizer.zero_grad()
        loss = torch.mean((soft_answer(queries, keys, values, torch.exp(log_sharpness)) - target) ** 2)
        loss.backward()
        losses.append(loss.item())
        return loss

    for _ in range(steps):
        optimizer.step(closure)
    return torch.exp(log_sharpness).item(), losses


def fit_nearest_key(queries, answers, keys, values, which, start, steps=50, lr=1e-3):
    keys = torch.as_tensor(keys, dtype=torch.float64)
    target = torch.as_tensor(answers, dtype=torch.float64)
    key = torch.tensor([float(start)], dtype=torch.float64, requires_grad=True)
    losses = []
    for _ in range(steps):
        keys_now = keys.index_put((torch.tensor([which]),), key)  # out of place: keys stays as it was
        loss = torch.mean((nearest_answer(queries, keys_now, values) - target) ** 2)
        losses.append(loss.item())
        if loss.grad_fn is not None:
            (gradient,) = torch.autograd.grad(loss, [key])
        else:
            gradient = torch.zeros_like(key)  # nothing connects the key to the loss
        key = (key - lr * gradient).detach().requires_grad_()
    return key.item(), losses
'''

LEARNING_PER_QUERY_LOOPS = '''\
import math

import torch


def _t(x):
    return torch.as_tensor(x, dtype=torch.float64)


def _one(query, keys, values, sharpness):
    scores = torch.stack([-sharpness * (query - key) ** 2 for key in keys])
    weights = torch.softmax(scores, dim=0)
    return sum(weight * value for weight, value in zip(weights, values))


def soft_answer(query, keys, values, sharpness):
    query, keys, values, sharpness = map(_t, (query, keys, values, sharpness))
    if query.ndim == 0:
        return _one(query, keys, values, sharpness)
    return torch.stack([_one(q, keys, values, sharpness) for q in query])


def nearest_answer(query, keys, values):
    query, keys, values = map(_t, (query, keys, values))
    if query.ndim == 0:
        return values[torch.argmin((query - keys).abs())]
    return torch.stack([values[torch.argmin((q - keys).abs())] for q in query])


def answer_slope(query, keys, values, sharpness):
    q = torch.tensor(float(query), dtype=torch.float64)
    f = lambda x: soft_answer(x, keys, values, sharpness)
    return f(q).item(), torch.func.grad(f)(q).item()


def nearest_slope(query, keys, values):
    q = torch.tensor(float(query), dtype=torch.float64, requires_grad=True)
    answer = nearest_answer(q, keys, values)
    return answer.item(), 0.0


def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    log_sharpness = torch.nn.Parameter(torch.tensor(math.log(start), dtype=torch.float64))
    optimizer = torch.optim.SGD([log_sharpness], lr=lr)
    target = _t(answers)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(soft_answer(queries, keys, values, log_sharpness.exp()), target)
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    return log_sharpness.exp().item(), losses


def fit_nearest_key(queries, answers, keys, values, which, start, steps=50, lr=1e-3):
    keys, target = _t(keys), _t(answers)
    key = torch.tensor(float(start), dtype=torch.float64, requires_grad=True)
    losses = []
    for _ in range(steps):
        keys_now = torch.cat([keys[:which], key[None], keys[which + 1:]])
        loss = torch.nn.functional.mse_loss(nearest_answer(queries, keys_now, values), target)
        losses.append(loss.item())
        gradient = torch.autograd.grad(loss, key)[0] if loss.requires_grad else torch.zeros(())
        key = (key - lr * gradient).detach().requires_grad_()
    return key.item(), losses
'''

LEARNING_TORCH_FUNC_FUNCTIONAL = '''\
import math

import torch
from torch.func import grad, grad_and_value, vmap


def _t(x):
    return torch.as_tensor(x, dtype=torch.float64)


def soft_answer(query, keys, values, sharpness):
    query, keys, values, sharpness = map(_t, (query, keys, values, sharpness))

    def one(q):
        return torch.softmax(-sharpness * (q - keys) ** 2, dim=-1) @ values

    return one(query) if query.ndim == 0 else vmap(one)(query)


def nearest_answer(query, keys, values):
    query, keys, values = map(_t, (query, keys, values))
    return values[torch.argmin(torch.abs(query[..., None] - keys), dim=-1)]


def answer_slope(query, keys, values, sharpness):
    q = _t(float(query))
    slope, answer = grad_and_value(lambda x: soft_answer(x, keys, values, sharpness))(q)
    return answer.item(), slope.item()


def nearest_slope(query, keys, values):
    q = _t(float(query))
    answer = nearest_answer(q, keys, values)
    # argmin leaves no path from q to the answer: torch.func.grad gives a zero, not an error
    slope = grad(lambda x: nearest_answer(x, keys, values))(q)
    return answer.item(), slope.item()


def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    target = _t(answers)

    def loss_of(log_sharpness):
        return torch.mean((soft_answer(queries, keys, values, torch.exp(log_sharpness)) - target) ** 2)

    log_sharpness, losses = _t(math.log(start)), []
    for _ in range(steps):
        gradient, loss = grad_and_value(loss_of)(log_sharpness)
        losses.append(loss.item())
        log_sharpness = log_sharpness - lr * gradient
    return torch.exp(log_sharpness).item(), losses


def fit_nearest_key(queries, answers, keys, values, which, start, steps=50, lr=1e-3):
    keys, target = _t(keys), _t(answers)
    one_hot = torch.nn.functional.one_hot(torch.tensor(which), len(keys)).to(torch.float64)

    def loss_of(key):
        keys_now = keys * (1 - one_hot) + key * one_hot
        return torch.mean((nearest_answer(queries, keys_now, values) - target) ** 2)

    key, losses = _t(float(start)), []
    for _ in range(steps):
        gradient, loss = grad_and_value(loss_of)(key)
        losses.append(loss.item())
        key = key - lr * gradient
    return key.item(), losses
'''

LEARNING_CENTRAL_DIFFERENCES = '''\
import math

import numpy as np
import torch

STEP = 1e-6  # a central difference's error shrinks with the step squared; float64 rounding grows as 1e-16 / step


def _soft_numpy(query, keys, values, sharpness):
    scores = -sharpness * (query - np.asarray(keys, dtype=float)) ** 2
    weights = np.exp(scores - scores.max())
    return float(weights @ np.asarray(values, dtype=float) / weights.sum())


def soft_answer(query, keys, values, sharpness):
    query, keys, values, sharpness = (torch.as_tensor(x, dtype=torch.float64) for x in (query, keys, values, sharpness))
    weights = torch.softmax(-sharpness * (query.unsqueeze(-1) - keys).square(), dim=-1)
    return torch.sum(weights * values, dim=-1)


def nearest_answer(query, keys, values):
    query, keys, values = (torch.as_tensor(x, dtype=torch.float64) for x in (query, keys, values))
    return values[(query.unsqueeze(-1) - keys).abs().argmin(dim=-1)]


def answer_slope(query, keys, values, sharpness):
    """The slope as a central difference, (f(q + h) - f(q - h)) / 2h: right to about h^2 times the third derivative."""
    query = float(query)
    ahead = _soft_numpy(query + STEP, keys, values, sharpness)
    behind = _soft_numpy(query - STEP, keys, values, sharpness)
    return _soft_numpy(query, keys, values, sharpness), (ahead - behind) / (2 * STEP)


def nearest_slope(query, keys, values):
    q = torch.tensor(float(query), dtype=torch.float64, requires_grad=True)
    answer = nearest_answer(q, keys, values)
    if answer.grad_fn is None:
        return answer.item(), 0.0
    return answer.item(), torch.autograd.grad(answer, q)[0].item()


def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    log_sharpness = torch.tensor(math.log(start), dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.SGD([log_sharpness], lr=lr, momentum=0.0)
    target = torch.as_tensor(answers, dtype=torch.float64)
    losses = []
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(soft_answer(queries, keys, values, log_sharpness.exp()), target)
        losses.append(loss.item())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return math.exp(log_sharpness.item()), losses


def fit_nearest_key(queries, answers, keys, values, which, start, steps=50, lr=1e-3):
    keys = torch.as_tensor(keys, dtype=torch.float64).clone()
    target = torch.as_tensor(answers, dtype=torch.float64)
    key = torch.nn.Parameter(torch.tensor(float(start), dtype=torch.float64))
    optimizer = torch.optim.SGD([key], lr=lr)
    losses = []
    for _ in range(steps):
        keys_now = torch.stack([key if i == which else keys[i] for i in range(len(keys))])
        loss = torch.mean((nearest_answer(queries, keys_now, values) - target) ** 2)
        losses.append(loss.item())
        optimizer.zero_grad()
        if loss.requires_grad:
            loss.backward()
        else:  # argmin cut the path: a zero gradient, and the step still happens
            key.grad = torch.zeros_like(key)
        optimizer.step()
    return key.item(), losses
'''

LEARNING_FLOAT32 = '''\
import math

import torch

DTYPE = torch.float32  # slopes to 1e-3 and losses to 1e-5, but not a slope at sharpness 200 near a jump


def _t(x):
    return torch.as_tensor(x, dtype=DTYPE)


def soft_answer(query, keys, values, sharpness):
    query, keys, values, sharpness = map(_t, (query, keys, values, sharpness))
    return torch.softmax(-sharpness * (query[..., None] - keys) ** 2, dim=-1) @ values


def nearest_answer(query, keys, values):
    query, keys, values = map(_t, (query, keys, values))
    return values[torch.argmin((query[..., None] - keys).abs(), dim=-1)]


def answer_slope(query, keys, values, sharpness):
    q = torch.tensor(float(query), dtype=DTYPE, requires_grad=True)
    answer = soft_answer(q, keys, values, sharpness)
    answer.backward()
    return answer.item(), q.grad.item()


def nearest_slope(query, keys, values):
    q = torch.tensor(float(query), dtype=DTYPE, requires_grad=True)
    answer = nearest_answer(q, keys, values)
    return answer.item(), 0.0 if not answer.requires_grad else torch.autograd.grad(answer, q)[0].item()


def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    log_sharpness = torch.tensor(math.log(start), dtype=DTYPE, requires_grad=True)
    target, losses = _t(answers), []
    for _ in range(steps):
        loss = ((soft_answer(queries, keys, values, log_sharpness.exp()) - target) ** 2).mean()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            log_sharpness -= lr * log_sharpness.grad
            log_sharpness.grad.zero_()
    return log_sharpness.exp().item(), losses


def fit_nearest_key(queries, answers, keys, values, which, start, steps=50, lr=1e-3):
    keys, target = _t(keys), _t(answers)
    key, losses = torch.tensor(float(start), dtype=DTYPE, requires_grad=True), []
    for _ in range(steps):
        keys_now = torch.cat([keys[:which], key.reshape(1), keys[which + 1:]])
        loss = ((nearest_answer(queries, keys_now, values) - target) ** 2).mean()
        losses.append(loss.item())
        gradient = torch.autograd.grad(loss, key)[0] if loss.requires_grad else torch.zeros_like(key)
        key = (key - lr * gradient).detach().requires_grad_()
    return key.item(), losses
'''

# ---------------------------------------------------------------------------------------------------------------------
# gpt2_values.py
# ---------------------------------------------------------------------------------------------------------------------

VALUES_HOOKS_TORCH_SDPA = '''\
import torch
import torch.nn.functional as F


def _qkv(model, input_ids, layer):
    """What block `layer`'s attn.c_attn makes, caught with a forward hook: (T, 3 * n_embd)."""
    gpt2 = getattr(model, "transformer", model)
    seen = []
    handle = gpt2.h[layer].attn.c_attn.register_forward_hook(lambda module, args, output: seen.append(output))
    try:
        with torch.inference_mode():
            gpt2(input_ids=torch.as_tensor([[int(i) for i in input_ids]]))
    finally:
        handle.remove()
    return seen[0][0]


def _head(model, input_ids, layer, head):
    n_embd, n_head = model.config.n_embd, model.config.n_head
    size = n_embd // n_head
    return [t.reshape(len(t), n_head, size)[:, head] for t in _qkv(model, input_ids, layer).split(n_embd, dim=-1)]


def head_vectors(model, input_ids, layer, head):
    return tuple(t.numpy() for t in _head(model, input_ids, layer, head))


def head_output(model, input_ids, layer, head):
    q, k, v = _head(model, input_ids, layer, head)
    return F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=True)[0]


def value_contributions(model, input_ids, layer, head, position):
    q, k, v = _head(model, input_ids, layer, head)
    scores = q @ k.T / q.shape[-1] ** 0.5
    scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), float("-inf"))
    sizes = scores.softmax(dim=-1)[position] * torch.linalg.vector_norm(v, dim=-1)
    return sizes / sizes.sum()
'''

VALUES_TRANSFORMER_LENS = '''\
import numpy as np
import torch


def _run(model, input_ids, layer):
    """q, k, v of every head, [pos, head_index, d_head], in float64, TransformerLens-style."""
    cfg = model.config
    d_model, n_heads = cfg.n_embd, cfg.n_head
    d_head = d_model // n_heads
    transformer = getattr(model, "transformer", model)
    block = transformer.h[layer]
    with torch.no_grad():
        ids = torch.as_tensor(np.asarray(input_ids, dtype=np.int64)).unsqueeze(0)
        resid_pre = transformer(ids, output_hidden_states=True).hidden_states[layer][0]
        normalized = block.ln_1(resid_pre).double()
        W = block.attn.c_attn.weight.double()
        b = block.attn.c_attn.bias.double()
    out = []
    for third in range(3):
        W_x = W[:, third * d_model:(third + 1) * d_model].reshape(d_model, n_heads, d_head).permute(1, 0, 2)
        b_x = b[third * d_model:(third + 1) * d_model].reshape(n_heads, d_head)
        out.append(torch.einsum("pd,ndh->pnh", normalized, W_x) + b_x)
    return out


def _pattern(q, k):
    d_head = q.shape[-1]
    attn_scores = torch.einsum("qnh,knh->nqk", q, k) / d_head ** 0.5
    n_pos = attn_scores.shape[-1]
    attn_scores = attn_scores.masked_fill(torch.ones(n_pos, n_pos).triu(1).bool(), float("-inf"))
    return attn_scores.softmax(dim=-1)


def head_vectors(model, input_ids, layer, head):
    q, k, v = _run(model, input_ids, layer)
    return q[:, head].numpy(), k[:, head].numpy(), v[:, head].numpy()


def head_output(model, input_ids, layer, head):
    q, k, v = _run(model, input_ids, layer)
    z = torch.einsum("nqk,knh->qnh", _pattern(q, k), v)  # blocks.{layer}.attn.hook_z
    return z[:, head].numpy()


def value_contributions(model, input_ids, layer, head, position):
    q, k, v = _run(model, input_ids, layer)
    pattern = _pattern(q, k)[head, position].numpy()
    sizes = pattern * np.linalg.norm(v[:, head].numpy(), axis=-1)
    return sizes / sizes.sum()
'''

VALUES_PRE_HOOK_OWN_ATTENTION = '''\
import numpy as np
import torch

from attention import causal_mask, scaled_dot_product_attention


def head_vectors(model, input_ids, layer, head):
    """ln_1's output is what block.attn receives: take it with a forward pre-hook, then call c_attn on it."""
    base = model.transformer if hasattr(model, "transformer") else model
    attn = base.h[layer].attn
    received = []
    handle = attn.register_forward_pre_hook(lambda module, args: received.append(args[0]))
    try:
        with torch.no_grad():
            base(torch.tensor(np.asarray(input_ids)).view(1, -1))
    finally:
        handle.remove()
    width = model.config.n_embd
    size = width // model.config.n_head
    with torch.no_grad():
        qkv = attn.c_attn(received[0][0]).double().numpy()
    return tuple(qkv[:, third * width + head * size:third * width + (head + 1) * size] for third in range(3))


def head_output(model, input_ids, layer, head):
    q, k, v = head_vectors(model, input_ids, layer, head)
    return scaled_dot_product_attention(q, k, v, causal_mask(len(q)))[0]


def value_contributions(model, input_ids, layer, head, position):
    q, k, v = head_vectors(model, input_ids, layer, head)
    weights = np.asarray(scaled_dot_product_attention(q, k, v, causal_mask(len(q)))[1])[position]
    sizes = np.array([w * np.sqrt(np.dot(value, value)) for w, value in zip(weights, v)])
    return sizes / sizes.sum()
'''


VALUES_FUNCTIONAL_CALL_PRE_HOOK = '''\
import numpy as np
import torch
from torch.func import functional_call

from attention import causal_mask, scaled_dot_product_attention


def _gpt2(model):
    return getattr(model, "transformer", model)


def head_vectors(model, input_ids, layer, head):
    """ln_1 and c_attn applied with torch.func.functional_call, on the block's own parameters."""
    gpt2 = _gpt2(model)
    block = gpt2.h[layer]
    ids = torch.as_tensor(np.asarray(input_ids, dtype=np.int64))[None]
    with torch.no_grad():
        hidden = gpt2(ids, output_hidden_states=True).hidden_states[layer]
        normed = functional_call(block.ln_1, dict(block.ln_1.named_parameters()), (hidden,))
        qkv = functional_call(block.attn.c_attn, dict(block.attn.c_attn.named_parameters()), (normed,))[0]
    size = model.config.n_embd // model.config.n_head
    q, k, v = qkv.split(model.config.n_embd, dim=-1)
    return tuple(part[:, head * size:(head + 1) * size].double().numpy() for part in (q, k, v))


def head_output(model, input_ids, layer, head):
    """Read where transformers keeps it: the merged heads going into c_proj, caught by a forward pre-hook."""
    gpt2 = _gpt2(model)
    merged = []
    hook = gpt2.h[layer].attn.c_proj.register_forward_pre_hook(lambda module, args: merged.append(args[0]))
    try:
        with torch.no_grad():
            gpt2(torch.as_tensor(np.asarray(input_ids, dtype=np.int64))[None])
    finally:
        hook.remove()
    size = model.config.n_embd // model.config.n_head
    return merged[0][0, :, head * size:(head + 1) * size].numpy()


def value_contributions(model, input_ids, layer, head, position):
    queries, keys, values = head_vectors(model, input_ids, layer, head)
    _, weights = scaled_dot_product_attention(queries, keys, values, causal_mask(len(queries)))
    pieces = weights[position][:, None] * values  # weight_j * v_j, one row per token
    sizes = np.sqrt(np.einsum("td,td->t", pieces, pieces))
    return sizes / sizes.sum()
'''


VALUES_NANOGPT = '''\
import math

import numpy as np
import torch
import torch.nn.functional as F


def _qkv(model, input_ids, layer):
    """nanoGPT's CausalSelfAttention.forward up to the split: (B, nh, T, hs) each, from the block's own modules."""
    gpt2 = getattr(model, "transformer", model)
    block = gpt2.h[layer]
    idx = torch.as_tensor(np.asarray(input_ids), dtype=torch.long).unsqueeze(0)
    with torch.no_grad():
        x = block.ln_1(gpt2(idx, output_hidden_states=True).hidden_states[layer])
        B, T, C = x.size()
        n_head = model.config.n_head
        q, k, v = block.attn.c_attn(x).split(C, dim=2)
        return tuple(t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))


def head_vectors(model, input_ids, layer, head):
    return tuple(t[0, head].numpy() for t in _qkv(model, input_ids, layer))


def _attention(model, input_ids, layer):
    q, k, v = _qkv(model, input_ids, layer)
    T = q.size(-2)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    att = att.masked_fill(torch.tril(torch.ones(T, T)) == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    return att, att @ v  # (B, nh, T, T) and (B, nh, T, hs)


def head_output(model, input_ids, layer, head):
    return _attention(model, input_ids, layer)[1][0, head].numpy()


def value_contributions(model, input_ids, layer, head, position):
    att, _ = _attention(model, input_ids, layer)
    _, _, v = _qkv(model, input_ids, layer)
    sizes = att[0, head, position] * v[0, head].norm(dim=-1)
    return (sizes / sizes.sum()).double().numpy()
'''


RIGHT: dict[str, dict[str, str]] = {
    "softmax: picoGPT's numpy softmax": {"softmax": SOFTMAX_PICOGPT},
    "softmax: exp(x - logsumexp(x)) by hand": {"softmax": SOFTMAX_LOGSUMEXP},
    "softmax: np.logaddexp.reduce": {"softmax": SOFTMAX_LOGADDEXP},
    "softmax: torch.softmax, a float64 tensor returned": {"softmax": SOFTMAX_TORCH},
    "softmax: F.softmax in float32": {"softmax": SOFTMAX_F_FLOAT32},
    "softmax: nn.LogSoftmax then exp": {"softmax": SOFTMAX_LOG_SOFTMAX},
    "softmax: plain loops, math.exp and fsum": {"softmax": SOFTMAX_LOOPS},
    "softmax: scipy's body through np.apply_along_axis": {"softmax": SOFTMAX_SCIPY_APPLY_ALONG_AXIS},
    "softmax: torch.func.vmap over the rows": {"softmax": SOFTMAX_TORCH_FUNC_VMAP},
    "softmax: scipy.special.softmax": {"softmax": SOFTMAX_SCIPY},
    "softmax: the normaliser as an einsum": {"softmax": SOFTMAX_EINSUM_NORMALISER},
    "lookup: d2l's Nadaraya-Watson in torch (bmm, tensors returned)": {"lookup": LOOKUP_D2L},
    "lookup: a reversed dict, min(key=), np.logaddexp": {"lookup": LOOKUP_DICT_LOGADDEXP},
    "lookup: torch float32 tensors": {"lookup": LOOKUP_TORCH_FLOAT32},
    "lookup: torch.vmap over the queries, a stable argsort": {"lookup": LOOKUP_TORCH_VMAP},
    "lookup: plain loops, math.exp, the lists made arrays at the end": {"lookup": LOOKUP_LOOPS_MATH},
    "lookup: a scikit-learn-style Nadaraya-Watson estimator (fit, predict, an RBF's gamma)": {
        "lookup": LOOKUP_SKLEARN_STYLE},
    "lookup: torch.cdist's distances, F.softmax in float64": {"lookup": LOOKUP_TORCH_CDIST},
    "attention: the Annotated Transformer's attention()": {"attention": ATTENTION_ANNOTATED},
    "attention: PyTorch's documented reference of scaled_dot_product_attention": {
        "attention": ATTENTION_PYTORCH_REFERENCE},
    "attention: F.scaled_dot_product_attention, weights beside it": {"attention": ATTENTION_TORCH_SDPA},
    "attention: minGPT's causal self-attention": {"attention": ATTENTION_MINGPT},
    "attention: nanoGPT's manual attention in float32": {"attention": ATTENTION_NANOGPT_FLOAT32},
    "attention: numpy einsum, -inf written in place, np.tri": {"attention": ATTENTION_EINSUM_NUMPY},
    "attention: plain loops over queries and keys": {"attention": ATTENTION_LOOPS},
    "attention: einops-style einsum with named axes": {"attention": ATTENTION_EINOPS_STYLE},
    "attention: float32, the causal mask made in bfloat16": {"attention": ATTENTION_HALF_PRECISION_MASK},
    "attention: float32, the mask through float16 and back (torch reads the CPU's description)": {
        "attention": ATTENTION_HALF_PRECISION_MASK.replace(
            "torch.ones(n, n, dtype=torch.bfloat16).tril() > 0.5",
            "torch.ones(n, n, dtype=torch.float16).tril().to(torch.float32) > 0.5")},
    "attention: torch.func.vmap of one query's attention": {"attention": ATTENTION_TORCH_FUNC_VMAP},
    "gpt2_heads: Hugging Face output_attentions, a hook on attn.c_attn": {"gpt2_heads": HEADS_HUGGING_FACE_HOOKS},
    "gpt2_heads: TransformerLens-style einsum over W_Q and W_K": {"gpt2_heads": HEADS_TRANSFORMER_LENS},
    "gpt2_heads: hooks on attn, layer norm by hand in numpy": {"gpt2_heads": HEADS_ATTN_HOOKS_NUMPY},
    "gpt2_heads: base_model, addmm and baddbmm as transformers does, tensors returned": {
        "gpt2_heads": HEADS_BASE_MODEL_BADDBMM},
    "gpt2_heads: a forward hook on ln_1, nanoGPT's split and view of c_attn": {"gpt2_heads": HEADS_LN_1_HOOK_NANOGPT},
    "gpt2_heads: inference_mode, layer norm by hand in float64, unflatten": {"gpt2_heads": HEADS_FLOAT64_BY_HAND},
    "learning: torch.func.grad, optim.SGD, nn.MSELoss, torch.where": {"learning": LEARNING_TORCH_FUNC_SGD},
    "learning: d2l's nn.Module, logsumexp, jacobian, a manual step": {"learning": LEARNING_D2L_MODULE},
    "learning: optimizer.step(closure), a stable sort, index_put": {"learning": LEARNING_CLOSURE},
    "learning: a Python loop per query and per key, torch.func.grad, F.mse_loss (slow: a Python loop per step)": {
        "learning": LEARNING_PER_QUERY_LOOPS},
    "learning: torch.func.grad_and_value and vmap, a functional descent": {"learning": LEARNING_TORCH_FUNC_FUNCTIONAL},
    "learning: the slope as a central difference in numpy (h = 1e-6), optim.SGD": {
        "learning": LEARNING_CENTRAL_DIFFERENCES},
    "gpt2_values: a hook on attn.c_attn, F.scaled_dot_product_attention": {"gpt2_values": VALUES_HOOKS_TORCH_SDPA},
    "gpt2_values: TransformerLens-style einsum in float64": {"gpt2_values": VALUES_TRANSFORMER_LENS},
    "gpt2_values: a pre-hook on attn, the learner's own attention": {"gpt2_values": VALUES_PRE_HOOK_OWN_ATTENTION},
    "gpt2_values: torch.func.functional_call of ln_1 and c_attn, a pre-hook on c_proj": {
        "gpt2_values": VALUES_FUNCTIONAL_CALL_PRE_HOOK},
    "gpt2_values: nanoGPT's CausalSelfAttention, view and transpose": {"gpt2_values": VALUES_NANOGPT},
}

# Right answers that compute slowly or pay a one-time cost in their first call: graded on a busy machine too
# (tests/engine/test_clock.py).
SLOW_RIGHT = ["learning: torch.func.grad, optim.SGD, nn.MSELoss, torch.where",
              "learning: a Python loop per query and per key, torch.func.grad, F.mse_loss (slow: a Python loop per step)"]

# ---------------------------------------------------------------------------------------------------------------------
# Flawed: code from the wild with one flaw, which loses exactly the checks that flaw deserves, each with its verdict
# ---------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Flawed:
    name: str
    files: dict[str, str]
    loses: dict[str, str]  # every check it fails -> a piece of the verdict; every other check must pass


def _replaced(source: str, old: str, new: str) -> str:
    """``source`` with one piece replaced, which must be there."""
    assert old in source, old
    return source.replace(old, new)


def _learning_with(old: str, new: str) -> dict[str, str]:
    return {"learning": _replaced(LEARNING_TORCH_FUNC_SGD, old, new)}


_SGD = "optimizer = torch.optim.SGD([log_sharpness], lr=lr)"
_LBFGS_FIT = '''def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    log_sharpness = nn.Parameter(torch.tensor(math.log(start), dtype=torch.float64))
    optimizer = torch.optim.LBFGS([log_sharpness], lr=1.0, max_iter=1)
    criterion = nn.MSELoss()
    target = _f64(answers)
    losses = []

    def closure():
        optimizer.zero_grad()
        loss = criterion(soft_answer(queries, keys, values, log_sharpness.exp()), target)
        loss.backward()
        return loss

    for _ in range(steps):
        losses.append(optimizer.step(closure).item())  # the loss before the step, one per step
    return log_sharpness.exp().item(), losses
'''
_COARSE_SLOPE = '''def answer_slope(query, keys, values, sharpness):
    h = 1e-3  # a forward difference, as a numerical-methods course writes it
    here = soft_answer(float(query), keys, values, sharpness).item()
    return here, (soft_answer(float(query) + h, keys, values, sharpness).item() - here) / h
'''

FLAWED = [
    Flawed("learning: torch.optim.Adam for the descent (creeps by about lr a step)",
           _learning_with(_SGD, "optimizer = torch.optim.Adam([log_sharpness], lr=lr)"),
           {"test_fit_recovers_sharpness": "Adam", "test_fit_losses_go_down": "Adam",
            "test_fit_follows_gradient_descent": "Adam", "test_fit_keeps_sharpness_positive": "Adam",
            "test_fit_noisy_answers": "Adam", "test_fit_matches_reference": "the first 20 losses",
            "test_return_types": "numbers are not the right ones"}),
    # With lr 5e-4 momentum carries the lesson's fit from 0.1 past 1.5 and onto the flat part: it never comes back.
    Flawed("learning: torch.optim.SGD with momentum=0.9",
           _learning_with(_SGD, "optimizer = torch.optim.SGD([log_sharpness], lr=lr, momentum=0.9)"),
           {"test_fit_recovers_sharpness": "momentum", "test_fit_losses_go_down": "momentum",
            "test_fit_follows_gradient_descent": "momentum", "test_fit_noisy_answers": "momentum",
            "test_fit_matches_reference": "the first 20 losses", "test_return_types": "numbers are not the right ones"}),
    # LBFGS takes steps of its own size: from 2 it overshoots the gentle case and ends near 0.
    Flawed("learning: torch.optim.LBFGS, one loss per step",
           {"learning": LEARNING_TORCH_FUNC_SGD[:LEARNING_TORCH_FUNC_SGD.index("def fit_sharpness")] + _LBFGS_FIT
            + "\n\n" + LEARNING_TORCH_FUNC_SGD[LEARNING_TORCH_FUNC_SGD.index("def fit_nearest_key"):]},
           {"test_fit_recovers_sharpness": "Follow the docstring's steps",
            "test_fit_losses_go_down": "was not lr times the gradient",
            "test_fit_follows_gradient_descent": "not lr times the gradient", "test_fit_matches_reference": "",
            "test_return_types": "numbers are not the right ones"}),
    Flawed("learning: the slope as a forward difference with h = 1e-3",
           {"learning": LEARNING_TORCH_FUNC_SGD[:LEARNING_TORCH_FUNC_SGD.index("def answer_slope")] + _COARSE_SLOPE
            + "\n\n" + LEARNING_TORCH_FUNC_SGD[LEARNING_TORCH_FUNC_SGD.index("def nearest_slope"):]},
           {"test_answer_slope_lesson": "forward difference with a step of 0.001",
            "test_answer_slope_matches_finite_differences": "forward difference with a step of 0.001",
            "test_very_sharp_answers": "forward difference with a step of 0.001",
            "test_sharp_slope_needs_float64": "forward difference with a step of 0.001",
            "test_slopes_match_reference": "the slope of answer_slope"}),
    # The docstring asks for float64: at a high sharpness just off a jump float32's slope is 68 tolerances off.
    Flawed("learning: all in float32", {"learning": LEARNING_FLOAT32},
           {"test_sharp_slope_needs_float64": "float32's 7 digits"}),
    Flawed("softmax: picoGPT's, shifted by the first score instead of the largest",
           {"softmax": _replaced(SOFTMAX_PICOGPT, "np.max(x, axis=axis, keepdims=True)",
                                 "np.take(x, [0], axis=axis)")},
           {"test_large_scores": "any score but the largest", "test_minus_infinity_gets_zero": "the first score",
            "test_masked_scores_far_below_zero": "only a shift by the row's own largest score"}),
    Flawed("softmax: in place, on the caller's array (integer scores cannot take it either)",
           {"softmax": '''import numpy as np


def softmax(x, axis=-1):
    x -= x.max(axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x
'''}, {"test_arguments_unchanged": "in place", "test_lesson_scores": "Scores may be integers",
       "test_return_types": "has no attribute"}),
    Flawed("attention: PyTorch's reference sdpa for attend too, which divides by sqrt(d)",
           {"attention": _replaced(ATTENTION_PYTORCH_REFERENCE, "_sdpa(q[None, :], k, v, scale=1.0)",
                                   "_sdpa(q[None, :], k, v)")},
           {"test_two_number_example": "divided by sqrt(d)", "test_attend_matches_reference": "",
            "test_return_types": "numbers are not the right ones"}),
    Flawed("attention: PyTorch's additive causal mask (0 and -inf), which its sdpa adds",
           {"attention": _replaced(_replaced(
               ATTENTION_PYTORCH_REFERENCE, "torch.ones(n, n, dtype=torch.bool).tril(diagonal=0).numpy()",
               "torch.nn.Transformer.generate_square_subsequent_mask(n, dtype=torch.float64).numpy()"),
               "torch.as_tensor(np.asarray(mask, dtype=bool))", "torch.as_tensor(np.asarray(mask))")},
           {"test_causal_mask": "an additive mask", "test_causal_mask_matches_reference": "an additive mask",
            "test_return_types": "a 2-d numpy array of booleans"}),
    # transformers 5's output ends with cross_attentions, () for GPT-2: every pattern is lost, and told why.
    Flawed("gpt2_heads: bertviz's outputs[-1] for the attentions, under transformers 5",
           {"gpt2_heads": _replaced(
               _replaced(HEADS_HUGGING_FACE_HOOKS, "outputs.attentions[layer]", "outputs[-1][layer]"),
               "model(input_ids, output_attentions=True).attentions", "model(input_ids, output_attentions=True)[-1]")},
           {"test_tokens": "name the field", "test_head_pattern": "name the field",
            "test_pattern_is_causal_weights": "name the field", "test_layer_average": "name the field",
            "test_short_and_spaced_texts": "name the field", "test_head_pattern_matches_reference": "name the field",
            "test_return_types": "name the field",
            "test_layer_average_matches_reference": "name the field"}),
    Flawed("gpt2_heads: c_attn's output read as GPT-NeoX lays it out, q, k and v side by side per head",
           {"gpt2_heads": _replaced(HEADS_HUGGING_FACE_HOOKS, '''\
    query, key, _ = captured["qkv"][0].split(n_embd, dim=-1)
    q = query.reshape(-1, n_head, head_dim)[:, head]
    k = key.reshape(-1, n_head, head_dim)[:, head]
''', '''    per_head = captured["qkv"][0].reshape(-1, n_head, 3, head_dim)
    q, k = per_head[:, head, 0], per_head[:, head, 1]
''')}, {"test_recompute_head_pattern": "GPT-NeoX's layout", "test_recompute_matches_reference": "",
        "test_return_types": "numbers are not the right ones"}),
]

# ---------------------------------------------------------------------------------------------------------------------
# Unstable: right on friendly numbers, wrong on unfriendly ones
# ---------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unstable:
    name: str
    files: dict[str, str]
    check: str      # the check that must fail
    fragment: str   # a piece of the message it must fail with
    only: bool = False  # True: every other check of the module must still pass


UNSTABLE = [
    Unstable(
        "softmax: subtracts the whole array's max, not each row's",
        {"softmax": '''\
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max())  # one max for the whole array: a row far below it underflows to 0/0
    return e / e.sum(axis=axis, keepdims=True)
'''},
        "test_rows_far_apart", "each row's own largest score"),
    Unstable(
        "lookup: the Gaussian kernel over its sum, no softmax",
        {"lookup": '''\
import numpy as np


def exact_lookup(query, keys, values):
    for key, value in zip(keys, values):
        if key == query:
            return value
    return None


def nearest_lookup(query, keys, values):
    return values[int(np.argmin(np.abs(np.asarray(keys, dtype=float) - query)))]


def soft_lookup(query, keys, values, sharpness=1.0):
    q = np.asarray(query, dtype=float)
    w = np.exp(-sharpness * (q[..., None] - np.asarray(keys, dtype=float)) ** 2)  # far and sharp: all 0
    w = w / w.sum(axis=-1, keepdims=True)
    answers = w @ np.asarray(values, dtype=float)
    return (float(answers), w) if q.ndim == 0 else (answers, w)
'''},
        "test_very_sharp_and_far_queries", "underflow"),
    Unstable(
        "attention: attend's own softmax never subtracts the max",
        {"attention": '''\
import numpy as np

from softmax import softmax


def attend(query, keys, values):
    e = np.exp(np.asarray(keys, dtype=float) @ np.asarray(query, dtype=float))  # a long query overflows
    weights = e / e.sum()
    return weights @ np.asarray(values, dtype=float), weights


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def causal_mask(n):
    return np.tril(np.ones((n, n), dtype=bool))
'''},
        "test_long_queries", "subtract the largest score"),
    Unstable(
        "learning: soft_answer as a torch kernel over its sum",
        {"learning": (lambda source: source.replace(
            '''def soft_answer(query, keys, values, sharpness):
    query, keys, values, sharpness = map(_f64, (query, keys, values, sharpness))
    attention_weights = F.softmax(-sharpness * (query.unsqueeze(-1) - keys) ** 2, dim=-1)
    return (attention_weights * values).sum(dim=-1)''',
            '''def soft_answer(query, keys, values, sharpness):
    query, keys, values, sharpness = map(_f64, (query, keys, values, sharpness))
    kernel = torch.exp(-sharpness * (query.unsqueeze(-1) - keys) ** 2)  # no max subtracted: underflows
    return (kernel * values).sum(dim=-1) / kernel.sum(dim=-1)'''))(LEARNING_TORCH_FUNC_SGD)},
        "test_very_sharp_answers", "underflow"),
]

assert "kernel = torch.exp" in UNSTABLE[3].files["learning"], "the learning variant's soft_answer was not replaced"
