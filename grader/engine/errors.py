"""Why a call into learner code gave no value, in words a learner understands, and the kit's own failures.

Every failure on the judge's side of the boundary is one of two kinds. A
:class:`SubmissionError` is the learner's: their code raised, hung, crashed,
was refused something by the confinement, or could not be found; its
:meth:`~SubmissionError.explain` is the sentence a check's verdict quotes. A
:class:`KitError` is the grader's (a reference solution or the kit's GPT-2
failed, a worker could not start): never blamed on the learner.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.engine.confinement import clean
from grader.engine.results import ErrorKind


@dataclass
class SubmissionError(Exception):
    """A call into learner code did not return a value; ``kind`` says why."""

    kind: ErrorKind  # a plain string of its vocabulary is taken too; any other is the kit's mistake
    message: str
    label: str = "your code"  # "lookup.soft_lookup()" or "importing lookup.py"
    where: tuple | None = None  # (file, line, code) in the learner's files
    output: str = ""  # what the call printed, if anything

    def __post_init__(self):
        self.kind = ErrorKind(self.kind)

    def __str__(self):
        return self.explain()

    def explain(self) -> str:
        return clean.clean_text(self._explained(), 5000)  # paths and labels too: every part must be encodable

    def _explained(self) -> str:
        name = self.label
        place = ""
        if self.where:
            file, line, code = self.where
            place = f" at {file} line {line}" + (f": `{code}`" if code else "")
        if self.kind == ErrorKind.NOT_IMPLEMENTED:
            return f"{name} is not implemented yet (it still raises NotImplementedError)."
        if self.kind == ErrorKind.TIMEOUT:
            return f"{name} {self.message}"
        if self.kind == ErrorKind.HUNG:
            if self.message == name:  # the function that hung, called again: said once
                return (f"{name} was not run again{place}: it ran past its time limit earlier in this grading; "
                        "fix it first")
            verb = "calls" if self.message.endswith("()") else "imports"
            return (f"{name} was stopped{place}: it {verb} {self.message}, which ran past its time limit earlier "
                    f"in this grading and is not run again: fix {self.message} first")
        if self.kind == ErrorKind.BUDGET:
            return f"{name} {self.message}"
        if self.kind == ErrorKind.MEMORY:
            return f"{name} tried to use more memory than allowed{place}."
        if self.kind == ErrorKind.EXIT:
            return f"{name} tried to end the program (sys.exit({self.message})){place}; return a value instead."
        if self.kind == ErrorKind.SYNTAX:
            return f"Python could not read your file: {self.message}{place}."
        if self.kind == ErrorKind.MISSING_FUNCTION:
            return (f"{self.message[0].upper()}{self.message[1:]}: the checks call it by the name its stub gives "
                    "it (renamed, or deleted?).")
        if self.kind in (ErrorKind.MISSING, ErrorKind.INVALID):
            return f"{self.message[0].upper()}{self.message[1:]}."
        if self.kind == ErrorKind.REFUSED:
            category, _, path = self.message.partition(": ")
            what, why = _REFUSALS.get(category, ("was refused something", "the checks run confined"))
            return f"{name} {what.format(path)}{place}: {why}."
        if self.kind in (ErrorKind.ENCODING, ErrorKind.CRASH, ErrorKind.DISK):
            return f"{name} {self.message}."
        return f"{name} raised {self.message}{place}."


# What the confinement refused, in the lesson's terms: the worker names which ("network", "process", "signal",
# "memory", "file: PATH").
_REFUSALS = {
    "network": ("tried to open a network connection",
                "the checks run offline, so code can neither download nor send anything"),
    "process": ("tried to start or signal another process",
                "the checks run your functions in one process, so compute the answer in Python itself"),
    "signal": ("tried to signal a process outside its own worker",
               "the checks run your functions alone, so compute the answer in Python itself"),
    "memory": ("tried to keep memory outside its own worker (an in-memory file, shared memory or a larger pipe)",
               "the checks count all the memory your code uses, so keep your data in Python's own objects"),
    "file": ("tried to open {}, outside its own folder",
             "your code may read only its own folder and Python's libraries, and write only a temporary folder"),
}


class KitError(RuntimeError):
    """Trusted code (a reference solution, the kit's GPT-2) failed: the grader's problem, not the learner's."""


class IsolationError(KitError):
    """Isolation was required and this machine does not offer all of it."""


def hang_label(module: str, function: str) -> str:
    """How a function that hung is named to the learner: "softmax.softmax()", or "softmax.py" for its import."""
    return f"{module}.{function}()" if function else f"{module}.py"
