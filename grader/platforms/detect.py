"""Which layout a submissions folder is in, so that ``softlookup grade`` needs no flag for any platform's export.

Each platform recognises the entries its export is made of (Canvas's and
Blackboard's file names, Moodle's and Gradescope's folder names, Gradescope's
metadata file, cloned repositories). The folder is read as the platform that
recognises the most of its entries, provided that is more than half of
them; otherwise as one folder or zip per student, which takes every entry
for a student and so loses no one. An export unzipped into a folder of its
own (``assignment_123_export/``, ``attention-submissions/``) is read from
inside that folder. ``--layout`` names the layout instead, and the line
printed before grading says which was used.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from grader.engine.submissions.intake import Student
from grader.platforms import Export, blackboard, canvas, folders, github_classroom, gradescope, listing, moodle

PLATFORMS = (gradescope, canvas, moodle, blackboard, github_classroom)  # on a tie, the first
LAYOUTS = {platform.NAME: platform for platform in (*PLATFORMS, folders)}


def read(folder: Path, layout: str | None = None) -> Export:
    """The students in ``folder`` read as ``layout`` (a name of :data:`LAYOUTS`), or as the layout detected."""
    entries, litter = listing(folder)
    if (inside := _export_folder(entries, layout)) is not None:
        (entries, more_litter), folder = listing(inside), inside
        litter += more_litter
    platform = LAYOUTS[layout] if layout else _detected(entries)
    students, ignored = platform.read(folder, entries)
    return Export(platform.NAME, platform.TITLE, _unique(students), litter + ignored)


def _detected(entries: list) -> ModuleType:
    """The platform that recognises most of ``entries``, if more than half; else one folder per student."""
    counts = [(sum(1 for entry in entries if platform.recognised(entry)), platform) for platform in PLATFORMS]
    count, platform = max(counts, key=lambda pair: pair[0])  # max keeps the first of equal counts
    return platform if 2 * count > len(entries) else folders


def _export_folder(entries: list, layout: str | None) -> Path | None:
    """The one folder among ``entries``, where that is what an export was unzipped into.

    Only a folder whose entries a platform recognises counts (the one named by ``layout``, if any): a
    class of one student's folder stays a class of one.
    """
    if len(entries) != 1 or not entries[0].is_dir(follow_symlinks=False):
        return None
    inside, _ = listing(Path(entries[0].path))
    chosen = LAYOUTS[layout] if layout else _detected(inside)
    if chosen is folders or not any(chosen.recognised(entry) for entry in inside):
        return None
    return Path(entries[0].path)


def _unique(students: list[Student]) -> list[Student]:
    """The students with one id each (an id names a student's folder of results): where two share one, the
    later is kept with a problem that says so, and the row of that id shows it."""
    seen: dict[str, Student] = {}
    for student in students:
        if student.id in seen:
            student.problem = (f"two submissions have the id {student.id} (a folder and a .zip of one name, or "
                               "one student twice in the export); keep one")
        seen[student.id] = student
    return list(seen.values())
