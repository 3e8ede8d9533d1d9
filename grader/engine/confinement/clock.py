"""How long a call into a worker took, by the kernel's accounts rather than by the clock on the wall.

On a busy machine (a shared machine grading a class with ``--jobs``, a learner's
old laptop) a call's wall time grows with everything else that runs, and right
code would run past a limit measured on the wall. So a call is held to its
limit in the worker's own CPU time: what the kernel counts for the worker's
process, all its threads together, read by the judge from
``/proc/<pid>/stat`` of the pid the trusted supervisor reported. The worker
runs learner code, which can lie in anything it sends, but not in that.

Code that waits instead of computing (a sleep, a read that never returns)
uses no CPU time, so a backstop holds the call's wall time too, less the time
the kernel kept the worker queued for a processor (``/proc/<pid>/schedstat``):
waiting of the worker's own making, which a busy machine does not lengthen,
may last :data:`WAITING_FACTOR` times the limit. What a call costs the
submission's time budget is the larger of the two. Where ``/proc`` cannot be
read (not Linux), both are the wall time, as they were before.

A first call has no more room than any other. What right code pays once
(torch.func's first transform imports a second of torch) is paid before any
learner code runs, in the fork server (:func:`grader.engine.confinement.zygote.prepare_libraries`),
and every worker inherits it. An allowance for such costs, given to a call
that looked as if it paid one (by its page faults), was bought by code that
faulted on purpose and then computed on: nothing learner code does in a call
can earn it more time.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass

from grader.engine.confinement.policy import WAITING_FACTOR

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
# Seconds for which a reading of the clocks still answers how long is left: a call's answer comes as a few
# messages in a burst, and the judge looks at the deadline before each read of the socket. Reading /proc for
# each was a quarter of the judge's own work on a short call. The cost: a call may overrun by this much.
FRESH = 0.002
# Seconds a call may spend neither computing nor queued before its meter says the worker holds no processor
# (:class:`Meter`'s ``on_waiting``): a right answer's call waits a few milliseconds at most.
IDLE = 0.25


@dataclass(frozen=True)
class Reading:
    """A worker's clocks at one moment: CPU time, time queued for a processor, the judge's monotonic time."""

    cpu: float
    queued: float
    wall: float


class Clocks:
    """One process's clocks, its ``/proc`` files opened once, when the worker starts, and read again in place by
    every call's :class:`Meter` (when it starts, while the judge waits, when it ends): opening them for each
    reading, then for each call, was a tenth of the judge's own CPU time. An open file stays the process's: once
    it is gone it reads nothing, even where its pid has been given to another."""

    def __init__(self, pid: int | None):
        self.stat = self.schedstat = None
        if pid:
            with contextlib.suppress(OSError):
                self.stat = open(f"/proc/{pid}/stat", "rb", buffering=0)
                self.schedstat = open(f"/proc/{pid}/schedstat", "rb", buffering=0)

    def read(self) -> Reading | None:
        """The clocks now, or None where the kernel does not show them (no such process, no /proc)."""
        wall = time.monotonic()
        if self.stat is None:
            return None
        try:
            stat = os.pread(self.stat.fileno(), 4096, 0)
            # The name in parentheses is the process's own to choose (parentheses and spaces included): split after it.
            fields = stat[stat.rindex(b")") + 2:].split()
            cpu = (int(fields[11]) + int(fields[12])) / TICKS  # utime and stime, fields 14 and 15 of stat(5)
        except (OSError, ValueError, IndexError):
            return None
        queued = 0.0  # where the kernel keeps no schedstat
        if self.schedstat is not None:
            with contextlib.suppress(OSError, ValueError, IndexError):
                queued = int(os.pread(self.schedstat.fileno(), 256, 0).split()[1]) / 1e9  # ns runnable, not running
        return Reading(cpu, queued, wall)

    def close(self):
        for handle in (self.stat, self.schedstat):
            if handle is not None:
                handle.close()


class Meter:
    """One call's clocks, from the moment its request is sent; :meth:`left` says how long the judge may wait.

    ``limit`` is the call's time limit (CPU seconds), ``budget`` what is left
    of the submission's time budget (None: no budget). :attr:`bound` names what stopped the call once
    :meth:`left` reached 0: "computing", "waiting" or "budget".

    ``on_waiting(True)`` is called once the call has spent :data:`IDLE` seconds waiting of its own (asleep, or
    blocked on a read that will not come), ``on_waiting(False)`` at :meth:`end` if it was: a class's judge tells
    its coordinator, which lets another judge use the processor this one leaves idle.
    """

    def __init__(self, clocks: Clocks, limit: float, budget: float | None = None, on_waiting=None):
        self.limit, self.budget = limit, budget
        self.on_waiting, self.said_waiting = on_waiting, False
        self.clocks = clocks  # the worker's, kept open across its calls (the slot closes them)
        self.start = self.clocks.read()
        self.started = time.monotonic()
        self.bound: str | None = None
        self.last, self.read_at = (0.0, 0.0), self.started  # what was last read, and when
        self.waiting_limit = WAITING_FACTOR * limit  # seconds of its own waiting it may take

    def used(self, fresh: bool = True) -> tuple[float, float]:
        """(CPU seconds, seconds of its own waiting or computing) the call has taken so far.

        Once the worker is gone, what was last read: its clocks go with it. Unless ``fresh``, a reading
        younger than :data:`FRESH` is given again.
        """
        moment = time.monotonic()
        if not fresh and moment - self.read_at < FRESH:
            return self.last
        self.read_at = moment
        wall = moment - self.started
        now = self.clocks.read()
        if self.start is None:
            self.last = (wall, wall)
        elif now is not None:
            self.last = (now.cpu - self.start.cpu, max(wall - (now.queued - self.start.queued), 0.0))
        return self.last

    def charge(self) -> float:
        """What the call costs the submission's time budget: its CPU time, or its own waiting where longer."""
        return max(self.used())

    def left(self) -> float:
        """Seconds the call may still take before one of its bounds is reached (0 or less: stop it now)."""
        cpu, own = self.used(fresh=False)
        if self.on_waiting is not None and not self.said_waiting and own - cpu >= IDLE:
            self.said_waiting = True
            self.on_waiting(True)
        room = {"computing": self.limit - cpu,
                "waiting": self.waiting_limit - own}
        if self.budget is not None:
            room["budget"] = self.budget - max(cpu, own)
        bound = min(room, key=room.get)
        if room[bound] <= 0:
            self.bound = bound
        return room[bound]

    def end(self):
        """The call is over: whoever was told it waits is told it no longer does."""
        if self.said_waiting:
            self.said_waiting = False
            self.on_waiting(False)
