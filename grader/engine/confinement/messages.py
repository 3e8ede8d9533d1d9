"""What a worker says, checked field by field before the judge uses any of it.

A worker runs learner code, and learner code can write to the worker's end of
its socket whatever it likes: every message the judge receives is data of
unknown shape. Each function here takes one decoded message and returns the
fields the judge uses, each of the type and within the range the protocol
(:mod:`grader.engine.confinement.worker`) gives it, or raises :class:`Malformed` naming
the first field that is not. The slot turns that into the learner's crash,
never the kit's failure: nothing past this module touches a worker's field
unchecked. What a learner wrote is also cleaned here (:func:`clean.clean_text`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grader.engine.confinement import clean
from grader.engine.confinement.policy import MAX_LINES_COUNTED, MAX_READS
from grader.engine.results import WORKER_KINDS, ErrorKind

_STATUS = re.compile(r"(pid|exit|signal) (-?[0-9]{1,10})")  # what a supervisor writes: ASCII digits only


class Malformed(ValueError):
    """A worker's message that is not of the protocol's shape; the message names the field."""


@dataclass(frozen=True)
class ErrorRecord:
    """A worker's account of an exception (:func:`grader.engine.confinement.worker.describe`), every field checked."""

    kind: ErrorKind  # one of WORKER_KINDS
    type_name: str
    message: str
    where: tuple[str, int, str] | None  # (file, line, code) in the learner's files


def _require(condition: bool, field: str):
    if not condition:
        raise Malformed(field)


def _is_int(value) -> bool:
    return type(value) is int  # not a bool, a float or a learner's int subclass (JSON gives none, but say so)


def _id(message: dict, request_id: int, field: str):
    _require(_is_int(message.get("id")) and message["id"] == request_id, f"{field} id")


def printed_report(report, request_id: int, limit: int) -> tuple[str, int]:
    """``(output, lines)`` from the message of what a call printed: its start, capped at ``limit``, and a count."""
    _require(isinstance(report, dict), "printed output")
    _id(report, request_id, "printed output")
    output, lines = report.get("output"), report.get("lines")
    _require(isinstance(output, str), "printed output")
    _require(_is_int(lines) and 0 <= lines, "printed line count")
    return output[:limit], min(lines, MAX_LINES_COUNTED)


def answer(message, request_id: int) -> dict:
    """``{"value": tree, "arguments": tree or None}`` or ``{"error": ErrorRecord}`` from a call's answer, each
    with ``"read"``: what the worker says it read (:func:`reads`).

    The trees are left to :func:`codec.from_plain`, which refuses any it cannot
    rebuild (an EncodingError, the learner's too).
    """
    _require(isinstance(message, dict), "answer")
    _id(message, request_id, "answer")
    _require(("value" in message) != ("error" in message), "answer")
    if "value" in message:
        return {"value": message["value"], "arguments": message.get("arguments"), "read": reads(message.get("read"))}
    return {"error": error_record(message["error"]), "read": reads(message.get("read"))}


def reads(report) -> frozenset[str] | None:
    """The files of the learner's folder a worker says it read, as relative paths; None, "anything", for a report
    that is missing or not a list of at most :data:`MAX_READS` plain relative paths (:mod:`grader.engine.confinement.reads`).

    Never Malformed: a report that cannot be believed costs the learner a fuller regrading, not their call.
    """
    if not isinstance(report, list) or len(report) > MAX_READS:
        return None
    found = set()
    for path in report:
        if not isinstance(path, str) or "\\" in path or "\x00" in path \
                or any(part in ("", ".", "..") for part in path.split("/")):  # absolute, or not one path
            return None
        found.add(path)
    return frozenset(found)


def error_record(error) -> ErrorRecord:
    """A worker's error record, checked: a known kind, text fields that are text, a place that is a place."""
    _require(isinstance(error, dict), "error record")
    kind, type_name, text = error.get("kind"), error.get("type", "Exception"), error.get("message", "")
    _require(isinstance(kind, str) and kind in WORKER_KINDS, "error kind")
    _require(isinstance(type_name, str), "error type")
    _require(isinstance(text, str), "error message")
    return ErrorRecord(ErrorKind(kind), clean.clean_text(type_name, 100), clean.clean_text(text, 2000),
                       _place(error.get("where")))


def _place(where) -> tuple[str, int, str] | None:
    """(file, line, code), or None where the worker knew no place (a SyntaxError may have no line)."""
    if where is None:
        return None
    _require(isinstance(where, list) and len(where) == 3, "error place")
    file, line, code = where
    _require(isinstance(file, str) and isinstance(code, str) and (line is None or _is_int(line)), "error place")
    if line is None:
        return None
    _require(0 <= line <= 10**7, "error line")
    return clean.clean_text(file, 100), line, clean.clean_text(code, 200)


def ready(message) -> tuple[dict | None, str]:
    """``(protections, "")`` from a worker's first message once it is set up, or ``(None, why)`` if it could not.

    Sent before any learner code runs: a malformed one is the kit's, and the
    caller says so; the protections themselves are checked by
    :meth:`grader.engine.confinement.protections.Protections.from_plain`.
    """
    _require(isinstance(message, dict) and type(message.get("ready")) is bool, "ready message")
    if message["ready"]:
        return message.get("protections"), ""
    error = message.get("error")
    if not isinstance(error, dict):
        return None, "no reason given"
    return None, clean.clean_text(f"{error.get('type')}: {error.get('message')}", 300)


def status_line(line: str) -> tuple[str, int]:
    """``(kind, number)`` from a supervisor's status line: ("pid", N), ("exit", code) or ("signal", number)."""
    found = _STATUS.fullmatch(line)
    _require(found is not None, "status line")
    kind, number = found.group(1), int(found.group(2))
    _require(number > 0 if kind != "exit" else True, "status line")
    return kind, number
