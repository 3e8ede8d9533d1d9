"""Two pipe ends that carry the engine's messages as a connected socket would: the spawned worker's line to the judge.

A spawned worker (:mod:`grader.engine.confinement.spawner`) talks to the judge over its
own stdin and stdout, the one channel every system gives a child it starts.
:mod:`grader.engine.confinement.codec` reads and writes a socket with a deadline; a pipe
cannot be waited on with one everywhere (Windows's ``select`` takes sockets
only), so here a thread reads the pipe as data comes, and a read waits for
what it has put aside until the deadline. A write that cannot finish in
time (a worker that stopped reading) times out the same way: the judge then
kills the worker, which ends the write.

Only the reading thread closes the end it reads, once the other side has
closed: a descriptor closed under a blocked read could be reused for
another file and read by mistake.
"""

from __future__ import annotations

import os
import socket
import threading
import time

CHUNK = 2**16
WAKE = 0.25  # seconds a read waits at a time: Windows delivers Ctrl-C to a waiting thread only when it wakes


class PipeConnection:
    """``sendall``, ``recv_into``, ``settimeout`` and ``close`` over a pipe to read and a pipe to write."""

    def __init__(self, reading: int, writing: int, on_end=None):
        self._writing, self._timeout, self._on_end = writing, None, on_end
        self._buffer, self._ended = bytearray(), False
        self._arrived = threading.Condition()
        threading.Thread(target=self._read_all, args=(reading,), daemon=True, name="pipe reader").start()

    def _read_all(self, reading: int):
        while True:
            try:
                chunk = os.read(reading, CHUNK)
            except OSError:
                chunk = b""
            with self._arrived:
                if chunk:
                    self._buffer += chunk
                else:
                    self._ended = True
                self._arrived.notify_all()
            if not chunk:
                os.close(reading)
                if self._on_end is not None:
                    self._on_end()
                return

    def settimeout(self, seconds: float | None):
        self._timeout = seconds

    def recv_into(self, view) -> int:
        """Up to ``len(view)`` bytes, as soon as any are there; 0 once the other side has closed."""
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        with self._arrived:
            while not self._buffer and not self._ended:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise socket.timeout("timed out")
                self._arrived.wait(WAKE if remaining is None else min(remaining, WAKE))
            count = min(len(view), len(self._buffer))
            view[:count] = self._buffer[:count]
            del self._buffer[:count]
            return count

    def sendall(self, data: bytes):
        """Write all of ``data``, within the timeout if one is set (else however long it takes)."""
        failure: list[OSError] = []

        def write():
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self._writing, view[:CHUNK]):]
            except OSError as error:  # the other side is gone
                failure.append(error)

        if self._timeout is None:
            write()
        else:
            writer = threading.Thread(target=write, daemon=True, name="pipe writer")
            writer.start()
            writer.join(self._timeout)
            if writer.is_alive():
                raise socket.timeout("timed out")
        if failure:
            raise failure[0]

    def close(self):
        try:
            os.close(self._writing)
        except OSError:
            pass
