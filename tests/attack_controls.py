"""Positive controls for the attack corpus (tests/attacks.py): each attack run where nothing stops it, with its effect.

An attack that earns 0 points under the confinement proves nothing unless the
same code does harm where the protection it aims at is absent: a typo, a moved
path or a changed API would earn 0 too. :func:`unconfined` runs an attack's
module without the kit's confinement, cheaply (no grading: the module is
imported and called once), in a disposable copy of the kit, and returns what it
did; :data:`EFFECTS` says, for each effect an attack declares, how that shows.

The module runs at the bottom of a chain of four processes that stands in for
the supervisor, the fork server and the judge (the chain's top leads a session
and group of its own, so a group signal stays inside it), beside a sleeping
neighbour whose environment holds :data:`SECRET`, a listener on 127.0.0.1 and a
results file. Where this machine can make them, it all runs in a PID and mount
namespace of its own, whose first process is the harness: an attack that kills
every process it can name, forks 200 or fills the disk is then held to that
namespace, a scratch tmpfs of :data:`SCRATCH_MB` and a /tmp it cannot write.
The attacks marked ``harmful`` run only there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SECRET = "neighbours-secret-do-not-leak"
SCRATCH_MB = 400  # the disk-filler's whole disk; the hoarders hold 320 MB of files in it
RIGHT = 2.0  # exact_lookup("b", ["a", "b"], [1.0, 2.0]): what an attack that got the reference answers

# The stand-in chain. Level 1 holds the other end of the socket that level 0 (the worker) is given, and reports what
# arrived on it once level 0 is gone (an attack may end its own process). Level 0 imports the module and calls it.
CHAIN = r'''
import json, os, socket, subprocess, sys, threading, time
levels, folder, module_name, patience = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
if levels > 1:
    sys.exit(subprocess.run([sys.executable, __file__, str(levels - 1), folder, module_name, patience]).returncode)
if levels == 1:
    mine, theirs = socket.socketpair()
    code = subprocess.run([sys.executable, __file__, "0", folder, module_name, patience, str(theirs.fileno())],
                          pass_fds=[theirs.fileno()]).returncode
    mine.setblocking(False)
    arrived = b""
    try:
        while chunk := mine.recv(2**20):
            arrived += chunk
    except OSError:
        pass
    print(json.dumps({"arrived": arrived[:4096].hex(), "worker status": code}), flush=True)
    sys.exit(code)
worker_socket = socket.socket(fileno=int(sys.argv[5]))  # as a worker holds one, from the judge
sys.path.insert(0, folder)
report = {}

def call():
    import importlib
    module = importlib.import_module(module_name)
    try:
        returned = module.exact_lookup("b", ["a", "b"], [1.0, 2.0]) if module_name == "lookup" else None
        report["returned"] = returned if isinstance(returned, (int, float, str)) else repr(type(returned))
        report["size"] = len(returned) if hasattr(returned, "__len__") else None
    except BaseException as error:
        report["raised"] = f"{type(error).__name__}: {str(error)[:100_000]}"

thread = threading.Thread(target=call, daemon=True)
thread.start()
thread.join(float(patience))  # the call, however loaded the machine; a stall on purpose is left to its sleep
report["stalled"] = thread.is_alive()
codec = sys.modules.get("grader.engine.confinement.codec")
if codec is not None:  # a codec patched by the module: does the judge's next encoding stall?
    encoding = threading.Thread(target=codec.to_plain, args=(0,), daemon=True)
    encoding.start()
    encoding.join(2)
    report["codec stalls"] = encoding.is_alive()
print(json.dumps(report), flush=True)
worker_socket.send(b"x")  # the judge's next request, for a route that waits for one
time.sleep(0.3)
os._exit(0)
'''

# The harness: first process of the namespaces where it can be, it sets up the world, runs the chain and reports.
HARNESS = r'''
import json, os, socket, subprocess, sys, threading, time
spec = json.loads(open(sys.argv[1]).read())
work, scratch = spec["work"], spec["scratch"]
if spec["namespace"]:
    for command in (["mount", "--rbind", "/tmp", "/tmp"], ["mount", "--bind", work, work],
                    ["mount", "-o", "remount,bind,ro", "/tmp"],  # /tmp read-only but for the work folder
                    ["mount", "-t", "tmpfs", "-o", f"size={spec['scratch_mb']}m", "tmpfs", scratch],
                    ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", "/var/tmp"]):
        subprocess.run(command, check=True)
neighbour = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                             env={**os.environ, "SOFTLOOKUP_NEIGHBOUR_SECRET": spec["secret"]})
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
received = []

def accept():
    while True:
        connection, _ = listener.accept()
        received.append(connection.recv(100))
        connection.close()

threading.Thread(target=accept, daemon=True).start()
source = open(spec["source"]).read().replace("NEIGHBOUR = -1\n", f"NEIGHBOUR = {neighbour.pid}\n", 1)
source = source.replace("PORT = -1\n", f"PORT = {listener.getsockname()[1]}\n", 1)
open(os.path.join(spec["submission"], spec["module"] + ".py"), "w").write(source)
environment = {**os.environ, "PYTHONPATH": spec["kit"], "TMPDIR": scratch, "HOME": scratch,
               "PYTHONDONTWRITEBYTECODE": "1"}
# Its output goes to files, not pipes: the processes an attack leaves would hold a pipe open, and a reader waiting.
with open(os.path.join(work, "chain.out"), "w") as out, open(os.path.join(work, "chain.err"), "w") as err:
    top = subprocess.Popen([spec["python"], spec["chain"], "4", spec["submission"], spec["module"],
                            str(spec["patience"])], cwd=spec["cwd"], env=environment, stdout=out, stderr=err,
                           start_new_session=True)
    top.wait(timeout=240)
output, errors = open(os.path.join(work, "chain.out")).read(), open(os.path.join(work, "chain.err")).read()
evidence = {"judge status": top.returncode, "output": output, "errors": errors[-3000:]}
for line in output.splitlines():
    if line.startswith("{"):
        evidence.update(json.loads(line))
deadline = time.monotonic() + 15
while spec["wait for results"] and open(spec["results"]).read() == spec["results text"] and time.monotonic() < deadline:
    time.sleep(0.1)  # a daemon that outlived the chain: the state it aims at, or the deadline
time.sleep(0.2) if neighbour.poll() is None and received == [] else None  # a signal or a byte in flight
evidence["neighbour alive"] = neighbour.poll() is None
evidence["connections"] = len(received)
evidence["results rewritten"] = open(spec["results"]).read() != spec["results text"]
session = []
for pid in os.listdir("/proc"):
    try:
        if pid.isdigit() and int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[3]) == top.pid:
            session.append(int(pid))
    except (OSError, IndexError, ValueError):
        pass
evidence["left in its session"] = len(session)
usage = os.statvfs(scratch)
evidence["scratch free"] = usage.f_bavail * usage.f_frsize
print("EVIDENCE " + json.dumps(evidence), flush=True)
for pid in session:
    try:
        os.kill(pid, 9)
    except OSError:
        pass
neighbour.kill()
'''


@dataclass(frozen=True)
class Effect:
    """What an attack does where nothing stops it, and how its evidence shows it."""

    words: str
    shown: object  # (evidence, kit_changed, site_packages_changed) -> bool


def _half_a_message(arrived: bytes) -> bool:
    return len(arrived) >= 4 and int.from_bytes(arrived[:4], "big") > len(arrived) - 4


def _forged_records(arrived: bytes) -> bool:
    records = []
    while len(arrived) >= 4:
        size = int.from_bytes(arrived[:4], "big")
        records.append(json.loads(arrived[4:4 + size]))
        arrived = arrived[4 + size:]
    return len(records) >= 2 and all("id" in record for record in records)


EFFECTS = {
    "answered": Effect("it answered right, from the reference it reached", lambda e, k, s: e.get("returned") == RIGHT),
    "kit changed": Effect("it changed the kit copy", lambda e, k, s: k),
    "site-packages changed": Effect("it wrote into site-packages", lambda e, k, s: s),
    "results rewritten": Effect("a process it left rewrote the results", lambda e, k, s: e["results rewritten"]),
    "neighbour killed": Effect("an unrelated process died", lambda e, k, s: not e["neighbour alive"]),
    "judge killed": Effect("the judge's stand-in, four processes up, was killed", lambda e, k, s: e["judge status"] == -9),
    "processes left": Effect("200 processes outlived the worker", lambda e, k, s: e["left in its session"] >= 200),
    "reached": Effect("it returned what it reached of another process", lambda e, k, s: bool(e.get("returned"))),
    "leaked": Effect("another process's environment reached its error", lambda e, k, s: SECRET in e.get("raised", "")),
    "connected": Effect("it reached a socket on 127.0.0.1", lambda e, k, s: e["connections"] > 0),
    "disk filled": Effect("its scratch disk filled", lambda e, k, s: e["scratch free"] < 2**20),
    "half a message": Effect("the judge's socket holds a message announced and never finished",
                             lambda e, k, s: _half_a_message(bytes.fromhex(e["arrived"]))),
    "records forged": Effect("the judge's socket holds records the worker never made",
                             lambda e, k, s: _forged_records(bytes.fromhex(e["arrived"]))),
    "huge value": Effect("it returned a million containers", lambda e, k, s: e.get("size") == 1_000_000),
    "codec stalls": Effect("the judge's codec, once imported beside it, stalls", lambda e, k, s: e.get("codec stalls")),
}


@cache
def namespace_prefix() -> tuple[str, ...] | None:
    """The command prefix that gives a PID and mount namespace here (a user namespace too, if not root), or None."""
    if shutil.which("unshare") is None:
        return None
    prefix = ("unshare", "--pid", "--fork", "--mount", "--mount-proc", "--propagation", "private")
    if os.geteuid() != 0:
        prefix = (prefix[0], "--user", "--map-root-user", *prefix[1:])
    done = subprocess.run([*prefix, "mount", "-t", "tmpfs", "tmpfs", "/var/tmp"], capture_output=True)
    return prefix if done.returncode == 0 else None


@dataclass
class Control:
    effect_seen: bool
    evidence: dict
    kit_changed: bool
    site_packages_changed: bool


def unconfined(attack, folder: Path, kit_source: Path) -> Control:
    """Run ``attack``'s module once where nothing confines it, in ``folder``, against a copy of ``kit_source``."""
    from attacks import kit_copy, manifest

    prefix = namespace_prefix()
    if attack.harmful and prefix is None:
        raise RuntimeError("a harmful attack runs only in a namespace of its own, which this machine cannot make")
    kit = kit_copy(folder, kit_source)
    submission, scratch, results = folder / "submission", folder / "scratch", folder / "results.json"
    shutil.copytree(kit / "assignments", submission)  # the stubs beside it, as in a submission
    scratch.mkdir()
    results_text = '{"score": 0, "max_score": 27, "tests": []}'
    results.write_text(results_text)
    for name, target in attack.links.items():
        (submission / name).symlink_to(kit / target)
    python = sys.executable
    if attack.effect == "site-packages changed":  # a disposable venv, whose site-packages it may write
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", folder / "venv"], check=True)
        python = str(folder / "venv" / "bin" / "python")
    packages = _site_packages(python)
    source = folder / "attack.py"
    source.write_text(attack.source(kit, -1, -1, results))
    (folder / "chain.py").write_text(CHAIN)
    (folder / "harness.py").write_text(HARNESS)
    spec = {"work": str(folder), "scratch": str(scratch), "scratch_mb": SCRATCH_MB, "namespace": prefix is not None,
            "secret": SECRET, "source": str(source), "submission": str(submission), "module": attack.module,
            "kit": str(kit), "python": python, "chain": str(folder / "chain.py"), "results": str(results),
            "results text": results_text, "wait for results": attack.effect == "results rewritten",
            "patience": 3 if attack.effect == "half a message" else 120,  # that call sleeps on purpose
            "cwd": str(kit if attack.effect == "answered" else scratch)}  # a judge's folder holds the kit
    (folder / "spec.json").write_text(json.dumps(spec))
    before = manifest(kit)
    done = subprocess.run([*(prefix or ()), sys.executable, folder / "harness.py", folder / "spec.json"],
                          capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("EVIDENCE ")]
    assert lines, f"the harness reported nothing:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    evidence = json.loads(lines[-1].removeprefix("EVIDENCE "))
    kit_changed, site_changed = manifest(kit) != before, _site_packages(python) != packages
    return Control(EFFECTS[attack.effect].shown(evidence, kit_changed, site_changed), evidence, kit_changed,
                   site_changed)


