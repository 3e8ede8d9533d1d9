"""``softlookup hint EXERCISE``: the next hint you have not seen yet, one at a time.

The registry's hints go from the idea to the specific step, so each one asks
a little less of the learner; showing them one at a time lets a learner stop
as soon as one is enough. They follow the failing check: where the last
``softlookup check`` or the learner's plain ``pytest`` failed in some of an
exercise's functions only (both record which, :mod:`grader.engine.hint_record`),
the hints about those come first.

Which hints were seen is kept per user, in
``$XDG_STATE_HOME/softlookup/hints.json`` (default ``~/.local/state``): a
small JSON object of exercise -> the numbers of the hints seen (a number
alone, from earlier versions, means that many from the first). A state file
that cannot be read or written never stops a hint from being shown.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from grader.engine import hint_record, registry
from grader.reports import markup
from grader.usage import Parser


def load_seen(path: Path) -> tuple[dict[str, set[int]], str]:
    """The numbers of the hints seen per exercise, and what was wrong with the record ("" if nothing).

    A bad record counts as none seen.
    """
    seen, problem = hint_record.read(path)
    if problem:
        return {}, f"ignoring the record of hints seen in {path}: {problem}"
    if not isinstance(seen, dict) or not all(_numbers(value) is not None for value in seen.values()):
        return {}, f"ignoring the record of hints seen in {path}: it is not a map of exercise to hints seen"
    return {exercise: _numbers(value) for exercise, value in seen.items()}, ""


def _numbers(value) -> set[int] | None:
    if type(value) is int and value >= 0:  # the first ``value`` hints, as earlier versions recorded them
        return set(range(1, value + 1))
    if isinstance(value, list) and all(type(number) is int and number > 0 for number in value):
        return set(value)
    return None


def save_seen(path: Path, seen: dict[str, set[int]]) -> str:
    """Write the record; return what went wrong ("" if nothing), which costs the learner nothing."""
    problem = hint_record.write(path, {exercise: sorted(numbers) for exercise, numbers in seen.items()})
    return f"could not record which hints you have seen in {path} ({problem})" if problem else ""


def hint_order(exercise: registry.Exercise, failing: list[str]) -> list[int]:
    """Hint numbers (from 1) in the order to show them: first those about a failing function, then the rest.

    When every function fails (or none is known to), that is the registry's
    order, from the idea to the specific step.
    """
    numbers = range(1, len(exercise.hints) + 1)
    about = [n for n in numbers if set(getattr(exercise.hints[n - 1], "about", ())) & set(failing)]
    if set(failing) >= set(exercise.functions):
        about = []
    return about + [n for n in numbers if n not in about]


def main(argv=None) -> int:
    parser = Parser(prog="softlookup hint", description=markup.plain(__doc__.splitlines()[0]))
    parser.add_argument("exercise", choices=list(registry.BY_MODULE), help="the exercise's module name")
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--all", action="store_true", help="show every hint of the exercise")
    choice.add_argument("--reset", action="store_true", help="forget which hints you have seen")
    args = parser.parse_args(argv)
    exercise = registry.exercise(args.exercise)
    hints, path = exercise.hints, hint_record.seen_file()
    console = Console(highlight=False)

    def say(text: str):
        console.print(markup.rich(text), soft_wrap=True)  # a terminal wraps it; a pipe gets whole lines

    say(f"{exercise.module}.py: {exercise.title}")
    if args.all:
        for number, hint in enumerate(hints, 1):
            say(f"  {number}. {hint}")
        return 0
    seen, problem = load_seen(path)
    if args.reset:
        seen.pop(exercise.module, None)
        say(f"  Hints start again from the first: softlookup hint {exercise.module}")
    else:
        failing = hint_record.failing_functions(exercise)
        unseen = [n for n in hint_order(exercise, failing) if n not in seen.get(exercise.module, set())]
        if not unseen:
            say(f"  You have seen all {len(hints)} hints. softlookup hint {exercise.module} --all shows them "
                "again; --reset starts over.")
            return 0
        number = unseen[0]
        if number != min(unseen):
            names = ", ".join(f"`{name}`" for name in failing)
            say(f"  Your last check failed in {names} only, so {'its' if len(failing) == 1 else 'their'} hints "
                "come first.")
        # Counted in the order they are shown, which follows the failing function: the 1st, the 2nd, ...
        say(f"  Hint {len(hints) - len(unseen) + 1} of {len(hints)}: {hints[number - 1]}")
        left = len(unseen) - 1
        say(f"  {left} more: run this again for the next." if left else "  That was the last hint.")
        seen[exercise.module] = seen.get(exercise.module, set()) | {number}
    unsaved = save_seen(path, seen)
    problem = problem or unsaved
    if problem:  # one line at most: the learner came for the hint, not for this
        print(f"softlookup hint: {problem}", file=sys.stderr)
    return 0
