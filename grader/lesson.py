"""The lesson's GPT-2 figures, in one torch-free place for the checks, the kit and the report.

The claims come from the lesson and could not be checked on our machines
(GPT-2 small's weights were out of reach): they are what the kit measures
against, never what it assumes.
"""

from __future__ import annotations

from dataclasses import dataclass

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
