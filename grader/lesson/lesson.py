"""The lesson's examples and GPT-2 figures, in one torch-free place for the checks, widgets and report.

The GPT-2 claims come from the lesson and could not be checked on our machines
(GPT-2 small's weights were out of reach): they are what the kit measures
against, never what it assumes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Exercise 2: an estate agent's records; the query is a 3-bedroom house, sharpness 1.5.
BEDROOMS = (1.0, 2.0, 4.0, 5.0)  # keys
PRICES = (150.0, 210.0, 340.0, 420.0)  # values, thousands of pounds

# Exercise 3's two-number example for "The cat sat on the": axis 1 "is a thing", axis 2 "is an action".
TOKENS = ["The", "cat", "sat", "on", "the"]
QUERY = np.array([1.40, 0.30])
KEYS = np.array([[-0.9, -0.9], [1.7, 0.2], [0.2, 1.7], [-0.9, 0.7], [-0.2, -1.2]])
# The lesson gives no value vectors; the kit chose these (axes: "is a thing", "is alive", "is an action").
# They differ from the keys on purpose: keys decide who is attended to, values what is handed over.
VALUES = np.array([[0.1, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.2, 1.0], [0.2, 0.0, 0.1], [0.1, 0.0, 0.0]])

# The shapes of the tiny seeded GPT-2s the checks grade on, (n_layer, n_head, n_embd): grader.lesson.models
# builds them, and the checks quote them in hints without torch. Two, so a head size (16 or 8), head count or
# layer count written in as a number is wrong on one of them.
TINY_SHAPES = {"standard": (6, 4, 64), "narrow": (3, 6, 48)}

SENTENCE = "The cat sat on the mat because it was tired"
CONVENTIONS = {"as Hugging Face tokenizes it": "", "with <|endoftext|> first": "<|endoftext|>"}


@dataclass(frozen=True)
class Claim:
    label: str
    layer: int
    head: int | None  # None: the average over the layer's heads
    source: str
    target: str | None  # None: the first token, whatever it is
    share: float


CLAIMS = (
    Claim("layer 4 head 3: it -> cat", 4, 3, "it", "cat", 0.84),
    Claim("layer 4 head 3: it -> mat", 4, 3, "it", "mat", 0.04),
    Claim("layer 4 average: it -> cat", 4, None, "it", "cat", 0.10),
    Claim("layer 4 average: it -> first token", 4, None, "it", None, 0.51),
)
ROUNDING = 0.005  # the lesson shows whole percents: a share within half a point reproduces it


def reproduces(share: float, claim: Claim) -> bool:
    return abs(share - claim.share) < ROUNDING


@dataclass(frozen=True)
class LargestShare:
    """A claim that one token gives the largest share of what a head moves into another."""

    label: str
    layer: int
    head: int
    source: str
    target: str


# "The output of attention for ' it' is mostly cat's value vector."
VALUE_CLAIM = LargestShare("layer 4 head 3: what moves into it", 4, 3, "it", "cat")


def position(tokens: list[str], word: str) -> int:
    """Where ``word`` first occurs in ``tokens``, ignoring GPT-2's space marker "Ġ"."""
    bare = [token.removeprefix("Ġ") for token in tokens]
    return bare.index(word.strip().removeprefix("Ġ"))


def value_shares(weights, values) -> np.ndarray:
    """How much of a head's output each token contributes: |weight_j * v_j|, as shares that sum to 1.

    ``weights`` is one row of the head's pattern, ``values`` its value
    vectors (one row per token). A token with a large weight but a short
    value vector moves little; the attention share alone cannot show that.
    """
    sizes = np.asarray(weights, dtype=float) * np.linalg.norm(np.asarray(values, dtype=float), axis=-1)
    return sizes / sizes.sum()
