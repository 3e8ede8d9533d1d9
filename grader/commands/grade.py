"""``softlookup grade SUBMISSIONS --out OUT``: grade a class, from a course platform's export or one folder per student.

The command reads the export (:mod:`grader.platforms`), hands the students
whose record does not stand to the engine's batch (:func:`grader.engine.classes.batch.grade_class`),
records each student as their result comes back (:class:`grader.reports.class_record.ClassRecord`:
their files and their row of grades.csv, whole on the disk before the next), shows progress, and
at the end or on Ctrl-C writes the gradebook and the summary from every
student graded so far. Run it again and a student is skipped while their
record stands: the same work, the same edition of the kit, the same
settings; anyone else is graded (again), and the run says how many and why
(``--force`` grades everyone again). So a run stopped in any way, SIGKILL
included, resumes where it stopped. A crash is a result like any other, so
a rerun does not try that student first again.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
from collections import Counter
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from grader.engine import edition, options, registry
from grader.engine.classes import batch, similarity
from grader.engine.confinement import system
from grader.engine.confinement.protections import unconfined
from grader.engine.options import Options
from grader.engine.results import ErrorKind, SubmissionResult, write_atomically
from grader.engine.submissions import intake, notebooks
from grader.engine.submissions.intake import Student, escaped
from grader.platforms import Export, detect, folders, github_classroom, listing
from grader.reports import class_record, gradebook, shards, summary
from grader.reports.class_record import ClassRecord
from grader.reports.integrity import Integrity
from grader.usage import Parser, UsageError

NOT_FOUND = (ErrorKind.MISSING, ErrorKind.INVALID)  # why a check had nothing to grade: no module, no readable submission


def parser() -> Parser:
    p = Parser(prog="softlookup grade", description="Grade a class: a course platform's export of submissions, or "
                                                    "one subfolder (or .zip) per student.")
    p.add_argument("submissions", type=Path,
                   help="the export's folder (Canvas, Moodle, Blackboard, Gradescope, GitHub Classroom clones) or a "
                        "folder with one subfolder (or .zip) per student")
    p.add_argument("--out", type=Path, required=True, help="where the gradebook, summary and feedback go")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="students graded at once (default 1)")
    p.add_argument("--layout", choices=list(detect.LAYOUTS),
                   help="read SUBMISSIONS as this layout instead of the one detected")
    p.add_argument("--assignment", default="softlookup", metavar="NAME",
                   help="the assignment's column in Canvas's import file: \"<title> (<assignment id>)\" fills that "
                        "assignment (default: softlookup, which Canvas adds as a new assignment)")
    options.add_exercise_option(p)
    options.declare(p.add_argument, ("solutions", "time_limit", "import_time_limit", "memory_limit", "time_budget"))
    p.add_argument("--force", action="store_true", help="grade again students already graded in OUT")
    p.add_argument("--shard", default="1/1", metavar="K/N",
                   help="grade share K of N only, for a class graded on N machines and joined by softlookup merge: "
                        "each student is in one share, the same on every machine (default: 1/1, the whole class)")
    p.add_argument("--similarity", type=float, default=similarity.DEFAULT_THRESHOLD, metavar="SHARE",
                   help="list in the summary pairs of students whose own code for an exercise is alike: at least "
                        f"this share of one's code in the other's (default {similarity.DEFAULT_THRESHOLD:g}; 0 "
                        "compares nothing). Evidence for a person to look at, never a grade")
    p.add_argument("--allow-unconfined", action="store_true",
                   help="grade even where this machine cannot confine student code fully (not recommended)")
    return p


def usage_problem(args) -> str | None:
    if not system.confines() and not args.allow_unconfined:  # before anything is read: nobody could be graded
        return unconfined(system.name()).refusal()
    if system.name() == "Windows":
        return ("softlookup grade waits on its judges' pipes, which Windows cannot do: grade a class on Linux "
                "(WSL will do)")
    if not args.submissions.is_dir():
        return f"{args.submissions} is not a folder; give the folder with one subfolder (or .zip) per student"
    if args.out.exists() and not args.out.is_dir():
        return f"--out {args.out} is a file; give a folder for the gradebook and the feedback"
    if args.out.resolve() == args.submissions.resolve() or args.submissions.resolve() in args.out.resolve().parents:
        return "--out must not be inside the submissions folder (it would be graded as a student)"
    if args.jobs < 1:
        return f"--jobs must be 1 or more, not {args.jobs}"
    try:
        shards.parse(args.shard)
    except ValueError as error:
        return str(error)
    if not 0 <= args.similarity <= 1:
        return f"--similarity is a share of a student's code, from 0 (compare nothing) to 1, not {args.similarity:g}"
    if problem := Options.of(args).problem():  # every option's own mistake first: the folder is read last
        return problem
    if (held := intake.exercise_folder(args.submissions)) is not None:  # a class holds students, never exercises
        named = ", ".join(sorted(path.name for path in notebooks.chosen_sources(held, True).values()))
        return (f"{args.submissions} holds exercises itself ({named}): that is one student's work, not a class; "
                f"check it with `softlookup check {args.submissions}`, or give the folder above it, with one "
                "folder (or .zip) per student")
    return None


def judge_arguments(args, exercises: list[registry.Exercise]) -> list[str]:
    """What every judge passes to pytest: the chosen exercises' checks, hidden ones included, and the options;
    full confinement is required unless --allow-unconfined."""
    return options.pytest_command(exercises, dataclasses.replace(Options.of(args), require_isolation=not args.allow_unconfined))


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if problem := usage_problem(args):
        raise UsageError(problem)
    exercises = options.chosen_exercises(args)
    export = detect.read(args.submissions.resolve(), args.layout)
    everyone, (number, count) = [student.id for student in export.students], shards.parse(args.shard)
    if count > 1:
        export = dataclasses.replace(export, students=[s for s in export.students if shards.share_of(s.id, count) == number])
    print(f"softlookup grade: {escaped(export.described())}", file=sys.stderr)
    if warning := mixed_layouts(args.submissions.resolve(), export):
        print(f"softlookup grade: warning: {warning}", file=sys.stderr)
    if not export.students:
        print(f"softlookup grade: there is no student to grade in {args.submissions}; give the folder of the "
              "platform's export (unzipped), or one with a subfolder (or .zip) per student", file=sys.stderr)
        return 1
    if other := _other_share(args.out, number, count):
        raise UsageError(other)
    args.out.mkdir(parents=True, exist_ok=True)
    kit = edition.kit_edition(Options.of(args).reference_folder)
    shards.Shard(number, count, kit, tuple(e.module for e in exercises), export.layout, args.assignment,
                 tuple(everyone), tuple(s.id for s in export.students)).write(args.out, write_atomically)
    system.close_to_workers([args.submissions, args.out])  # every student's work and every result
    record = ClassRecord(args.out.resolve(), [exercise.module for exercise in exercises], kit,
                         settings(args, exercises))
    try:
        return _graded_class(args, export, exercises, record)
    finally:
        record.close()


def _graded_class(args, export: Export, exercises: list[registry.Exercise], record: ClassRecord) -> int:
    """Grade every student whose record does not stand (everyone with --force), then write the class's files."""
    standing = {student.id: record.standing(student) for student in export.students}
    todo = [s for s in export.students if args.force or standing[s.id][0] is None]
    why = {s.id: standing[s.id][1] for s in todo}
    if not todo:
        print(f"softlookup grade: nothing new: all {len(export.students)} students were graded in {args.out} "
              "before, and nothing grading reads has changed since (--force grades them again)",
              file=sys.stderr)
    elif not args.force and (again := _regraded(why.values(), "to regrade")):
        print(f"softlookup grade: {again}", file=sys.stderr)
    record.begin({s.id: result for s in export.students if (result := standing[s.id][0]) is not None}, len(todo))
    interrupted, failure, fresh, first = False, "", [], threading.Event()
    last_steps = _warm_last_steps(first, args.similarity)
    try:
        failure = _graded(todo, args.jobs, record, exercises, judge_arguments(args, exercises), fresh, first)
    except KeyboardInterrupt:
        interrupted = True
    except Exception as error:  # the coordinator's own fault: the gradebook of those graded is still written
        failure = f"the batch stopped ({batch.described(error)})"
    first.set()
    last_steps.join()
    try:
        graded = write_gradebook(record, export, exercises, args.assignment, args.similarity,
                                 Options.of(args).reference_folder)
    except OSError as error:  # the disk is full past the space kept aside: each student's own files stand
        raise UsageError(f"the class's files could not be written in {args.out} ({batch.described(error)}); every "
                         "student graded is recorded in their folder: free some space and run the same command "
                         "again") from None
    written = ", ".join(str(args.out / name) for name in ("grades.csv", *_import_file(export.layout)))
    if args.force:
        counted = f"{len(fresh)} graded again"
    else:
        reasons = [why[student] for student in fresh]
        counted = "; ".join(filter(None, [f"{reasons.count(class_record.NEW)} new", _regraded(reasons)]))
    done = f"{len(graded)} of {len(export.students)} students graded ({counted}); gradebook in {written}"
    if failure:
        raise UsageError(f"{failure}; {done}")
    if interrupted:
        print(f"Interrupted: {done}. Run the same command again to grade the rest.", file=sys.stderr)
        return 130
    print(done)
    print(summary.statuses_line(graded))  # every way a submission failed to run, by its status (grades.csv's)
    if not any(map(_found_anything, graded.values())):
        print(f"softlookup grade: none of the {len(export.students)} students could be graded: no exercise module "
              f"was found in any submission read as {export.title} (see their feedback.md; --layout reads the "
              "folder as another layout)", file=sys.stderr)
        return 1
    return 0


