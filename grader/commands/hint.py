"""``softlookup hint EXERCISE``: the next hint you have not seen yet, one at a time.

The registry's hints go from the idea to the specific step, so each one asks
a little less of the learner; showing them one at a time lets a learner stop
as soon as one is enough. Which hints were seen is kept per user, in
``$XDG_STATE_HOME/softlookup/hints.json`` (default ``~/.local/state``): a
small JSON object of exercise -> number of hints seen. A state file that
cannot be read or written never stops a hint from being shown.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from grader.engine import registry
from grader.usage import Parser


def state_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "softlookup" / "hints.json"


def load_seen(path: Path) -> tuple[dict[str, int], str]:
    """Hints seen per exercise, and what was wrong with the record ("" if nothing): a bad record counts as none seen."""
    try:
        seen = json.loads(path.read_text())
    except (FileNotFoundError, NotADirectoryError):
        return {}, ""
    except (OSError, ValueError) as error:
        return {}, f"ignoring the record of hints seen in {path}: cannot read it ({error})"
    if not isinstance(seen, dict) or not all(isinstance(n, int) and n >= 0 for n in seen.values()):
        return {}, f"ignoring the record of hints seen in {path}: it is not a map of exercise to hints seen"
    return seen, ""


def save_seen(path: Path, seen: dict[str, int]) -> str:
    """Write the record atomically; return what went wrong ("" if nothing), which costs the learner nothing."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".hints-", delete=False) as handle:
            json.dump(seen, handle, indent=1, sort_keys=True)
        os.replace(handle.name, path)
    except OSError as error:
        return f"could not record which hints you have seen in {path} ({error.strerror or error})"
    return ""


def main(argv=None) -> int:
    parser = Parser(prog="softlookup hint", description=__doc__.splitlines()[0])
    parser.add_argument("exercise", choices=list(registry.BY_MODULE), help="the exercise's module name")
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--all", action="store_true", help="show every hint of the exercise")
    choice.add_argument("--reset", action="store_true", help="forget which hints you have seen")
    args = parser.parse_args(argv)
    exercise = registry.exercise(args.exercise)
    hints, path = exercise.hints, state_file()
    print(f"{exercise.module}.py: {exercise.title}")
    if args.all:
        for number, hint in enumerate(hints, 1):
            print(f"  {number}. {hint}")
        return 0
    seen, problem = load_seen(path)
    if args.reset:
        seen.pop(exercise.module, None)
        print(f"  Hints start again from the first: softlookup hint {exercise.module}")
    else:
        shown = min(seen.get(exercise.module, 0), len(hints))
        if shown == len(hints):
            print(f"  You have seen all {len(hints)} hints. softlookup hint {exercise.module} --all shows them "
                  "again; --reset starts over.")
            return 0
        print(f"  Hint {shown + 1} of {len(hints)}: {hints[shown]}")
        left = len(hints) - shown - 1
        print(f"  {left} more: run this again for the next." if left else "  That was the last hint.")
        seen[exercise.module] = shown + 1
    unsaved = save_seen(path, seen)
    problem = problem or unsaved
    if problem:  # one line at most: the learner came for the hint, not for this
        print(f"softlookup hint: {problem}", file=sys.stderr)
    return 0
