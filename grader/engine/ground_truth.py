"""The GPT-2 ground truth a student bundle carries, instead of the code that computes it.

The public GPT-2 checks compare a learner's answers with what transformers
itself computes, asking the ``kit`` fixture (``kit.gpt2.attention_patterns``).
That code, :mod:`grader.lesson.gpt2`, is nearly the answer to exercise 4 line for
line, so a student bundle leaves it out. ``softlookup release student`` runs
the public checks on the reference solutions with a :class:`Recording` of the
kit, and the bundle's checks get a :class:`Replay` of every answer noted
there: the same checks and verdicts, and no code to copy.

The answers hold for the tiny seeded GPT-2 they were computed on. The record
keeps a digest of its weights; where this machine's torch and transformers
build another model under the same seed, the checks that need the answers
are skipped with a line that says so, rather than failing a right answer.
Nothing about GPT-2 small is recorded (its weights are not shipped): the
0-point checks of the lesson's claims are skipped in a bundle.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.engine.confinement import codec
from grader.engine.errors import KitError

TRUTH_FILE = Path(__file__).resolve().parents[1] / "data" / "gpt2_truth.json"
MODULES = ("gpt2",)  # the kit modules whose answers are recorded; any other (models) is asked as usual
RECORD = pytest.StashKey[dict]()  # set by the release: note every answer in this dict
NO_REAL_GPT2 = ("the lesson's claims about GPT-2 small are measured when your instructor grades: this bundle "
                "carries no ground truth for it")


def for_checks(kit, config):
    """The kit the checks get: a recording during a release, a replay in a student bundle, else the kit."""
    if RECORD in config.stash:
        return Recording(kit, config.stash[RECORD])
    if TRUTH_FILE.is_file():
        return Replay(kit, json.loads(TRUTH_FILE.read_text(encoding="utf-8")))
    return kit


def _key(module: str, function: str, args) -> str:
    return json.dumps([module, function, codec.to_plain(list(args))], sort_keys=True)


def _models(args) -> list[codec.ModelSpec]:
    return sorted((spec for spec in codec.model_specs(list(args)) if spec.part == "model"), key=repr)


def _name(spec: codec.ModelSpec) -> str:
    return json.dumps(codec.to_plain(spec), sort_keys=True)


class _Module:
    """``kit.gpt2`` seen through a recording or a replay: each call goes to ``answer``."""

    def __init__(self, module: str, answer):
        self._module, self._answer = module, answer

    def __getattr__(self, function):
        if function.startswith("_"):
            raise AttributeError(function)
        return lambda *args: self._answer(self._module, function, args)


class Recording:
    """The kit, noting every answer of MODULES and the digest of each model the answers came from."""

    def __init__(self, kit, record: dict):
        from importlib.metadata import version

        self._kit, self._record = kit, record
        record.setdefault("answers", {})
        record.setdefault("digests", {})
        record.setdefault("made_with", {name: version(name) for name in ("torch", "transformers")})

    def __getattr__(self, module):
        if module.startswith("_"):
            raise AttributeError(module)
        return _Module(module, self._answer) if module in MODULES else getattr(self._kit, module)

    def _answer(self, module: str, function: str, args):
        answer = getattr(getattr(self._kit, module), function)(*args)
        if not any(spec.kind == "real" for spec in codec.model_specs(list(args))):
            for spec in _models(args):
                self._record["digests"].setdefault(_name(spec), self._kit.models.digest(spec))
            self._record["answers"][_key(module, function, args)] = codec.to_plain(answer)
        return answer


class Replay:
    """The kit, answering MODULES' calls from a record instead of computing them."""

    def __init__(self, kit, record: dict):
        self._kit, self._record = kit, record
        self._same: dict[str, bool] = {}  # model spec -> whether it is the model the answers were recorded on

    def __getattr__(self, module):
        if module.startswith("_"):
            raise AttributeError(module)
        return _Module(module, self._answer) if module in MODULES else getattr(self._kit, module)

    def _answer(self, module: str, function: str, args):
        if any(spec.kind == "real" for spec in codec.model_specs(list(args))):
            pytest.skip(NO_REAL_GPT2)
        for spec in _models(args):
            self._require_same_model(spec)
        plain = self._record["answers"].get(_key(module, function, args))
        if plain is None:
            raise KitError(f"this bundle holds no recorded answer for {module}.{function}(...): please "
                           "tell your instructor")
        return codec.from_plain(plain)

    def _require_same_model(self, spec: codec.ModelSpec):
        name = _name(spec)
        if name not in self._same:
            self._same[name] = self._kit.models.digest(spec) == self._record["digests"].get(name)
        if not self._same[name]:
            made_with = ", ".join(f"{package} {number}" for package, number in self._record["made_with"].items())
            pytest.skip(f"this machine's torch and transformers build a different tiny GPT-2 from the one this "
                        f"bundle's answers were recorded on ({made_with}): install those versions to check this "
                        "exercise, or let your instructor grade it")
