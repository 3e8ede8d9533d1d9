"""Gradescope: "Export Submissions" in; each student's results.json (Gradescope's own schema) out.

In. The export holds a folder ``submission_<id>`` per submission, with the
files as they were uploaded, and ``submission_metadata.yml``, which names who
submitted each one (as read by otter-grader, ucbds-infra/otter-grader
``otter/grade/metadata.py``)::

    submission_123456:
      :submitters:
      - :name: Jane Doe
        :sid: '12345'
        :email: jane@example.edu
      :created_at: 2025-02-03 10:15:22.000000000 -08:00

A group submission lists several submitters: each is a student of their own,
graded from the group's folder. A student's id is their student id (sid),
else their email, else the submission's folder name; the metadata file
itself is named as ignored, with what it was read for.

What is read as who: the folder's name (``submission_<id>``, Gradescope's),
and from the metadata only plain text where a name, an id or an email
belongs (a list or a mapping there is not read). The metadata is read
within bounds (:func:`_loaded`: its size, nesting and number of nodes, an
alias counting as all it repeats); a file that cannot be read so costs
the names it would have given, no more: every submission is still graded,
under its folder's name, and the line before grading says why.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml  # already installed with nbgrader and transformers; declared in pyproject all the same

from grader.engine.submissions.intake import Student, one_line
from grader.platforms import link_problem, printable

NAME = "gradescope"
TITLE = "Gradescope export"
IMPORT_FILE = None  # each student's results.json, in Gradescope's schema, is written anyway
METADATA = "submission_metadata.yml"
METADATA_BYTES = 16 * 2**20  # a class's metadata with every submission's results is a few MB at most
METADATA_DEPTH = 32  # nesting: Gradescope's is 4 to 6 deep, with a submission's results
METADATA_NODES = 2_000_000  # values read (an alias counts as every value it repeats): 16 MB of YAML is far fewer
PLAIN_CHARS = 320  # the longest name, id or email taken from it
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # only its parser is used: no YAML object is ever built

_FOLDER = re.compile(r"^submission_\d+$")


def recognised(entry: os.DirEntry) -> bool:
    return entry.name == METADATA or (entry.is_dir(follow_symlinks=False) and _FOLDER.match(entry.name) is not None)


def read(folder: Path, entries: list[os.DirEntry]) -> tuple[list[Student], list[tuple[str, str]]]:
    """A student per submitter of each submission folder, named as the metadata names them."""
    submitters, why = _metadata(folder / METADATA)
    students, ignored = [], []
    folders = {}
    for entry in entries:
        shown = printable(entry.name)
        if entry.name == METADATA:
            ignored.append((shown, why))
        elif _FOLDER.match(entry.name) is None:
            ignored.append((shown, "not a submission folder (submission_<id>) of a Gradescope export"))
        else:
            folders[entry.name] = entry
    for submission in sorted(set(folders) | set(submitters)):
        entry = folders.get(submission)
        for who in submitters.get(submission) or [{}]:
            student = Student(_id(who) or printable(submission), entry.path if entry else str(folder),
                              name=_text(who, ":name"), email=_text(who, ":email"))
            if entry is None:
                student.problem = f"Gradescope's metadata lists {submission}, but the export has no such folder"
            elif entry.is_symlink():
                student.problem = link_problem(printable(submission))
            students.append(student)
    return students, ignored


def _metadata(path: Path) -> tuple[dict[str, list[dict]], str]:
    """Who submitted each submission folder, and what became of the metadata file (read, or why not)."""
    if not path.is_file() or path.is_symlink():
        return {}, "not a file that Gradescope writes"
    try:
        with open(path, "rb") as handle:
            data = handle.read(METADATA_BYTES + 1)
        if len(data) > METADATA_BYTES:
            raise ValueError(f"larger than {METADATA_BYTES // 2**20} MB")
        plain = _loaded(data.decode("utf-8", errors="replace"))
    except (OSError, ValueError, yaml.YAMLError, RecursionError, MemoryError) as error:
        why = one_line(str(error) if isinstance(error, _Unbounded) else type(error).__name__, 120)
        return {}, f"Gradescope's metadata, which could not be read ({why}): ids are folder names"
    if not isinstance(plain, dict):
        return {}, "Gradescope's metadata, but not a list of submissions: ids are folder names"
    submitters = {}
    for submission, fields in plain.items():
        people = fields.get(":submitters") if isinstance(fields, dict) else None
        submitters[str(submission)] = [who for who in people if isinstance(who, dict)] if isinstance(people, list) \
            else []
    return submitters, "Gradescope's metadata: read for the students' names and emails"


class _Unbounded(ValueError):
    """Metadata past a bound: nested too deep, or too many values (an alias bomb)."""


def _loaded(text: str):
    """The YAML document in ``text`` as dicts, lists and strings, built from yaml's stream of events within bounds.

    Why not ``yaml.safe_load``: its composer recurses once per level (100,000 levels crash it), and an alias
    is a reference that costs nothing to load but all it repeats to walk or print (a 500-byte file repeats a
    list 9**9 times). Here nesting stops at :data:`METADATA_DEPTH`, and every value counts towards
    :data:`METADATA_NODES`, an alias as all the values of what it repeats (which is shared, never copied).
    Scalars stay the text they are (``'012345'`` and ``012345`` alike), plain ``~``, ``null`` or nothing
    becoming None. Raises :class:`_Unbounded` past a bound, ValueError for a key that is not text.
    """
    frames: list[list] = [[None, None, [], 0]]  # [anchor, kind, items, values] of each collection being read
    anchors: dict[str, tuple[object, int]] = {}  # anchor -> (its value, how many values it holds)
    values = 0

    def add(value, count: int, anchor: str | None):
        nonlocal values
        values += count
        if values > METADATA_NODES:
            raise _Unbounded(f"more than {METADATA_NODES:,} values, aliases counted as what they repeat")
        if anchor:
            anchors[anchor] = (value, count)
        frames[-1][2].append(value)
        frames[-1][3] += count

    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.ScalarEvent):
            plain = event.style in (None, "") and event.value in ("", "~", "null", "Null", "NULL")
            add(None if plain else event.value, 1, event.anchor)
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in anchors:  # undefined, or the collection it is inside of
                raise _Unbounded(f"an alias (*{one_line(event.anchor, 40)}) to nothing read before it")
            value, count = anchors[event.anchor]
            add(value, count, None)
        elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if len(frames) > METADATA_DEPTH:
                raise _Unbounded(f"nested more than {METADATA_DEPTH} levels deep")
            frames.append([event.anchor, dict if isinstance(event, yaml.MappingStartEvent) else list, [], 0])
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, kind, items, count = frames.pop()
            if kind is dict and not all(key is None or isinstance(key, str) for key in items[::2]):
                raise ValueError("a key that is not text")
            add(dict(zip(items[::2], items[1::2])) if kind is dict else items, count + 1, anchor)
    documents = frames[0][2]
    return documents[0] if documents else None


def _text(who: dict, key: str) -> str:
    """A name, id or email: plain text only, and no longer than a name, an id or an email is."""
    value = who.get(key)
    return printable(value).strip() if isinstance(value, str) and len(value) <= PLAIN_CHARS else ""


def _id(who: dict) -> str:
    return _text(who, ":sid") or _text(who, ":email")