def _site_packages(python: str) -> set[str]:
    """The entries of ``python``'s own site-packages folders."""
    listed = subprocess.run([python, "-c", "import os, site\nfor folder in site.getsitepackages():\n"
                             "    print(*(os.path.join(folder, name) for name in sorted(os.listdir(folder))"
                             " if os.path.isdir(folder)), sep='\\n')"], capture_output=True, text=True)
    return set(listed.stdout.split())


# The forgeries and the ground truth, against the tiny GPT-2: the module imported first (an attack may patch the
# kit's builder at import), then the model it is given built with the protection it aims at switched off.
FORGERY = r'''
import importlib, json, sys
import numpy as np
import torch
submission, module_name, effect = sys.argv[1:4]
from grader.engine.confinement.codec import ModelSpec
from grader.lesson import models
spec = ModelSpec()
tokenizer = models.build(spec.tokenizer())
text, layer, head = "The cat sat on the mat", 2, 1
ids = tokenizer(text)["input_ids"]
with torch.no_grad():
    truth = models.build(spec)(torch.tensor([ids]), output_attentions=True).attentions[layer][0, head].numpy()
sys.path.insert(0, submission)
module = importlib.import_module(module_name)
if effect == "forged":  # the weights are not hidden: what a model built without hide_attention_weights gives
    models.hide_attention_weights = lambda model: model
if effect == "ground truth read":
    got = module.head_pattern(models.build(spec), tokenizer, text, layer, head)[1]
else:  # built after the module's import, as it would be if the worker built its models then
    got = module.recompute_head_pattern(models.build(spec.without_attentions()), ids, layer, head)
print(json.dumps({"matches truth": bool(np.allclose(np.asarray(got, dtype=float), truth, atol=1e-5))}))
'''

