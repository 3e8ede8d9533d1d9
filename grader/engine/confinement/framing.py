"""The framing of the messages between judge and worker: length-prefixed JSON on a stream socket.

The judge reads them with :func:`receive`, which holds the whole read to one
deadline (a moment on the monotonic clock, or a :class:`Deadline` such as a
call's meter of the worker's CPU time, :mod:`grader.engine.confinement.clock`), refuses a
message larger than it allows before reading it, and refuses one whose
nesting or number of items would cost the judge far more memory than its
size, before decoding it. What the messages carry is :mod:`grader.engine.confinement.codec`'s
plain data; what their fields mean is checked by :mod:`grader.engine.confinement.messages`.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from typing import Protocol

import numpy as np

from grader.engine.confinement.codec import EncodingError
from grader.engine.confinement.policy import MAX_DEPTH, MAX_ITEMS


class Deadline(Protocol):
    """A deadline that moves with something other than the clock on the wall: it says how long is left."""

    def left(self) -> float:
        """Seconds left (0 or less: the time is up)."""


POLL = 0.1  # seconds between two looks at a Deadline while no byte arrives


# -- messages ------------------------------------------------------------------------------

_HEADER = struct.Struct("!I")
_NESTING = np.zeros(256, dtype=np.int8)  # +1 for a bracket that opens, -1 for one that closes
_NESTING[list(b"[{")], _NESTING[list(b"]}")] = 1, -1
_ITEMS = np.zeros(256, dtype=bool)  # what starts a container or separates its items
_ITEMS[list(b"[{,:")] = True
_CHUNK = 2**20  # bytes of a message checked, or skipped, at a time


def send(sock: socket.socket, *messages) -> None:
    """Send each of ``messages``, framed, in one write."""
    frames = []
    for message in messages:
        body = json.dumps(message, separators=(",", ":")).encode()
        frames += [_HEADER.pack(len(body)), body]
    sock.sendall(b"".join(frames))


def receive(sock: socket.socket, deadline: float | Deadline | None, max_bytes: int):
    """The next message; TimeoutError past ``deadline`` (time.monotonic, or a Deadline; None waits), EOFError if the
    peer closed.

    Raises EncodingError for a message that is too large, too deep or too
    many items, or is not JSON, without building it.
    """
    size, = _HEADER.unpack(_read_exactly(sock, _HEADER.size, deadline))
    if size > max_bytes:
        raise EncodingError(f"sent a message of {size / 2**20:.0f} MB, more than the {max_bytes / 2**20:.0f} MB "
                            "allowed")
    return _decoded(_read_exactly(sock, size, deadline))


def receive_or_skip(sock: socket.socket, deadline: float | Deadline | None, max_bytes: int):
    """``(message, size)``: the next message, or None in its place when it is over ``max_bytes``.

    An oversized message is read and dropped in small pieces (within the
    same deadline), so the conversation can go on and the judge never holds
    more than ``max_bytes`` of it: used for what a call printed, which is
    worth keeping only up to a cap.
    """
    size, = _HEADER.unpack(_read_exactly(sock, _HEADER.size, deadline))
    if size <= max_bytes:
        return _decoded(_read_exactly(sock, size, deadline)), size
    left = size
    while left:
        left -= len(_read_exactly(sock, min(left, _CHUNK), deadline))
    return None, size


def _decoded(body: bytearray):
    _check_shape(body)
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise EncodingError("sent a message that is not JSON") from None


def _read_exactly(sock: socket.socket, size: int, deadline: float | Deadline | None) -> bytearray:
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        if deadline is not None:
            remaining = deadline - time.monotonic() if isinstance(deadline, (int, float)) else deadline.left()
            if remaining <= 0:
                raise TimeoutError
            sock.settimeout(remaining if isinstance(deadline, (int, float)) else min(remaining, POLL))
        try:
            count = sock.recv_into(view[got:])
        except socket.timeout:
            continue  # the top of the loop says whether the time is up
        if count == 0:
            raise EOFError
        got += count
    view.release()
    return buffer  # no copy: json.loads and numpy read a bytearray as they read bytes


def _check_shape(body: bytes | bytearray):
    """Refuse deep nesting and floods of small items by counting brackets and separators.

    Brackets inside strings count too, so the bounds are conservative: a
    learner's string full of brackets can only be refused, never slip through.
    The count runs over pieces of the message, so it costs a few MB however
    large the message is.
    """
    if len(body) <= MAX_ITEMS and body.count(b"[") + body.count(b"{") <= MAX_DEPTH:
        return  # too few bytes for too many items, too few brackets to nest too deep: most messages
    data = np.frombuffer(body, dtype=np.uint8)
    items, depth = 0, 0
    for start in range(0, len(data), _CHUNK):
        piece = data[start:start + _CHUNK]
        items += int(np.count_nonzero(_ITEMS[piece]))
        if items > MAX_ITEMS:
            raise EncodingError(f"sent a value of more than {MAX_ITEMS:,} separate items, more than the grader "
                                "accepts")
        levels = np.cumsum(_NESTING[piece], dtype=np.int32)
        if len(levels) and depth + int(levels.max()) > MAX_DEPTH:
            raise EncodingError(f"sent a value nested more than {MAX_DEPTH} levels deep")
        depth += int(levels[-1]) if len(levels) else 0
