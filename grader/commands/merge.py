"""``softlookup merge OUT_1 ... OUT_N --out ALL``: the shares of a class, graded apart, joined into one gradebook.

Each ``OUT_K`` is what ``softlookup grade --shard K/N --out OUT_K`` wrote
(:mod:`grader.reports.shards`). The merge reads no student's work and runs
no check: it checks that the shares make one class (one kit edition, the
same exercises and export, every share there, every student of each share
graded, no student given two different results), copies each student's
files into ``ALL`` and writes from their results the files one ``grade`` of
the whole class writes: grades.csv, the summary and the platform's import
file, row for row the same. Anything wrong is one line and exit 2, before
``ALL`` is touched; the shares' folders are only read.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.engine import registry
from grader.engine.classes import similarity
from grader.engine.results import SubmissionResult, write_atomically
from grader.platforms import detect
from grader.platforms import Export
from grader.reports import gradebook, shards
from grader.reports.integrity import Integrity
from grader.usage import Parser, UsageError


# Without --class the merge reads no student's work, so it cannot compare the class's code.
NOT_COMPARED = ("Not compared: softlookup merge was not given the class (--class SUBMISSIONS compares everyone, as "
                "softlookup grade of the whole class does). Each share's own summary lists the pairs within that share.")


def parser() -> Parser:
    p = Parser(prog="softlookup merge", description="Join the shares of a class, each graded by softlookup grade "
                                                     "--shard K/N, into one gradebook, summary and import file.")
    p.add_argument("shares", type=Path, nargs="+", metavar="OUT_K", help="each share's --out folder")
    p.add_argument("--out", type=Path, required=True, help="where the whole class's gradebook goes (a new folder)")
    p.add_argument("--class", dest="submissions", type=Path, metavar="SUBMISSIONS",
                   help="the class's folder the shares graded: compare the whole class's code for work handed in "
                        "twice, as softlookup grade does (read, never run; without it the summary says not compared)")
    p.add_argument("--similarity", type=float, default=similarity.DEFAULT_THRESHOLD, metavar="SHARE",
                   help="with --class, softlookup grade's --similarity: the share of one's code in the other's "
                        f"(default {similarity.DEFAULT_THRESHOLD:g}; 0 compares nothing)")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    found = _shares(args.shares)
    if problems := shards.problems(found):
        raise UsageError(problems[0] + (f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""))
    first = next(iter(found.values()))
    graded, folders = _results(found)
    _check_out(args.out, found, first)
    export = _class(args, first)
    args.out.mkdir(parents=True, exist_ok=True)
    for student, folder in folders.items():
        target = gradebook.student_folder(args.out, student)
        if target.resolve() != folder.resolve():
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(folder, target)
    ordered = {student: graded[student] for student in first.everyone}
    gradebook.write_class(args.out, ordered, list(first.exercises), _findings(args, export, first, set(ordered)))
    platform = detect.LAYOUTS[first.layout]
    if platform.IMPORT_FILE:
        write_atomically(args.out / platform.IMPORT_FILE, platform.gradebook_import(ordered, first.assignment))
    shards.Shard(1, 1, first.kit, first.exercises, first.layout, first.assignment, first.everyone,
                 first.everyone).write(args.out, write_atomically)
    print(f"{len(ordered)} students from {first.count} shares; gradebook in {args.out / 'grades.csv'}")
    return 0


def _class(args, first: shards.Shard) -> Export | None:
    """The class ``--class`` names, read as the shares read it; UsageError where it is not the class they graded."""
    if args.submissions is None:
        return None
    if not 0 <= args.similarity <= 1:
        raise UsageError(f"--similarity is a share of a student's code, from 0 (compare nothing) to 1, not "
                         f"{args.similarity:g}")
    if not args.submissions.is_dir():
        raise UsageError(f"--class {args.submissions} is not a folder; give the folder the shares graded")
    export = detect.read(args.submissions.resolve(), first.layout)
    if tuple(student.id for student in export.students) != first.everyone:
        raise UsageError(f"--class {args.submissions} is not the class the shares graded ({len(export.students)} "
                         f"students there, {len(first.everyone)} in the shares, or others): give the folder they graded")
    return export


def _findings(args, export: Export | None, first: shards.Shard, graded: set[str]) -> Integrity:
    """The summary's findings beside the grades: one grade's of the whole class with --class, else none."""
    if export is None:
        return Integrity(not_compared=NOT_COMPARED)
    from grader.commands.grade import findings  # the grading command's imports, only where they are used

    exercises = [registry.exercise(module) for module in first.exercises]
    return findings(export, exercises, graded, args.similarity, registry.SOLUTIONS_DIR, args.out)


def _shares(folders: list[Path]) -> dict[Path, shards.Shard]:
    """Each folder's marker; a folder given twice counts once."""
    found = {}
    for folder in folders:
        if not folder.is_dir():
            raise UsageError(f"{folder} is not a folder; give the --out folders of softlookup grade --shard")
        try:
            found[folder.resolve()] = shards.Shard.read(folder)
        except ValueError as error:
            raise UsageError(str(error)) from None
    unknown = [module for module in next(iter(found.values())).exercises if module not in registry.BY_MODULE]
    if unknown:
        raise UsageError(f"the shares graded {unknown[0]}, which this kit has no exercise for: merge with the kit "
                         "that graded them")
    return found


def _results(found: dict[Path, shards.Shard]) -> tuple[dict[str, SubmissionResult], dict[str, Path]]:
    """Every student's result and folder, from the share that holds them; UsageError where one is missing or two
    shares disagree."""
    graded: dict[str, SubmissionResult] = {}
    folders: dict[str, Path] = {}
    for out, shard in found.items():
        missing = []
        for student in shard.share:
            folder = gradebook.student_folder(out, student)
            read = gradebook.read_student(folder)
            if read is None:
                missing.append(student)
                continue
            if student in graded and graded[student].to_plain() != read[1].to_plain():
                raise UsageError(f"{student} has different results in {folders[student].parent} and {out}: grade "
                                 "that student's share again and merge")
            graded[student], folders[student] = read[1], folder
        if missing:
            raise UsageError(f"share {shard.name} ({out}) has no result for {len(missing)} of its students "
                             f"({', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}): run its grade again "
                             "to finish it, then merge")
    left_out = [student for student in next(iter(found.values())).everyone if student not in graded]
    if left_out:
        raise UsageError(f"no share holds {len(left_out)} students ({', '.join(left_out[:3])}): grade every share")
    return graded, folders


def _check_out(out: Path, found: dict[Path, shards.Shard], first: shards.Shard):
    """``out`` must be new, empty, or an earlier merge of this same class: never a share, never other files."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; give a folder for the whole class's gradebook")
    if out.resolve() in found:
        raise UsageError(f"--out {out} is one of the shares; give a folder of its own for the whole class")
    if out.is_dir() and any(out.iterdir()):
        try:
            earlier = shards.Shard.read(out)
        except ValueError:
            earlier = None
        if earlier is None or earlier.everyone != first.everyone or earlier.count != 1:
            raise UsageError(f"--out {out} already holds other files; give a new or empty folder")
