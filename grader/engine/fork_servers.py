"""The fork servers this process has started, one per kind, shared by every grading in it.

A check's worker is forked from a fork server that has already imported what the
learner's module needs (numpy alone, torch, or transformers and the lesson's
model builder), so that the imports are paid once per process: by a test
run, a class graded in batch or a notebook checking again. That is Linux;
macOS and Windows cannot fork a worker safely, and a fork server of theirs spawns
each worker instead, with a spare one importing ahead (:mod:`grader.engine.spawner`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from grader.engine import registry, system
from grader.engine.spawner import SpawnServer
from grader.engine.zygote import ForkServer

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
    if not _server_logs:
        _server_logs.append(Path(tempfile.mkdtemp(prefix=f"softlookup-{os.getpid()}-servers-")))
        atexit.register(shutdown)
    kind = ForkServer if system.confines() else SpawnServer
    imports = ["numpy", "grader.engine.worker", *registry.NEEDS[needs]]  # what it imports before forking
    _servers[needs] = kind(imports, _server_logs[0] / f"{needs}.log")
    return _servers[needs]


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
        shutil.rmtree(folder, ignore_errors=True)
    _server_logs.clear()

