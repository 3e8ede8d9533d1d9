"""A grading run's sandbox: everything one grading run starts, and what it knows across its submissions.

A sandbox holds the private copies of learners' folders (what their workers
import from: links that lead outside a folder are refused before anything
runs), the slots of every folder and module, the answers of trusted calls
already made, the functions known to hang, what the check running now
printed (:class:`PrintLog`) and each submission's time budget
(:class:`grader.engine.budget.Budget`).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from grader.engine import registry
from grader.engine.budget import Budget
from grader.engine.confinement import codec, scratch, system
from grader.engine.confinement.policy import OUTPUT_CHARS, PRINTED_LINES, TIME_BUDGET
from grader.engine.confinement.protections import Protections
from grader.engine.errors import IsolationError, KitError, SubmissionError
from grader.engine.slot import Limits, Slot
from grader.engine.submissions import intake, notebooks



class Sandbox:
    """Everything one grading run starts: private copies of submissions, workers, their scratch folders.

    All of it lives in one temporary folder (:func:`grader.engine.confinement.scratch.run_folder`)
    that :meth:`close` removes; a later sandbox removes any left by a run that
    was killed outright, or whose removal a worker's leftovers defeated.
    """

    def __init__(self, require_isolation: bool = False, all_output: bool = False, forbidden=()):
        scratch.remove_abandoned()
        self.root = scratch.run_folder()
        self.require_isolation = require_isolation
        # Carved out of what learners may read, wherever they lie (the kit installed in site-packages), with the
        # other copies of the kit that grading lays out beside them:
        self.forbidden = sorted({str(registry.PACKAGE_DIR), str(registry.SOLUTIONS_DIR), *map(str, forbidden),
                                 *kit_copies(forbidden)})
        if system.root_grader():  # workers may get uids of their own: they pass through here to their copy, no more
            os.chmod(self.root, 0o711)
            system.close_to_workers(self.forbidden)
        self.groups: dict[str, int] = {}  # a learner's copy -> the group its workers read it with (root only)
        self.slots: dict[tuple, Slot] = {}
        self.copies: dict[str, str | SubmissionError] = {}
        self.protections: Protections | None = None
        # (call, what it printed) for the check running now, and how much of a call's prints is kept:
        self.printed = PrintLog(2**20, 10**6) if all_output else PrintLog(OUTPUT_CHARS, PRINTED_LINES)
        self.last_call: tuple[str, str] | None = None  # (module, function) the check running now called last
        self.answers: dict[str, dict] = {}  # trusted calls already made: their answers, as plain data
        self.shared: dict[str, dict | SubmissionError] = {}  # the current submission's answers that checks share
        self.budget = Budget()  # the current submission's
        self.hung: dict[str, dict[tuple[str, str], SubmissionError]] = {}  # folder -> (module, function) -> error
        self.on_waiting = None  # each call's meter tells it when the call waits without computing (a class's judge)
        self.checking = ""  # the exercise whose check runs now
        self.used: dict[str, set[tuple]] = {}  # exercise -> the learner's slots its checks used, this submission

    def begin_submission(self, budget: float | None = TIME_BUDGET):
        """A new submission is graded next: its calls get a whole budget, and no function is known to hang."""
        self.budget.restart(budget)
        self.hung.clear()
        self.shared.clear()
        self.printed.clear()
        self.used.clear()

    def begin_check(self, exercise: str):
        """A check of ``exercise`` runs next: what learner code prints is kept per check, and what it reads per
        exercise."""
        self.printed.clear()
        self.checking = exercise

    def note_hang(self, slot: Slot, function: str, error: SubmissionError):
        """Remember that ``slot``'s function ran past its limit, for every module of the same folder.

        Workers of that folder started before now would still call it (through
        ``from softmax import softmax``): they are stopped, and their next call
        starts a worker that gets a stand-in instead (forking one takes milliseconds).
        """
        known = self.hung.setdefault(slot.origin, {})
        if (slot.module, function) in known:
            return
        known[(slot.module, function)] = error
        for (directory, _, trusted), other in self.slots.items():
            if directory == slot.origin and not trusted and other.worker is not None:
                other.stop()

    def note_protections(self, plain):
        """Record what a learner's worker reported; refuse to go on without isolation if it was required."""
        try:
            reported = Protections.from_plain(plain)
        except ValueError:
            raise KitError("a worker reported its protections in an unknown form") from None
        if self.protections is None:
            self.protections = reported
        if self.require_isolation and reported.missing():
            raise IsolationError(reported.refusal())

    def trusted_answer(self, directory: str | None, module: str, function: str, args, limits: Limits):
        """A trusted function's answer (the reference's, the kit's), computed once per sandbox and arguments.

        A class of 200 asks the reference the same hidden questions 200 times;
        each is answered by a worker once and rebuilt from plain data after.
        """
        key = json.dumps([directory, module, function, codec.to_plain(list(args))], sort_keys=True)
        if key not in self.answers:
            try:
                value = self.slot(directory, module, limits, trusted=True).call(function, args)
            except SubmissionError as error:
                raise KitError(str(error)) from None
            self.answers[key] = codec.to_plain(value)
        return codec.from_plain(self.answers[key])

    def shared_answer(self, slot: Slot, function: str, args):
        """A learner's answer that several checks judge, asked of their worker once per submission.

        Each check is given its own copy, rebuilt from plain data, so none sees
        what another changed; an error is raised again for each. The answers
        go with the submission (:meth:`begin_submission`).
        """
        key = json.dumps([slot.directory, slot.module, function, codec.to_plain(list(args))], sort_keys=True)
        if key not in self.shared:
            try:
                self.shared[key] = codec.to_plain(slot.call(function, args))
            except SubmissionError as error:
                self.shared[key] = error
        if isinstance(self.shared[key], SubmissionError):
            raise self.shared[key]
        return codec.from_plain(self.shared[key])

    def probe(self) -> Protections:
        """The protections a learner's worker gets here, measured by starting one that runs nothing."""
        if self.protections is None:
            slot = Slot(self, None, None, "probe", Limits(), trusted=False)
            try:
                slot.start()
            finally:
                slot.stop()
        return self.protections

    def copy_of(self, directory: str) -> str:
        """A private, read-only copy of a learner's folder: what their workers import from.

        Raises SubmissionError ("invalid") for a folder with links that lead
        outside it, or more files than any exercise needs.
        """
        if directory not in self.copies:
            target = Path(tempfile.mkdtemp(prefix="submission-", dir=self.root))
            try:
                intake.copy_submission(Path(directory), target)
                os.chmod(target, 0o755)
                if system.root_grader():  # readable by this learner's workers alone, whatever uid each gets
                    from grader.engine.confinement import confine  # Linux's, as a root grader is

                    self.groups[str(target)] = confine.group_for(os.getpid(), len(self.groups))
                    confine.share_with_group(target, self.groups[str(target)])
                self.copies[directory] = str(target)
            except SubmissionError as error:
                self.copies[directory] = error
        found = self.copies[directory]
        if isinstance(found, SubmissionError):
            raise found
        return found

    def slot(self, directory: str | None, module: str, limits: Limits, trusted: bool) -> Slot:
        key = (directory, module, trusted)
        if not trusted:
            self.used.setdefault(self.checking, set()).add(key)
        if key not in self.slots:
            if trusted or directory is None:
                self.slots[key] = Slot(self, directory, directory, module, limits, trusted)
            else:
                copy = self.copy_of(directory)
                self.slots[key] = Slot(self, copy, directory, module, limits, trusted, readable=[copy])
        return self.slots[key]

    def release(self, directory: str) -> dict[str, frozenset | None]:
        """Stop the workers of one learner's folder and remove its copy (the next learner's turn); what each
        exercise's checks read of it, by what the workers of every slot they used said (None: any file).

        A slot's workers report everything they read since the first started, whichever exercise's call it
        was read for, and an exercise is given all of it: an exercise is said to have read more than it did,
        never less. A slot that is gone (Ctrl-C stopped them all) read anything.
        """
        reads = {}
        for exercise, keys in self.used.items():
            told = [self.slots[key].reads if key in self.slots else None for key in keys if key[0] == directory]
            reads[exercise] = None if None in told else frozenset().union(*told)
        for key in [key for key in self.slots if key[0] == directory and not key[2]]:
            self.slots.pop(key).stop()
        self.hung.pop(directory, None)
        copy = self.copies.pop(directory, None)
        if isinstance(copy, str):
            scratch.remove_tree(Path(copy))
        return reads

    def learners_paths(self, text: str, as_handed_in: bool = False) -> str:
        """``text`` with the paths of the grader's private copies put back as the learner's own folders.

        A warning or a traceback printed by learner code names the file it ran
        from, the copy (``/tmp/softlookup-…/submission-…/softmax.py:41``); the
        learner knows the file as ``assignments/softmax.py``. A student of a
        class graded (``as_handed_in``) knows it as the file handed in,
        ``softmax.py:41``, never by the instructor's folder of the class.
        """
        for origin, copy in self.copies.items():
            if isinstance(copy, str) and copy in text:
                def shown(path, origin=origin) -> str:
                    if as_handed_in:
                        return os.path.relpath(path, origin)
                    return os.path.relpath(path) if Path(path).is_relative_to(Path.cwd()) else str(path)

                for name, source in notebooks.made_from(origin).items():  # a module made from the learner's file
                    made = f"{shown(source)} (as {name})" if source.suffix == ".ipynb" else shown(source)
                    text = text.replace(os.path.join(copy, name), made)
                text = text.replace(copy + os.sep, "" if as_handed_in else shown(origin) + os.sep)
        return text

    def stop_workers(self):
        """Kill every worker now (Ctrl-C: before anything else); a later call starts them afresh."""
        for slot in self.slots.values():
            slot.stop()
        self.slots.clear()

    def close(self):
        self.stop_workers()
        if self.root.exists():
            scratch.remove_tree(self.root)


