"""What protects the machine from a learner's code in a worker, as the worker reports it and the judge reads it.

Grading other people's code needs four protections (the filesystem, signals,
the network, processes); on Linux :mod:`grader.engine.confinement.confine` gives each by
whichever mechanism the kernel offers, and the worker reports which hold.
macOS and Windows offer none of those mechanisms: there a worker reports
:func:`unconfined`, which ``softlookup check`` shows as one line (a learner
checking their own work needs no protection from themselves), and which the
instructor's roads (``grade``, the Gradescope autograder, nbgrader) refuse in
a sentence. This module is plain data, so the judge reads it on every system.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

# Each protection, what it means for the learner's code, and what gives it where it is missing.
PROTECTIONS = {
    "filesystem": ("reading only its own folder and Python's",
                   "Landlock (Linux 5.13 or newer) or a grader running as root, which gives each worker a uid of "
                   "its own"),
    "signals": ("no signals to other processes", "seccomp, Landlock ABI 6, a PID namespace or a uid of its own"),
    "network": ("no network", "seccomp or a network namespace"),
    "processes": ("no new processes", "seccomp, or RLIMIT_NPROC under a uid other than root's"),
}

# The errnos the seccomp filter answers two kinds of refused call with: no call of Linux's own gives them (its
# largest errno is 133), so the worker can tell the learner what was refused, whatever call their code made.
SIGNAL_REFUSED = 3901  # a route to a signal for a process outside the worker (kill, an I/O owner, a terminal)
MEMORY_REFUSED = 3902  # memory held outside the address space (in-memory files, shared memory, pipe buffers)


@dataclass
class Protections:
    """Which mechanism holds each protection in a worker, as it measured them before any learner code ran."""

    held: dict = field(default_factory=dict)  # protection -> the mechanisms that hold it (empty: it does not hold)
    landlock_abi: int = 0
    scratch_capped: bool = False  # the scratch folder is a private, size-limited tmpfs
    namespaces: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)  # what the machine refused on the way, in words
    unconfined_on: str = ""  # a system with none of the mechanisms ("macOS", "Windows"): nothing was tried

    def missing(self) -> list[str]:
        """The protections that do not hold, each in words with what would give it; one line where none could."""
        if self.unconfined_on:
            return [f"the confinement used for grading, which {self.unconfined_on} does not offer (fine for "
                    "checking your own work)"]
        return [f"{words} (needs {remedy})" for name, (words, remedy) in PROTECTIONS.items()
                if not self.held.get(name)]

    def mechanisms(self) -> str:
        """One line: which mechanism holds each protection here."""
        return "; ".join(f"{name} by {' and '.join(self.held[name])}" for name in PROTECTIONS if self.held.get(name))

    def refusal(self) -> str:
        """The sentence a road that requires every protection refuses with: what is missing, and what gives it."""
        if self.unconfined_on:
            return (f"learner code cannot be confined on {self.unconfined_on}, which has none of Linux's Landlock, "
                    "seccomp or namespaces: grade other people's code on Linux (a Linux container, or WSL on "
                    "Windows, will do); softlookup grade --allow-unconfined grades without")
        lacking = [PROTECTIONS[name] for name in PROTECTIONS if not self.held.get(name)]
        what = "; ".join(words for words, _ in lacking)
        remedies = "; ".join(remedy for _, remedy in lacking)
        return (f"learner code cannot be confined here (it would run without {what}): it needs {remedies}; "
                "softlookup grade --allow-unconfined grades without")

    def to_plain(self) -> dict:
        return asdict(self)

    @classmethod
    def from_plain(cls, plain) -> "Protections":
        """A worker's report, every field checked for its type; ValueError if one is not.

        The worker sends it before any learner code runs, so a malformed one is
        the kit's failure, which the judge reports as such.
        """
        if not isinstance(plain, dict) or not set(plain) <= set(cls.__dataclass_fields__):
            raise ValueError("a report of protections is a table of the known fields")
        report = cls(**plain)
        if not (isinstance(report.held, dict) and all(name in PROTECTIONS and _texts(ways)
                                                      for name, ways in report.held.items())
                and type(report.landlock_abi) is int and type(report.scratch_capped) is bool
                and isinstance(report.namespaces, dict)
                and all(isinstance(name, str) and type(made) is bool for name, made in report.namespaces.items())
                and _texts(report.notes) and isinstance(report.unconfined_on, str)):
            raise ValueError("a field of the report of protections is not of its type")
        return report


def _texts(items) -> bool:
    return isinstance(items, list) and all(isinstance(item, str) for item in items)


def unconfined(system: str) -> Protections:
    """What a worker on ``system`` (macOS, Windows) reports: no protection holds, and none was tried."""
    return Protections(held={name: [] for name in PROTECTIONS}, unconfined_on=system)
