"""``softlookup dev``: keep the kit's exercises in step, and start a new one (in the kit's repository).

``softlookup dev check`` (:mod:`.consistency`) reads the kit, never grades
it, and in seconds lists whatever is out of step, one line each saying what
to do; ``--fix`` first writes the README's table of exercises (:mod:`.readme`)
from the registry and the checks' points. ``softlookup dev new NAME``
(:mod:`.scaffold`) scaffolds exercise NAME, with ``TODO(dev new)`` where the
author's text goes (``dev check`` lists what is left).
"""

from __future__ import annotations

import sys
from pathlib import Path

from grader.commands.dev import consistency, readme, scaffold
from grader.commands.dev.kit import Kit
from grader.engine import registry
from grader.usage import Parser, UsageError


def check(kit: Kit, fix: bool = False) -> int:
    if fix:
        readme.fix(kit, consistency.checks_of(kit))
    found = consistency.problems(kit)
    print("\n".join(found) if found else f"{len(kit.exercises)} exercises, all in step")
    return 1 if found else 0


def main(argv=None, root: Path = registry.KIT_ROOT) -> int:
    """The command, on the kit at ``root``: the installed one, or the copy a test points it at."""
    parser = Parser(prog="softlookup dev", description=__doc__.splitlines()[0])
    actions = parser.add_subparsers(dest="action", required=True, metavar="{check,new}")
    checking = actions.add_parser("check", help="list what is out of step between the exercises and the kit, in "
                                                "seconds")
    checking.add_argument("--fix", action="store_true",
                          help="first write the README's table of exercises from the registry and the checks")
    scaffolding = actions.add_parser("new", help="scaffold a new exercise and print the steps left")
    scaffolding.add_argument("name", help="the exercise's module, and its first function (a lowercase identifier)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    kit = Kit(root)
    if not (kit.solutions.is_dir() and kit.tests.is_dir()):
        raise UsageError(f"this is for the kit's repository, with solutions/ and tests/ beside grader/; "
                         f"{kit.root} is not one")
    if args.action == "check":
        return check(kit, args.fix)
    if refused := scaffold.new(kit, args.name):
        raise UsageError(refused)
    return 0
