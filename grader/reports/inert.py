"""Text from a student, escaped for each format where a report puts it; and the page every HTML report uses.

What a learner's code sent was cleaned once, as it crossed into the judge
(:func:`grader.engine.confinement.clean.clean_text`); here, at the edge, each format
escapes what would mean something in it: a spreadsheet takes no cell for a
formula (:func:`csv_text`), Markdown quotes a student's text as text
(:func:`inline`, :func:`fenced`), and a page has the kit's one heading
(:func:`html_page`). Every one is :func:`~grader.engine.results.writable`
first, for text that never crossed from a worker (a name from an export).
"""

from __future__ import annotations

import html
import re

from grader.engine.results import writable


def html_page(title: str, body: str) -> str:
    """A page of the kit's with ``title`` as its one heading (escaped) and ``body`` (HTML already made safe)."""
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:.3em .6em;vertical-align:top}</style></head>\n"
            f"<body>\n<h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n")

_FORMULA = ("=", "+", "-", "@", "\t", "\r", "\n")  # OWASP's CSV injection list, and a line break
_MARKDOWN_INLINE = re.compile(r"[`*_\[\]<>&|~#!]|\\(?=[!-/:-@\[-`{-~]|$)")  # what can start markup mid-line


def csv_text(text: str) -> str:
    """A student's text as a CSV cell no spreadsheet takes for a formula (OWASP's advice: a leading ``'``).

    A cell that starts with ``= + - @``, a tab or a line break, after any spaces, is prefixed with a
    single quote; the csv module quotes it and doubles its quotes. Read back, the cell is ``'`` and the text.
    """
    text = writable(text)
    return "'" + text if text.lstrip(" ").startswith(_FORMULA) else text


def inline(text: str) -> str:
    """A student's text (or a message that may quote one) for the middle of a Markdown line, heading or table
    cell: one line, and every character that could start markup (emphasis, code, links, HTML, an entity, a
    table's pipe) escaped with a backslash, so CommonMark shows it as the text it is."""
    return _MARKDOWN_INLINE.sub(lambda match: "\\" + match.group(0), " ".join(writable(text).splitlines()))


def fenced(text: str, indent: str = "") -> str:
    """A student's text as a Markdown code block that nothing in it can close: its fence is one backtick
    longer than the longest run of backticks inside (CommonMark closes a fence only with one as long)."""
    text = writable(text)
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    body = "\n".join(indent + line for line in text.splitlines())
    return f"{indent}{fence}\n{body}\n{indent}{fence}"



def kit_inline(text: str) -> str:
    """A message in the kit's words, which may quote a student's text, for a Markdown line: its ```code``` marks
    (:mod:`grader.reports.markup`) as code spans, which show anything inside as it is, and the rest escaped as
    :func:`inline` escapes it, rather than shown with literal backslashes and backticks."""
    from grader.reports.markup import CODE

    text = " ".join(writable(text).splitlines())
    parts, last = [], 0
    for match in CODE.finditer(text):
        code = match.group(1) or match.group(2)
        fence = "`" * (1 + max((len(run) for run in re.findall(r"`+", code)), default=0))
        pad = " " if code.startswith("`") or code.endswith("`") else ""
        parts += [inline(text[last:match.start()]), f"{fence}{pad}{code}{pad}{fence}"]
        last = match.end()
    return "".join(parts) + inline(text[last:])
