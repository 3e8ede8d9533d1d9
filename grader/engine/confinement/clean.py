"""Text from learner code made safe to keep, write and print, without numpy: the judge cleans what crosses the
pipe (:mod:`grader.engine.confinement.codec`, :mod:`grader.engine.confinement.messages`), and a class's
coordinator, which never imports numpy, cleans what it quotes.
"""

from __future__ import annotations

_INVISIBLE = {*range(0x00, 0x20), *range(0x7F, 0xA0), 0x200E, 0x200F, *range(0x202A, 0x202F),
              *range(0x2066, 0x206A)}  # control characters and bidirectional overrides
_SURROGATES = range(0xD800, 0xE000)  # alone in a str, they cannot be encoded: writing or printing them raises
_CLEAN = {code: "\ufffd" for code in [*_INVISIBLE, *_SURROGATES] if code not in (0x09, 0x0A)}
_CLEAN_VALUE = {code: "\ufffd" for code in _SURROGATES}


def clean_text(text: str, limit: int = 2000) -> str:
    """Learner-supplied text made safe for a table, a file or a terminal: no control characters, capped.

    It is also made encodable: a lone surrogate ("\\ud800", which JSON and a
    learner's exception message can carry) becomes U+FFFD, so nothing the
    judge writes or prints can fail on it. The cap comes first, so a flood
    costs the judge only ``limit`` characters of work.
    """
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.translate(_CLEAN)


def clean_value(text: str) -> str:
    """A learner's string *value*, cleaned of what :func:`clean_text` would, but only its lone surrogates
    (each becomes U+FFFD): a value is judged as it was sent, control characters, length and all. Fast for ASCII."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.translate(_CLEAN_VALUE)
