"""``softlookup release``: make the learners' stubs and notebooks from the reference solutions.

``solutions/`` is the single source: :mod:`grader.releases.stubs` turns each
solution region into a ``raise NotImplementedError``, and each module also
becomes a notebook beside it (:mod:`grader.releases.assignments`). ``--check``
only compares, for CI and the kit's tests: it fails when ``assignments/`` is
out of date.
``softlookup release student OUT``, ``gradescope ZIP`` and ``nbgrader
COURSE`` make the releases for a class instead (:data:`RELEASES`).

``assignments/`` is also where a learner works: a file there that differs
from what the release would write is never replaced unasked
(:mod:`grader.releases.overwrite`); ``--force`` copies such files aside first.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from grader.engine import registry
from grader.releases import overwrite
from grader.releases.assignments import out_of_date, planned
from grader.releases.stubs import MarkerError
from grader.usage import Parser, UsageError

RELEASES = {  # softlookup release NAME ...: the other things made from solutions/
    "student": ("grader.releases.bundle", "OUT: the students' bundle, without the reference or the hidden checks"),
    "gradescope": ("grader.releases.gradescope", "ZIP: a Gradescope autograder"),
    "nbgrader": ("grader.releases.nbgrader_course", "COURSE: an nbgrader course"),
}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] and argv[0] in RELEASES:
        return importlib.import_module(RELEASES[argv[0]][0]).main(argv[1:])
    parser = Parser(prog="softlookup release", description=__doc__.splitlines()[0],
                    epilog="; ".join(f"softlookup release {name} {what}" for name, (_, what) in RELEASES.items())
                    + " (each has its --help)")
    parser.add_argument("--solutions", type=Path, default=registry.SOLUTIONS_DIR, metavar="DIR",
                        help="the reference solutions the stubs are made from (default: the kit's solutions/)")
    parser.add_argument("--assignments", type=Path, default=registry.KIT_ROOT / "assignments", metavar="DIR",
                        help="the folder to write (default: the kit's assignments/)")
    parser.add_argument("--check", action="store_true",
                        help="only report whether assignments/ is up to date (exit 1 if not); writes nothing")
    parser.add_argument("--force", action="store_true",
                        help="replace files that differ from the release, edits in them included, after copying "
                             "them into a dated folder beside assignments/")
    args = parser.parse_args(argv)
    if not args.solutions.is_dir():
        parser.error(f"{args.solutions} is not a folder of solutions (give --solutions DIR)")
    try:
        plan = planned(args.solutions, args.assignments)
    except (MarkerError, FileNotFoundError) as error:
        raise UsageError(str(error)) from None
    stale = out_of_date(plan)
    if args.check:
        for path in stale:
            print(f"out of date: {path} (run `softlookup release`)", file=sys.stderr)
        return 1 if stale else 0
    kept = overwrite.guard(plan, args.assignments, args.force, "softlookup release")
    if kept:
        print(f"copied what was there before into {kept}")
    args.assignments.mkdir(parents=True, exist_ok=True)
    for path in stale:
        path.write_text(plan[path])
        print(f"wrote {path}")
    if not stale:
        print(f"{args.assignments} is up to date")
    return 0
