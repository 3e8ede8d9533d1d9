"""``softlookup fetch-gpt2 FOLDER``: download GPT-2 small once, on a machine with internet.

Grading never downloads anything. Run this where the Hugging Face hub is
reachable, copy FOLDER to the grading machine, and point the kit at it with
``SOFTLOOKUP_GPT2=FOLDER`` (or ``--model FOLDER`` for gpt2-report).
"""

from __future__ import annotations

import sys
from pathlib import Path

from grader.usage import Parser, UsageError

HUB_CACHE = ".cache"  # the hub's own record of a download, in the folder it downloads to


def foreign_files(folder: Path, own: list[str]) -> list[str]:
    """What ``folder`` holds besides GPT-2's own files (``own``): a learner's work, say, never written among."""
    if not folder.exists():
        return []
    if not folder.is_dir():
        return [folder.name]
    return sorted(entry.name for entry in folder.iterdir() if entry.name not in own and entry.name != HUB_CACHE)


def main(argv=None) -> int:
    parser = Parser(prog="softlookup fetch-gpt2", description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where to put GPT-2 small (about 550 MB)")
    args = parser.parse_args(argv)
    from grader.lesson import models

    if others := foreign_files(args.folder, models.HUB_FILES):
        raise UsageError(f"{args.folder} holds other files ({', '.join(others[:3])}{' ...' if len(others) > 3 else ''}), "
                         "which GPT-2's 550 MB would land among or replace: give a new or empty folder")
    try:
        folder = models.fetch_gpt2(args.folder)
    except models.GPT2NotFound as error:
        print(f"softlookup fetch-gpt2: {error}", file=sys.stderr)
        return 1
    print(f"GPT-2 small is in {folder}: `softlookup check --gpt2-model {folder}` (or SOFTLOOKUP_GPT2={folder} "
          "set before `softlookup check`) grades the lesson's claims on it")
    return 0
