"""What the lesson's three pictures show, as plain functions of the learner's own code.

The widgets (:mod:`grader.lesson.widgets`) only draw what these functions return, so
everything a learner reads off a picture (the weights, the answer, the arrows)
is computed here and tested without a browser. Each function calls the
learner's functions directly: this is their notebook, not a grading run.

A function the learner has not written yet raises :class:`NotReady` with a
sentence to show in place of the picture, never a traceback.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

import numpy as np

from grader.lesson import lesson


class NotReady(Exception):
    """The learner's code cannot draw this picture yet; ``str()`` says what to do, in one sentence."""


def call(function, *args):
    """``function(*args)``, with any failure turned into :class:`NotReady` that names the function to fix."""
    try:
        return function(*args)
    except NotImplementedError as error:
        # The innermost function that raised is the one to write: soft_lookup, or the softmax it calls.
        frames = traceback.extract_tb(error.__traceback__)
        name = frames[-1].name if frames else function.__name__
        raise NotReady(f"Implement `{name}` first: it still raises NotImplementedError. "
                       "Run its cell again once it is written, then this cell.") from None
    except Exception as error:  # the learner's bug, shown as one line where the picture would be
        raise NotReady(f"`{function.__name__}` raised {type(error).__name__}: {error}. "
                       "Fix it, run its cell, then this cell again.") from None


def percent(weight: float) -> str:
    """A weight as the lesson states it, to two decimals: 0.55%, not a "1%" twice its size."""
    return f"{100 * weight:.2f}%"


def pounds(thousands: float | None) -> str:
    """A price in thousands of pounds, to the penny of the lesson's answer (£275.11k) and no further (£210k)."""
    if thousands is None:
        return "nothing found"
    return f"£{thousands:.2f}".removesuffix(".00") + "k"


# -- 1. house prices ----------------------------------------------------------------

METHODS = ("exact", "nearest", "soft")
QUERIES = np.round(np.arange(1.0, 5.0001, 0.1), 1)  # the query slider's stops: 1 to 5 bedrooms


@dataclass
class PriceRow:
    key: float
    value: float
    score: float | None  # only the soft lookup scores every key
    weight: float
    contribution: float  # weight x value


@dataclass
class HousePrices:
    method: str
    query: float
    sharpness: float
    rows: list[PriceRow]
    answer: float | None  # None: the exact lookup found nothing

    HEADER = ("bedrooms (key)", "price (value)", "score", "weight", "weight × value (£k)")

    def table(self) -> list[tuple[str, ...]]:
        """The rows as the widget prints them (:attr:`HEADER`); the last column adds up to the answer."""
        return [(f"{row.key:g}", pounds(row.value), "" if row.score is None else f"{row.score + 0.0:.2f}",  # + 0.0: no "-0.00"
                 percent(row.weight), f"{row.contribution + 0.0:.2f}") for row in self.rows]


def _scalar(value, what: str) -> float | None:
    if value is None:
        return None
    try:
        return float(np.asarray(value, dtype=float).reshape(()))
    except (TypeError, ValueError):
        raise NotReady(f"{what} should be one number, but it returned {value!r}.") from None


def house_prices(functions: dict, method: str, query: float, sharpness: float,
                 keys=lesson.BEDROOMS, values=lesson.PRICES) -> HousePrices:
    """One lookup of the house-price table: who gets which weight, and the answer.

    ``functions`` maps "exact", "nearest" and "soft" to the learner's
    ``exact_lookup``, ``nearest_lookup`` and ``soft_lookup``. A hard lookup
    puts all its weight on the one row it returns.
    """
    keys, values = np.asarray(keys, dtype=float), np.asarray(values, dtype=float)
    if method == "soft":
        answer, weights = _soft(functions["soft"], query, keys, values, sharpness)
        scores = -sharpness * (query - keys) ** 2
    else:
        answer = _scalar(call(functions[method], query, list(keys), list(values)), f"{method}_lookup")
        weights = np.array([1.0 if answer is not None and np.isclose(value, answer) else 0.0 for value in values])
        if weights.sum() > 1:  # two rows hold the same price: the first one is the one returned
            weights[np.argmax(weights) + 1:] = 0.0
        scores = [None] * len(keys)
    rows = [PriceRow(float(k), float(v), None if s is None else float(s), float(w), float(w * v))
            for k, v, s, w in zip(keys, values, scores, weights)]
    return HousePrices(method, float(query), float(sharpness), rows, answer)


