"""What a learner's worker read of the learner's folder: every file it imported or opened, told to the judge.

A learner who checks again after an edit waits only for the exercises whose
grading read the file they changed (:mod:`grader.engine.classes.keeper`). What a
grading read is recorded here, in the worker, because only the worker sees
it: the modules its imports reached (an exercise's own, a helper, a package
of the learner's, an exercise imported through another), and the files its
code opened (a data file, ``np.load``, ``open``). An audit hook
(:func:`sys.addaudithook`), added before any learner code runs, hears every
``open`` event, Python's imports of source files included (they open with
``io.open_code``); the modules in :data:`sys.modules` whose file lies in the
folder count too (an extension module is loaded without an ``open`` event).

Each answer carries every path read so far, relative to the folder, or
``None`` for "anything": what was heard could not be made a path, or there
were more than :data:`MAX_REPORTED`. The judge trusts none of it
(:func:`grader.engine.confinement.messages.reads`): a report that is not of this shape
reads as "anything", and the judge counts the exercise's own module whatever
the report says, so a worker that reports less than it read can only keep a
stale result on the machine of the learner whose code lied, a machine where
they could edit the kit itself. A class graded by ``softlookup grade`` keeps
nothing by what was read: a student's work is compared whole
(:func:`grader.engine.submissions.digests.work_digest`).

Torch and transformers bring thousands of modules, and a GPT-2 exercise
answers dozens of calls: so each report looks only at the names that came
into :data:`sys.modules` since the one before (a set difference, in C),
and none where their number has not changed; the first, only at those that
came after the fork server's imports. A module put under a name
already looked at, or in the place of one taken out, is not looked at:
only learner code does that, and what it hides keeps a stale result for no
one but the learner whose code hid it.

A file's presence, listing a folder or a file's size read without opening it
leave no ``open`` event: the judge counts any file added to or removed from the
folder as a change for every exercise, which covers the first two.
"""

from __future__ import annotations

import os
import sys

from grader.engine.confinement.policy import MAX_READS

MAX_REPORTED = MAX_READS  # paths in one report; a folder holds at most 500 files (grader.engine.submissions.intake.MAX_FILES)


class Reads:
    """The files of ``directory`` that this process has imported or opened since it was made."""

    def __init__(self, directory: str):
        self.roots = {os.path.join(os.path.abspath(directory), ""), os.path.join(os.path.realpath(directory), "")}
        self.found: set[str] = set()
        # The names in sys.modules that an earlier report looked at, and how many there were then. Those already here
        # came before any learner code, from the kit's and the libraries' folders, never the learner's copy: looked
        # at in a worker forked from transformers' fork server, their 2,800 modules cost 26 ms of pages copied.
        self.modules_seen: set = set(sys.modules)
        self.modules_counted = len(sys.modules)
        self.anything = False  # something was heard that could not be told: the judge counts every file
        sys.addaudithook(self._heard)

    def _heard(self, event: str, args: tuple):
        """The audit hook: never raises (an exception here would fail the learner's own open)."""
        if event != "open" or not args or isinstance(args[0], int):  # a descriptor: its path was heard already
            return
        try:
            self._add(os.path.abspath(os.fsdecode(args[0])))
        except BaseException:  # a learner's path-like object whose __fspath__ raises: it may have named any file
            self.anything = True

    def _add(self, path: str):
        for root in self.roots:
            if path.startswith(root):
                relative = path[len(root):].replace(os.sep, "/")
                if "__pycache__/" not in relative:  # the bytecode an import looks for: never in a graded copy
                    self.found.add(relative)

    def report(self) -> list[str] | None:
        """Every path read so far, relative to the folder and sorted; None where they cannot all be told."""
        new = sys.modules.keys() - self.modules_seen if len(sys.modules) != self.modules_counted else set()
        self.modules_seen |= new
        self.modules_counted = len(sys.modules)
        for name in new:
            try:
                place = vars(sys.modules[name]).get("__file__")
                if isinstance(place, str):
                    self._add(os.path.abspath(place))
            except BaseException:  # not a module: something learner code put there
                continue
        if self.anything or len(self.found) > MAX_REPORTED:
            return None
        return sorted(self.found)
