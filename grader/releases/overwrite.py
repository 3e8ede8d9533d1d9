"""The one rule for a command that writes files someone may have edited: never over their edits unasked.

A release writes a plan, ``{path: text}``. A planned file missing is
written; one already holding that text is left alone; one holding other
text is someone's work (a learner's exercise, an instructor's course), so the
command refuses, in one line naming those files, unless given ``--force``:
then each is first copied aside, into a new folder named by the date and
time beside the folder written, and the command says where.
"""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

from grader.usage import UsageError

SHOWN = 4  # changed files named in the refusal; the rest counted


def changed(plan: dict[Path, str]) -> list[Path]:
    """The planned files that exist with other text than planned: what writing the plan would replace."""
    return [path for path, text in plan.items()
            if path.exists() and (not path.is_file() or path.read_text(errors="replace") != text)]


def names(paths: list[Path], root: Path) -> str:
    """``a.py, b.ipynb and 3 more``: the files of ``paths``, relative to ``root``, as a reader takes them in."""
    shown = [str(path.relative_to(root)) for path in paths[:SHOWN]]
    if len(paths) > SHOWN:
        shown.append(f"{len(paths) - SHOWN} more")
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def keep_aside(paths: list[Path], root: Path, now: datetime | None = None) -> Path:
    """Copy ``paths`` (under ``root``) into a new folder beside ``root``, named by the date; returns that folder."""
    stamp = (now or datetime.now()).strftime("%Y-%m-%d-%H%M%S")
    for attempt in range(100):
        folder = root.parent / f"{root.name}-kept-{stamp}{f'-{attempt}' if attempt else ''}"
        try:
            folder.mkdir()
            break
        except FileExistsError:
            continue
    else:
        raise UsageError(f"could not make a new folder beside {root} for the copies; nothing was written")
    for path in paths:
        target = folder / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            shutil.copytree(path, target, symlinks=True)
        else:
            shutil.copy2(path, target, follow_symlinks=False)
    return folder


def guard(plan: dict[Path, str], root: Path, force: bool, command: str) -> Path | None:
    """Before ``plan`` is written under ``root``: refuse where it would replace other text, unless ``force``;
    forced, the files it replaces are copied aside first. Returns the folder of copies, if any were made."""
    replaced = changed(plan)
    if not replaced:
        return None
    if not force:
        raise UsageError(f"{root} holds changes that this would overwrite ({names(replaced, root)}), so nothing was "
                         f"written; to write it anyway, give `{command} --force`: it first copies those files into a "
                         f"dated folder beside {root.name} and says where")
    return keep_aside(replaced, root)