def _soft(soft_lookup, query, keys, values, sharpness):
    result = call(soft_lookup, query, list(keys), list(values), sharpness)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise NotReady(f"`soft_lookup` should return the pair (answer, weights), but it returned {result!r}.")
    answer, weights = result
    weights = np.asarray(weights, dtype=float).reshape(-1)
    if weights.shape != keys.shape:
        raise NotReady(f"`soft_lookup` returned {weights.size} weights for {keys.size} keys.")
    return _scalar(answer, "the answer of `soft_lookup`"), weights


def price_curves(functions: dict, sharpness: float, queries=QUERIES,
                 keys=lesson.BEDROOMS, values=lesson.PRICES) -> dict[str, np.ndarray]:
    """Each lookup's answer at every query stop (NaN where the exact lookup finds nothing)."""
    curves = {}
    for method in METHODS:
        answers = [house_prices(functions, method, q, sharpness, keys, values).answer for q in queries]
        curves[method] = np.array([np.nan if a is None else a for a in answers])
    return curves


# -- 2. the two-number query --------------------------------------------------------


@dataclass
class TwoNumbers:
    query: np.ndarray
    scores: np.ndarray  # q . k for each token, as the lesson's table shows them
    weights: np.ndarray  # the learner's attend()
    output: np.ndarray
    path: np.ndarray  # (tokens + 1, value dim): 0, then weights[j] * values[j] added tip to tail

    def table(self) -> list[tuple[str, ...]]:
        return [(token, "(" + ", ".join(f"{x:.1f}" for x in key) + ")", f"{score:.2f}", percent(weight))
                for token, key, score, weight in zip(lesson.TOKENS, lesson.KEYS, self.scores, self.weights)]

    def arrow_widths(self, thinnest: float = 0.5, thickest: float = 6.0) -> np.ndarray:
        """A key's arrow is as thick as its weight: ``thinnest`` at 0, ``thickest`` at 1."""
        return thinnest + (thickest - thinnest) * self.weights


def two_numbers(attend, query) -> TwoNumbers:
    """The lesson's "The cat sat on the" example for any query, through the learner's ``attend``."""
    query = np.asarray(query, dtype=float)
    result = call(attend, query, lesson.KEYS, lesson.VALUES)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise NotReady(f"`attend` should return the pair (output, weights), but it returned {result!r}.")
    output, weights = (np.asarray(part, dtype=float).reshape(-1) for part in result)
    if weights.shape != (len(lesson.KEYS),):
        raise NotReady(f"`attend` returned {weights.size} weights for {len(lesson.KEYS)} keys.")
    steps = weights[:, None] * lesson.VALUES
    path = np.vstack([np.zeros(lesson.VALUES.shape[1]), np.cumsum(steps, axis=0)])
    return TwoNumbers(query, lesson.KEYS @ query, weights, output, path)


# -- 3. a GPT-2 head ----------------------------------------------------------------


@dataclass
class Head:
    tokens: list[str]  # as the tokenizer wrote them, "Ġ" shown as a space
    pattern: np.ndarray  # (T, T)
    layer: int
    head: int
    highlight: int | None  # the row of " it", where the lesson looks


def head(head_pattern, model, tokenizer, text: str, layer: int, head_index: int, word: str = "it") -> Head:
    """One head's pattern through the learner's ``head_pattern``, with the row of ``word`` marked."""
    result = call(head_pattern, model, tokenizer, text, layer, head_index)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise NotReady(f"`head_pattern` should return the pair (tokens, pattern), but it returned {type(result)}.")
    tokens, pattern = list(result[0]), np.asarray(result[1], dtype=float)
    if pattern.shape != (len(tokens), len(tokens)):
        raise NotReady(f"`head_pattern` returned a pattern of shape {pattern.shape} for {len(tokens)} tokens.")
    labels = [str(token).replace("Ġ", " ") for token in tokens]
    bare = [label.strip() for label in labels]
    return Head(labels, pattern, layer, head_index, bare.index(word) if word in bare else None)
