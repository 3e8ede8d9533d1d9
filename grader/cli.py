"""``softlookup``: one command, one module per subcommand, each with a ``main``."""

from __future__ import annotations

import codecs
import importlib
import importlib.util
import sys

from grader.warm.client import check as warm_check

COMMANDS = {
    "check": ("grader.commands.check", "grade a folder of exercise modules"),
    "grade": ("grader.commands.grade", "grade a class: one subfolder (or .zip) per student"),
    "merge": ("grader.commands.merge", "join the shares of a class graded with grade --shard K/N"),
    "hint": ("grader.commands.hint", "hints for an exercise you are stuck on"),
    "release": ("grader.commands.release", "for instructors: make assignments/ (never over edits there), a student bundle, a Gradescope autograder or an nbgrader course"),
    "gpt2-report": ("grader.commands.report", "measure the lesson's GPT-2 numbers and draw the head"),
    "fetch-gpt2": ("grader.commands.fetch", "download GPT-2 small (on a machine with internet)"),
    "dev": ("grader.commands.dev", "for the kit's authors: check that the exercises are in step, or add one"),
}

def available() -> dict[str, tuple[str, str]]:
    """The commands whose modules are installed: a student bundle leaves the instructor's out."""
    return {name: entry for name, entry in COMMANDS.items() if importlib.util.find_spec(entry[0]) is not None}


# What the report's marks become where the output cannot hold them; any other such character becomes "?".
PLAIN_MARKS = {"✓": "+", "✗": "x", "○": "o", "·": "."}


def _plainly(error: UnicodeEncodeError):
    return "".join(PLAIN_MARKS.get(c, "?") for c in error.object[error.start:error.end]), error.end


def never_fail_to_print():
    """Where the output is not UTF-8 (Windows writes a file or a pipe in its code page, cp1252), a character it
    cannot hold is written plainly instead of ending the command with UnicodeEncodeError."""
    codecs.register_error("softlookup-plainly", _plainly)
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        if encoding != "utf8" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="softlookup-plainly")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    never_fail_to_print()
    commands = available()
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: softlookup {" + ",".join(commands) + "} [options]   (softlookup COMMAND --help for more)")
        for name, (_, summary) in commands.items():
            print(f"  {name:<14}{summary}")
        return 0 if argv else 2
    if argv[0] == "--version":
        from importlib.metadata import version

        print(f"softlookup {version('softlookup')}")
        return 0
    name, rest = argv[0], argv[1:]
    if name in COMMANDS and name not in commands:  # a student bundle leaves the instructor's commands out
        print(f"softlookup: {name} is for the kit's repository; this edition has: {', '.join(commands)}",
              file=sys.stderr)
        return 2
    if name not in commands:
        print(f"softlookup: unknown command {name!r}; choose one of: {', '.join(commands)}", file=sys.stderr)
        return 2
    if name == "check" and (code := warm_check(rest)) is not None:  # before check's imports: they take 0.4 s
        return code
    from grader.usage import run  # argparse, which a check the warm server answers has no use for

    return run(importlib.import_module(commands[name][0]).main, rest, f"softlookup {name}")


if __name__ == "__main__":
    sys.exit(main())
