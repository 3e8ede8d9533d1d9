"""The GPT-2 models a worker is handed: built once per fork server, inherited by every worker it forks.

Building the tiny GPT-2s (and GPT-2 small from disk) is the kit's work, done
before any learner code runs in a worker. Done in each worker, it cost a GPT-2
re-check one worker start per model; done here, in the fork server just before
a fork (:func:`prebuild`), every worker inherits the models, copied on write,
and a learner who changes their copy in place changes no other worker's.
Only the kit's own builder (``registry.MODEL_BUILDER``, named in the worker's
settings by the judge) ever fills the cache, in a process no learner code reaches.
"""

from __future__ import annotations

import importlib

from grader.engine.confinement import codec

BUILT: dict[tuple, object] = {}  # (builder module, ModelSpec) -> the model or tokenizer
MAX_BUILT = 64  # tiny GPT-2s of a few hundred kilobytes each, and GPT-2 small from disk


def prebuild(settings) -> None:
    """In the fork server, before forking a worker with ``settings``: build what it asks for, once."""
    for plain in settings.models:
        key = (settings.model_builder, codec.ModelSpec(**plain))
        if key not in BUILT and len(BUILT) < MAX_BUILT:
            BUILT[key] = importlib.import_module(settings.model_builder).build(key[1])


def build(settings) -> dict:
    """In a worker: every model its calls will need, the fork server's where it built them (spawned workers
    on macOS and Windows build their own)."""
    specs = [codec.ModelSpec(**plain) for plain in settings.models]
    builder = importlib.import_module(settings.model_builder) if specs else None
    return {spec: BUILT[key] if (key := (settings.model_builder, spec)) in BUILT else builder.build(spec)
            for spec in specs}