def findings(export: Export, exercises: list[registry.Exercise], graded: set[str], similar: float,
             solutions: Path, out: Path | None = None) -> Integrity:
    """What the summary says beside the grades, of the students graded (issue 46): pairs whose own code is alike
    at ``similar`` or more (0: not compared), the stubs made from ``solutions`` counting for nothing; and, for
    GitHub Classroom clones, the kit's files each repository changed. ``out``: the class's folder, where the
    code's tokens are kept for the next run (:func:`grader.engine.classes.similarity.pairs`)."""
    from grader.releases import handed_out  # nbformat, for the notebooks handed out: only once a class is graded

    students = [student for student in export.students if student.id in graded]
    found = Integrity(threshold=similar, compared=similar > 0)
    if found.compared:
        modules = [exercise.module for exercise in exercises]
        code = {student.id: similarity.sources(student, modules) for student in students}
        found.similar = similarity.pairs(code, handed_out.boilerplate(solutions, exercises), similar, store=out)
    if export.layout == github_classroom.NAME:
        expected = handed_out.bundle_digests(solutions)
        changes = {s.id: handed_out.kit_changes(Path(s.path), expected) for s in students if s.path and not s.problem}
        if alike := _changed_alike(changes):
            named = ", ".join(sorted(alike)[:5]) + (f" and {len(alike) - 5} more" if len(alike) > 5 else "")
            print(f"softlookup grade: warning: every repository holds {named} alike, and this kit releases "
                  f"{'it' if len(alike) == 1 else 'them'} otherwise: was the bundle released with another version "
                  "of the kit, Python, torch or transformers? Not counted against any student", file=sys.stderr)
        found.kit_changes = {student: sorted(set(files) - alike) for student, files in changes.items()}
    return found


