"""The fork servers this process uses, one per kind, shared by every grading in it.

A check's worker is forked from a fork server that has already imported what the
learner's module needs (numpy alone, torch, or transformers and the lesson's
model builder), so that the imports are paid once per process: by a test
run, a class graded in batch or a notebook checking again. That is Linux;
macOS and Windows cannot fork a worker safely, and a fork server of theirs spawns
each worker instead, with a spare one importing ahead (:mod:`grader.engine.confinement.spawner`).

A class's judges are separate processes. On Linux their coordinator starts
:func:`shared` fork servers once, and each judge takes a copy of them
(:func:`adopt`), so that a class pays its imports once, not once per judge.
"""

from __future__ import annotations

import atexit
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from grader.engine import registry
from grader.engine.confinement import scratch, system
from grader.engine.confinement.zygote import ForkServer, SharedForkServer

# The spawner speaks the pipe's codec, which imports numpy: it is imported where workers are spawned, never by a
# class's coordinator, which only starts fork servers.
if TYPE_CHECKING:
    from grader.engine.confinement.spawner import SpawnServer

_servers: dict[str, ForkServer | SpawnServer] = {}
_server_logs: list[Path] = []


def server(needs: str) -> ForkServer | SpawnServer:
    """A fork server that has imported what ``needs`` names, started on first use and kept for the process.

    A fork server that has imported more serves too (transformers' server can fork
    a torch worker), so grading GPT-2 and exercise 5 together imports torch
    once. Started once, a fork server serves every later grading: a test run, a
    class graded in batch or a notebook checking again pays for its imports once.
    """
    kinds = list(registry.NEEDS)
    running = [kind for kind in kinds[kinds.index(needs):] if kind in _servers]
    if running:
        return _servers[running[0]]
    if system.confines():
        _servers[needs] = ForkServer(_imports(needs), _log(needs))
    else:
        from grader.engine.confinement.spawner import SpawnServer

        _servers[needs] = SpawnServer(_imports(needs), _log(needs))
    return _servers[needs]


def _imports(needs: str) -> list[str]:
    return ["numpy", "grader.engine.confinement.worker", *registry.NEEDS[needs]]  # what a fork server imports before forking


def _log(needs: str) -> Path:
    """Where the fork server of ``needs`` writes its errors: a folder of this process's, removed at exit."""
    if not _server_logs:
        atexit.register(shutdown)
        _server_logs.append(scratch.run_folder("servers"))
    return _server_logs[0] / f"{needs}.log"


def shared(exercises: list[registry.Exercise]) -> dict[str, SharedForkServer]:
    """For a batch's coordinator: fork servers of the kinds its judges will ask for, to hand out as copies.

    numpy's and the richest the exercises need; a student whose imports need more (torch in a numpy exercise)
    is served by their judge's own. None where workers are not forked (macOS, Windows).
    """
    if not system.confines():
        return {}
    kinds = {"numpy", registry.richest(exercise.needs for exercise in exercises)}
    return {needs: SharedForkServer(_imports(needs), _log(needs)) for needs in kinds}


def adopt(needs: str, control_fd: int, log: str):
    """For a judge: serve ``needs`` from a copy of its coordinator's shared fork server, reached on ``control_fd``.

    The copy stops when the socket closes: at :func:`shutdown`, or as this process ends.
    """
    _servers[needs] = ForkServer.adopt(socket.socket(fileno=control_fd), Path(log))


def preload(needs: str = "numpy"):
    """Start the fork servers now, so that their imports overlap with whatever the judge does next."""
    server("numpy")
    server(needs)


def shutdown():
    """Stop the fork servers (at exit; a fork server also stops by itself when this process dies)."""
    for handle in _servers.values():
        handle.close()
    _servers.clear()
    for folder in _server_logs:
        scratch.remove_tree(folder)
    _server_logs.clear()

