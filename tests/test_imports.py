"""The import layers of grader/, as CONTRIBUTING.md's "How it works" states them: no arrow runs back up, no circle.

Each package may import from its own layer and the layers before it in
:data:`LAYERS`, never from one after it; every import counts, those inside a
function included. Inside the engine the same rule holds between its floors,
:data:`ENGINE_FLOORS`: the confinement imports nothing of the judge's but the
vocabulary beneath every floor, the judging of one submission nothing of a
class's. A module imported by name at run time (the lesson's model
builder, a command by cli) is named through the registry or cli's table, so it
draws no arrow here.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from grader.engine import registry

LAYERS = ["usage", "engine", "reports", "platforms", "lesson", "checks", "releases", "commands", "warm", "cli"]
# grader/engine/'s floors, lowest first, as CONTRIBUTING's map draws them. A module's floor is that of the longest
# name here that its own name starts with: the engine's top-level modules, the judging of one submission, share
# a floor with submissions/ (each imports the other, module by module, with no circle).
ENGINE_FLOORS = [
    {"grader.engine.registry", "grader.engine.results"},  # the vocabulary: the exercises, the result model
    {"grader.engine.confinement"},  # the learner's side of the pipe, and the pipe
    {"grader.engine", "grader.engine.submissions"},  # judging one submission; what a handed-in folder holds
    {"grader.engine.classes"},  # a class, graded as a sequence of submissions
]
PACKAGE = registry.PACKAGE_DIR


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The grader modules that ``path`` imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("grader.")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("grader"):
            for alias in node.names:  # `from grader.engine import registry` imports the module grader.engine.registry
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in MODULES else node.module)
    return {name for name in found if name != "grader"}


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}
GRAPH = {name: imports(path) for name, path in MODULES.items()}


def layer(module: str) -> int:
    return LAYERS.index(module.split(".")[1])


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "grader"))
def test_no_import_runs_back_up(module):
    upward = sorted(target for target in GRAPH[module] if target in MODULES and layer(target) > layer(module))
    assert not upward, f"{module} ({LAYERS[layer(module)]}) imports from a later layer: {upward}"


def floor(module: str) -> int:
    """The floor of an engine module: that of the longest prefix of its name in :data:`ENGINE_FLOORS`."""
    named = [(len(name), number) for number, names in enumerate(ENGINE_FLOORS) for name in names
             if module == name or module.startswith(name + ".")]
    return max(named)[1]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("grader.engine.")))
def test_no_engine_import_runs_back_up(module):
    upward = sorted(target for target in GRAPH[module] if target.startswith("grader.engine.") and target in MODULES
                    and floor(target) > floor(module))
    assert not upward, f"{module} (the engine's floor {floor(module)}) imports from a higher floor: {upward}"


def test_every_engine_package_has_a_floor():
    packages = {name.rsplit(".", 1)[0] for name in MODULES if name.startswith("grader.engine.")}
    assert packages <= set().union(*ENGINE_FLOORS)


def test_no_circle():
    circles, state = [], {}

    def visit(module, path):
        state[module] = "open"
        for target in sorted(GRAPH.get(module, ())):
            if state.get(target) == "open":
                circles.append(path[path.index(target):] + [target])
            elif target in MODULES and target not in state:
                visit(target, path + [target])
        state[module] = "done"

    for module in sorted(MODULES):
        if module not in state:
            visit(module, [module])
    assert not circles, circles


def test_every_package_has_a_layer():
    assert {module.split(".")[1] for module in MODULES if module != "grader"} <= set(LAYERS)


@pytest.mark.parametrize("command", ["grade", "merge"])
def test_a_class_coordinator_imports_neither_pytest_nor_numpy(command):
    """`softlookup grade` starts its judges once its own imports are done, and each judge imports pytest and numpy
    for itself: the coordinator importing them too came first, and put off every judge's start (and the class's
    first result) by a seventh of a second. merge reads results and needs neither."""
    listing = f"import sys, grader.commands.{command}; print(*sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", listing], capture_output=True, text=True, check=True).stdout.split()
    assert not {"pytest", "numpy", "torch"} & set(loaded)