def _changed_alike(changes: dict[str, dict[str, str]]) -> set[str]:
    """The kit's files that every repository (two or more) changed the same way: the kit moved, not the class."""
    if len(changes) < 2:
        return set()
    first, *others = changes.values()
    return {name for name, digest in first.items() if all(other.get(name) == digest for other in others)}


def mixed_layouts(folder: Path, export: Export) -> str:
    """A warning where the folder was read as one folder per student although a platform names several of its
    entries as its export names them: two layouts in one folder (students' folders beside Canvas's files), of
    which one is read wrongly, each of its files a student of its own. "" where nothing looks mixed."""
    entries, _ = listing(folder)
    if export.layout != folders.NAME or len(entries) < 3:
        return ""
    for platform in detect.PLATFORMS:
        named = [escaped(entry.name) for entry in entries if platform.recognised(entry)]
        if len(named) >= 2:
            return (f"{len(named)} of the {len(entries)} entries are named as a {platform.TITLE} names them "
                    f"({', '.join(named[:2])}{', ...' if len(named) > 2 else ''}) and the others are not: this "
                    f"folder looks like two layouts in one. Read as {folders.TITLE}, each of those entries is a "
                    "student of its own; put each layout in a folder of its own and grade them apart, or read this "
                    f"one as the export with --layout {platform.NAME} (the rest is then ignored, with why)")
    return ""


