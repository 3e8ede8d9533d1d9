"""The README's table of exercises, written from the registry and the checks' points, never typed by hand.

The README holds it between two marker lines. ``softlookup dev check``
compares that block with the one written here and ``--fix`` puts this one in
its place, so the README's prose may say anything: every number that adding
an exercise moves (each exercise's points, the totals) stands in the block.
"""

from __future__ import annotations

from grader.commands.dev.kit import Kit
from grader.engine import registry

START = "<!-- exercise-table:start: written by softlookup dev check, see CONTRIBUTING.md -->"
END = "<!-- exercise-table:end -->"


def table(exercises: tuple[registry.Exercise, ...], checks: dict[str, list[registry.Check]]) -> str:
    """The block: a row per exercise, in the registry's order, with its public, hidden and total points, and
    the totals of all."""
    def row(first: str, second: str, found: list[registry.Check]) -> str:
        public = sum(check.points for check in found if not check.hidden)
        hidden = sum(check.points for check in found if check.hidden)
        return f"| {first} | {second} | {public:g} | {hidden:g} | {public + hidden:g} |"

    return "\n".join([
        START,
        "| module | functions (the contract) | public points | hidden points | points |",
        "| --- | --- | ---: | ---: | ---: |",
        *(row(f"`{exercise.module}.py`", ", ".join(f"`{name}`" for name in exercise.functions),
              checks[exercise.module]) for exercise in exercises),
        row(f"all {len(exercises)}", "", [check for found in checks.values() for check in found]),
        END])


def _span(text: str) -> tuple[int, int] | None:
    start = text.find(START)
    end = text.find(END, start)
    return None if start < 0 or end < 0 else (start, end + len(END))


def problems(kit: Kit, checks: dict[str, list[registry.Check]]) -> list[str]:
    text = kit.readme.read_text()
    if (span := _span(text)) is None:
        return [f"README.md: no table of exercises: put back the lines {START} and {END} under "
                '"## The exercises", then run softlookup dev check --fix']
    if text[span[0]:span[1]] != table(kit.exercises, checks):
        return [f"README.md:{text.count(chr(10), 0, span[0]) + 1}: the table of exercises is out of step with the "
                "registry and the checks' points: run softlookup dev check --fix"]
    return []


def fix(kit: Kit, checks: dict[str, list[registry.Check]]) -> None:
    """Write the table into the README's block, where it has one (else ``problems`` says what to do)."""
    text = kit.readme.read_text()
    if span := _span(text):
        kit.readme.write_text(text[:span[0]] + table(kit.exercises, checks) + text[span[1]:])
