"""A learner's function that ran past its time limit is never called again in this grading: its stand-in raises.

The judge stops a call that runs past its limit and starts a new worker; the
judge names each hung function (``Settings.hung``), and the new worker puts a
stand-in in its place before the learner's module is imported, so that a loop
is waited for once per grading, not once per check. The stand-in raises
:class:`RanPastItsLimit`, which the worker reports as a hang; a learner's code
that raises it itself gains nothing (the judge knows which calls it stopped).
"""

from __future__ import annotations

import importlib
import os
import sys


class RanPastItsLimit(Exception):
    """Raised by the stand-in for a learner's function that ran past its time limit earlier in this grading."""


def _stand_in(label: str, original):
    def stand_in(*args, **kwargs):
        raise RanPastItsLimit(label)

    for name in ("__name__", "__qualname__", "__doc__"):  # not __wrapped__: nothing leads back to the original
        try:
            setattr(stand_in, name, getattr(original, name))
        except (AttributeError, TypeError):
            pass
    return stand_in


class _HungImports:
    """A finder, first on sys.meta_path, for learner modules whose import ran past its limit: importing one raises."""

    def __init__(self, modules: set[str]):
        self.modules = modules

    def find_spec(self, name, path=None, target=None):
        if name in self.modules:
            raise RanPastItsLimit(f"{name}.py")
        return None


def install_stand_ins(hung: list[list[str]], directory: str | None):
    """Replace each function of ``hung`` in its (learner's) module by a stand-in that raises at once.

    Runs in the worker before the learner's module is imported, so the
    modules that import a hung function bind the stand-in; a learner module
    imported on the way that bound an original already is rebound too.
    ``[module, ""]`` is a module whose import hung: importing it raises at
    once. A module that does not import is left alone: importing it will say why.
    """
    entries = [entry for entry in hung if isinstance(entry, list) and len(entry) == 2
               and all(isinstance(part, str) for part in entry)]
    modules = {module for module, function in entries if not function}
    if modules:
        sys.meta_path.insert(0, _HungImports(modules))
    replaced = {}  # id(original) -> (original, stand-in)
    for module_name, function in entries:
        if not function or module_name in modules:
            continue
        try:
            module = importlib.import_module(module_name)
            original = getattr(module, function, None)
            if callable(original):
                replaced[id(original)] = (original, _stand_in(f"{module_name}.{function}()", original))
                setattr(module, function, replaced[id(original)][1])
        except BaseException:  # the learner's module may raise anything on import, SystemExit included
            continue
    root = os.path.abspath(directory) + os.sep if directory else None
    for module in list(sys.modules.values()) if root and replaced else ():
        if not str(getattr(module, "__file__", "") or "").startswith(root):
            continue
        try:
            for name, value in list(vars(module).items()):
                if id(value) in replaced and replaced[id(value)][0] is value:
                    setattr(module, name, replaced[id(value)][1])
        except BaseException:
            continue
