"""``softlookup dev``: keep the kit's exercises in step, and start a new one (in the kit's repository).

``softlookup dev check`` (:mod:`.consistency`) reads the kit, never grades
it, and in seconds lists whatever is out of step, one line each saying what
to do. ``softlookup dev new NAME`` (:mod:`.scaffold`) scaffolds exercise
NAME, with ``TODO(dev new)`` where the author's text goes (``dev check``
lists what is left).
"""

from __future__ import annotations

import sys

from grader.commands.dev import consistency, scaffold
from grader.commands.dev.consistency import SOLUTIONS, TESTS
from grader.engine import registry
from grader.usage import Parser, UsageError


def check() -> int:
    found = consistency.problems()
    print("\n".join(found) if found else f"{len(registry.EXERCISES)} exercises, all in step")
    return 1 if found else 0


def main(argv=None) -> int:
    parser = Parser(prog="softlookup dev", description=__doc__.splitlines()[0])
    actions = parser.add_subparsers(dest="action", required=True, metavar="{check,new}")
    actions.add_parser("check", help="list what is out of step between the exercises and the kit, in seconds")
    scaffolding = actions.add_parser("new", help="scaffold a new exercise and print the steps left")
    scaffolding.add_argument("name", help="the exercise's module, and its first function (a lowercase identifier)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not (SOLUTIONS.is_dir() and TESTS.is_dir()):
        raise UsageError(f"this is for the kit's repository, with solutions/ and tests/ beside grader/; "
                         f"{registry.KIT_ROOT} is not one")
    if args.action == "check":
        return check()
    if refused := scaffold.new(args.name):
        raise UsageError(refused)
    return 0
