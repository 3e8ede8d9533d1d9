"""A class in shares: which students a share holds, and what each ``grade --out`` records so shares can be joined.

A course too big for one machine is graded as N shares, one ``softlookup grade
--shard K/N`` each, by whatever runs N copies of a command (a GitHub Actions
matrix, a Slurm array job, a Kubernetes Indexed Job), and joined by
``softlookup merge``. Nothing is scheduled here: a student's share is a digest
of their id (:func:`share_of`), so every machine puts every student in the
same share whatever order its listing of the export gives, and a rerun of a
share resumes like any run.

Every ``grade --out`` folder holds :data:`MARKER` (a whole class is share 1 of
1): the share, the kit edition and exercises that graded it, the platform
layout and Canvas assignment its import file needs, the whole class's ids in
the export's order (so a merge lists students as one run does) and the ids
of this share. :func:`problems` is what ``merge`` refuses on.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

MARKER = "shard.json"
FORMAT = 1


def share_of(student: str, shares: int) -> int:
    """The share (1 to ``shares``) that holds ``student``: a digest of the id, the same on every machine."""
    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % shares + 1


def parse(text: str) -> tuple[int, int]:
    """``"K/N"`` as (K, N); ValueError with the one line to show where it is not a share."""
    number, _, count = text.partition("/")
    if not (number.isdigit() and count.isdigit() and 1 <= int(number) <= int(count)):
        raise ValueError(f"--shard takes K/N, share K of N with 1 <= K <= N (as --shard 2/20), not {text!r}")
    return int(number), int(count)


@dataclass(frozen=True)
class Shard:
    """What one ``grade --out`` folder says of itself (:data:`MARKER`)."""

    number: int
    count: int
    kit: str  # the kit edition that graded it
    exercises: tuple[str, ...]
    layout: str
    assignment: str
    everyone: tuple[str, ...]  # the whole class's ids, in the export's order
    share: tuple[str, ...]  # this share's ids

    @property
    def name(self) -> str:
        return f"{self.number}/{self.count}"

    def write(self, out: Path, write_atomically):
        plain = {"format": FORMAT, **asdict(self)}
        write_atomically(Path(out) / MARKER, json.dumps(plain) + "\n")

    @classmethod
    def read(cls, out: Path) -> "Shard":
        """The marker of ``out``; ValueError with the line to show where there is none, or it is not one."""
        path = Path(out) / MARKER
        try:
            plain = json.loads(path.read_text(encoding="utf-8"))
            if plain.pop("format") != FORMAT:
                raise ValueError
            shard = cls(**{name: tuple(value) if isinstance(value, list) else value for name, value in plain.items()})
        except FileNotFoundError:
            raise ValueError(f"{out} holds no {MARKER}: give folders that softlookup grade --out wrote") from None
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            raise ValueError(f"{path} is not a shard's record (written by another version of the kit, or edited): "
                             "grade that share again into an empty folder") from None
        if not (1 <= shard.number <= shard.count and all(isinstance(i, str) for i in (*shard.everyone, *shard.share))):
            raise ValueError(f"{path} is not a shard's record: grade that share again into an empty folder")
        return shard


def problems(found: dict[Path, Shard]) -> list[str]:
    """Why the shares in ``found`` (folder -> its marker) cannot be joined into one class, a line each."""
    first_folder, first = next(iter(found.items()))
    lines = []
    for what, key in (("kit edition", "kit"), ("exercises", "exercises"), ("class", "everyone"),
                      ("number of shares", "count"), ("layout", "layout"), ("assignment", "assignment")):
        others = [folder for folder, shard in found.items() if getattr(shard, key) != getattr(first, key)]
        if others:
            lines.append(f"{others[0]} and {first_folder} differ in their {what}: grade every share with the same "
                         "kit, options and export")
    if lines:
        return lines
    by_number: dict[int, list[Path]] = {}
    for folder, shard in found.items():
        by_number.setdefault(shard.number, []).append(folder)
    missing = [number for number in range(1, first.count + 1) if number not in by_number]
    if missing:
        shown = ", ".join(f"{number}/{first.count}" for number in missing[:5]) + (" ..." if len(missing) > 5 else "")
        lines.append(f"no folder holds share {shown}: grade it (--shard K/{first.count}) and merge again")
    for folder, shard in found.items():
        stray = [student for student in shard.share if share_of(student, shard.count) != shard.number]
        if stray:
            lines.append(f"{folder}: {len(stray)} of its students belong to another share ({stray[0]}): it was "
                         "not written by softlookup grade --shard")
    return lines
