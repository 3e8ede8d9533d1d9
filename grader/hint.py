"""``softlookup hint EXERCISE``: the registry's hints, for a learner who is stuck."""

from __future__ import annotations

from grader import registry
from grader.cli import Parser


def main(argv=None) -> int:
    parser = Parser(prog="softlookup hint", description=__doc__.splitlines()[0])
    parser.add_argument("exercise", choices=list(registry.BY_MODULE), help="the exercise's module name")
    exercise = registry.exercise(parser.parse_args(argv).exercise)
    print(f"{exercise.module}.py: {exercise.title}")
    for number, hint in enumerate(exercise.hints, 1):
        print(f"  {number}. {hint}")
    return 0
