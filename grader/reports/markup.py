"""The little markup the kit's own words use, rendered for each place they are shown.

Check titles, verdicts, hints and docstrings mark code with backticks
(```softmax```, or RST's double ones) and stress with stars (``*farthest*``).
Shown raw, the marks are noise; each output renders them its own way: a
terminal (rich) in bold or italics, HTML as ``<code>`` and ``<em>``, plain
text without them.

A star counts only around a word (``*keys*``), never in arithmetic
(``-sharpness * (query - key)^2``, ``x*y``), so formulas and code quoted in a
verdict come through untouched.
"""

from __future__ import annotations

import html as _html
import re

CODE = re.compile(r"``(.+?)``|`([^`\n]*[^`\n\\])`")
STRESS = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]*?[^\s*\\])\*(?![\w*])")


def _rendered(text: str, code: str, stress: str) -> str:
    text = CODE.sub(lambda match: code.format(match.group(1) or match.group(2)), text)
    return STRESS.sub(lambda match: stress.format(match.group(1)), text)


def plain(text: str) -> str:
    """``text`` without its marks: for a pipe, a log, argparse's help."""
    return _rendered(text, "{}", "{}")


def rich(text: str) -> str:
    """``text`` as rich console markup, everything else in it escaped."""
    from rich.markup import escape

    return _rendered(escape(text), "[bold]{}[/]", "[italic]{}[/]")


def html(text: str) -> str:
    """``text`` as HTML, everything else in it escaped."""
    return _rendered(_html.escape(text), "<code>{}</code>", "<em>{}</em>")