TORCH_EFFECTS = {
    "forged": Effect("the pattern it read back is the model's own, where the weights are not hidden",
                     lambda e, k, s: e["matches truth"]),
    "forged by the builder": Effect("a model built after its import reports the weights it should hide",
                                    lambda e, k, s: e["matches truth"]),
    "ground truth read": Effect("the kit's own ground truth gave it the model's pattern",
                                lambda e, k, s: e["matches truth"]),
}
EFFECTS.update(TORCH_EFFECTS)


def forged(attack, folder: Path, kit_source: Path) -> Control:
    """Run a GPT-2 attack's module against the tiny GPT-2, with the protection it aims at switched off."""
    from attacks import kit_copy

    kit = kit_copy(folder, kit_source)
    submission = folder / "submission"
    submission.mkdir()
    (submission / f"{attack.module}.py").write_text(attack.source(kit, -1, -1, folder / "results.json"))
    done = subprocess.run([sys.executable, "-c", FORGERY, str(submission), attack.module, attack.effect],
                          capture_output=True, text=True, timeout=300, cwd=folder,
                          env={**os.environ, "PYTHONPATH": str(kit), "HF_HUB_OFFLINE": "1",
                               "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    evidence = json.loads(done.stdout.splitlines()[-1])
    return Control(EFFECTS[attack.effect].shown(evidence, False, False), evidence, False, False)