def settings(args, exercises: list[registry.Exercise]) -> str:
    """What a grading was asked for besides the kit and the work, as one string recorded with each result: the
    exercises, each one's limits as grading applies them (a limit given equal to its default is the same
    setting), the time budget, the memory limit, and whether workers may run unconfined."""
    chosen = Options.of(args)
    return json.dumps({"exercises": {e.module: [chosen.time_limit_for(e), chosen.import_time_limit_for(e)]
                                     for e in exercises},
                       "budget": chosen.budget, "memory": chosen.memory_bytes, "unconfined": args.allow_unconfined},
                      sort_keys=True)


def _regraded(reasons, said: str = "regraded") -> str:
    """How many are (to be) graded again, and why: "3 regraded: work changed; 120 regraded: checks changed"."""
    counted = Counter(reason for reason in reasons if reason != class_record.NEW)
    return "; ".join(f"{count} {said}: {reason}" for reason, count in counted.most_common())


def write_gradebook(record: ClassRecord, export: Export, exercises: list[registry.Exercise], assignment: str,
                    similar: float = 0.0, solutions: Path = registry.SOLUTIONS_DIR) -> dict[str, SubmissionResult]:
    """grades.csv, summary.md, summary.html and the platform's import file from every student whose record
    stands (graded so far, and nothing changed since).

    Who a student is comes from the export read now, so a corrected export renames them without a regrade.
    """
    graded = {s.id: batch.identified(found, s) for s in export.students
              if (found := record.standing(s)[0]) is not None}
    found = findings(export, exercises, set(graded), similar, solutions, record.out)
    record.write(lambda: gradebook.write_class(record.out, graded, [exercise.module for exercise in exercises], found))
    for name in _import_file(export.layout):
        text = detect.LAYOUTS[export.layout].gradebook_import(graded, assignment)
        record.write(lambda: write_atomically(record.out / name, text))
    return graded


def _other_share(out: Path, number: int, count: int) -> str:
    """Why ``out`` cannot take this share: it holds another share's students; "" where it can."""
    try:
        found = shards.Shard.read(out)
    except ValueError:
        return ""  # a new folder, or one from before shares: a whole class
    if (found.number, found.count) != (number, count):
        return (f"{out} holds share {found.name} of a class; give each share an --out of its own "
                f"(this is --shard {number}/{count})")
    return ""


def _import_file(layout: str) -> list[str]:
    """The gradebook import the platform of ``layout`` takes back, if it takes one."""
    platform = detect.LAYOUTS[layout]
    return [platform.IMPORT_FILE] if platform.IMPORT_FILE else []


def _found_anything(result: SubmissionResult) -> bool:
    """Whether grading found something of the student's to grade: a module, even one that fails every check."""
    return any(item.error not in NOT_FOUND for exercise in result.exercises for item in exercise.checks)


def _warm_last_steps(first: threading.Event, similar: float) -> threading.Thread:
    """Import what the class's last steps need (matplotlib for the summary's charts, nbformat for the texts
    the similarity pass discounts: a second or more together) in a thread, once ``first`` is set: the first
    student's result is in. Before it, the judges' start has the machine to itself, and the first result
    comes sooner; after it, the imports overlap the grading instead of following it."""
    def warm():
        first.wait()
        summary.warm_charts()
        if similar > 0:
            from grader.releases import handed_out  # noqa: F401 (nbformat)

    thread = threading.Thread(target=warm, daemon=True)
    thread.start()
    return thread


def _graded(todo: list[Student], jobs: int, record: ClassRecord, exercises: list[registry.Exercise],
            pytest_args: list[str], fresh: list[str] | None = None, first: threading.Event | None = None) -> str:
    """Grade ``todo``, recording each student as their result comes (and their id into ``fresh``; ``first``
    is set once the first is recorded); why the batch stopped, if it did."""
    progress = Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("left"), TimeRemainingColumn(), disable=not sys.stdout.isatty())
    with progress:
        task = progress.add_task("grading", total=len(todo))

        def recorded(student: Student, result: SubmissionResult):
            record.add(student, result)
            if fresh is not None:
                fresh.append(student.id)
            if first is not None:
                first.set()
            progress.advance(task)

        return batch.grade_class(todo, jobs, exercises, pytest_args, recorded, workdir=record.out)
