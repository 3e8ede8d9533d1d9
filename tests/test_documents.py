"""The kit's documents: a README short enough to read, and every relative link in them leads somewhere.

The README keeps what a newcomer needs (what the kit is, the quick start, the
three roads, the exercises) and links to the rest: ``docs/learners.md``,
``docs/instructors.md``, ``docs/speed.md``, ``SECURITY.md`` and
``CONTRIBUTING.md``. A link to a file that is not there, or to a heading that
file does not have, is a reader's dead end.
"""

import os
import re
from pathlib import Path

import pytest

from grader.engine import registry

# The kit's documents, README first: it links to each of the others.
DOCUMENTS = ("README.md", "docs/learners.md", "docs/instructors.md", "docs/speed.md", "SECURITY.md",
             "CONTRIBUTING.md")
README_MAX_WORDS = 1200
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")


def prose(text: str) -> str:
    """The text with its code blocks and inline code taken out, where a bracket is no link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces as hyphens."""
    found = set()
    for line in FENCE.sub("", path.read_text()).splitlines():
        if match := re.match(r"#{1,6} (.+)", line):
            found.add(re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-"))
    return found


def relative_links(name: str) -> list[str]:
    return [target for target in LINK.findall(prose((registry.KIT_ROOT / name).read_text()))
            if not re.match(r"[a-z]+:", target)]  # http:, https:, mailto: lead off the kit


def test_the_readme_is_at_most_1200_words():
    words = len((registry.KIT_ROOT / "README.md").read_text().split())  # as `wc -w README.md` counts them
    assert words <= README_MAX_WORDS, f"README.md has {words} words: move some into docs/"


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_document_is_there(name):
    assert (registry.KIT_ROOT / name).is_file()


def test_the_readme_links_to_every_other_document():
    linked = {(registry.KIT_ROOT / target.split("#")[0]).resolve() for target in relative_links("README.md")}
    assert {(registry.KIT_ROOT / name).resolve() for name in DOCUMENTS[1:]} <= linked


@pytest.mark.parametrize("name", DOCUMENTS + tuple(
    str(path.relative_to(registry.KIT_ROOT)) for path in sorted((registry.KIT_ROOT / "docs").glob("*.md"))
    if str(path.relative_to(registry.KIT_ROOT)) not in DOCUMENTS))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(name):
    document = registry.KIT_ROOT / name
    links = relative_links(name)
    assert links, f"{name} links nowhere"
    dead = []
    for target in links:
        file, _, anchor = target.partition("#")
        path = (document.parent / file).resolve() if file else document
        if not path.exists():
            dead.append(f"{target}: no file {os.path.relpath(path, registry.KIT_ROOT)}")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            dead.append(f"{target}: no heading with anchor #{anchor} in {path.name}")
    assert not dead, f"{name}: " + "; ".join(dead)


def test_the_catalogue_figures_contributing_quotes_are_the_catalogues():
    """CONTRIBUTING.md counts the wrong implementations, those named, and the names: from the catalogue itself."""
    from mistakes import MISTAKES

    text = " ".join((registry.KIT_ROOT / "CONTRIBUTING.md").read_text().split())
    names = {name for exercise in registry.EXERCISES for name in exercise.mistakes}
    assert f"catalogues {len(MISTAKES)} wrong implementations" in text
    assert f"({sum(bool(m.named) for m in MISTAKES)} of them are named, with {len(names)} names in all)" in text


# Programs a venv holds: typed bare, they are the venv's only where it is active; in a fresh shell, the system's or
# none ("softlookup: command not found").
VENV_PROGRAMS = {"softlookup", "pip", "pytest", "jupyter", "nbgrader", "python"}
ACTIVATE = ("source .venv/bin/activate", ".venv\\Scripts\\activate")
SHELL_BLOCK = re.compile(r"^ *```(?:bash|sh|shell|console)?\n(.*?)^ *```", re.MULTILINE | re.DOTALL)


def bare_commands_before_activation(text: str) -> list[str]:
    """The commands of ``text``'s shell blocks that start a venv's program by its bare name, in a block that
    comes before the document says how to activate the venv (both ways: Linux and macOS, Windows)."""
    found = []
    for block in SHELL_BLOCK.finditer(text):
        before = text[:block.start()]
        for line in block.group(1).splitlines():
            told = all(way in before for way in ACTIVATE)
            for command in re.split(r"&&|;|\|", line.split("#")[0]):
                words = command.split()
                if words and words[0] in VENV_PROGRAMS and not told:
                    found.append(command.strip())
            before += line + "\n"  # an earlier line of the block may activate it
    return found


@pytest.mark.parametrize("name", DOCUMENTS + ("the student bundle's README",))
def test_every_command_runs_as_written_in_a_fresh_shell(name):
    """After the quick start, in a new shell: a command is either the venv's by its path (``.venv/bin/pip``),
    or comes after the document has said to activate the venv."""
    if name.endswith("README"):
        from grader.releases import bundle

        text = bundle.readme({exercise.module: [] for exercise in registry.EXERCISES}, "2.6.0")
    else:
        text = (registry.KIT_ROOT / name).read_text()
    assert not bare_commands_before_activation(text), f"{name}: typed bare before any word on activating the venv"