def kit_copies(references) -> set[str]:
    """What learners must not read of each copy of the kit a grading knows: the one running, and any that a
    reference folder it is given lies in (beside a ``grader/`` package with hidden checks: the Gradescope
    autograder's unpacked ``source/kit/``, a second checkout).

    Of each: the package (hidden checks included), the solutions, the kit's tests and its history; of a
    source tree (not site-packages), what building or installing it leaves beside it too: ``build/lib`` and
    an egg-info hold the package again, ``dist/`` its wheels. Only those parts, not the whole copy: a
    checkout may hold the virtual environment that workers import from. A folder not there costs nothing.
    """
    kits = {registry.KIT_ROOT, *(folder for folder in (Path(reference).resolve().parent for reference in references)
                                 if (folder / "grader" / "checks" / "hidden").is_dir())}
    parts = {kit / name for kit in kits for name in ("grader", "solutions", "tests", ".git")}
    for kit in (kit for kit in kits if (kit / "pyproject.toml").is_file()):
        parts |= {kit / "build", kit / "dist", *kit.glob("*.egg-info")}
    return {str(part) for part in parts}


class PrintLog(list):
    """``(call, what it printed)`` for the check running now, held to ``limit`` characters in all.

    A check may call learner code hundreds of times; what it keeps of their
    prints is bounded by the judge, whatever each call printed. A call's own
    prints are kept to ``limit`` characters and ``lines`` lines too.
    """

    def __init__(self, limit: int, lines: int):
        super().__init__()
        self.limit, self.lines, self.size, self.dropped = limit, lines, 0, 0

    @property
    def message_bytes(self) -> int:
        """What the message of one call's prints may take: JSON writes a character in up to 12 bytes."""
        return 12 * self.limit + 4096

    def add(self, label: str, text: str):
        if self.size >= self.limit:
            self.dropped += 1
            return
        if len(text) > self.limit - self.size:
            text = text[: self.limit - self.size] + "…"
        self.size += len(text)
        self.append((label, text))

    def clear(self):
        super().clear()
        self.size = self.dropped = 0

    def text(self) -> str:
        """What the check's calls printed, each under the call that printed it, and how many more did."""
        text = "\n".join(f"{label} printed:\n{output}" for label, output in self)
        if self.dropped:
            text += f"\n... ({self.dropped} more calls printed something: more than the grader keeps for one check)"
        return text


