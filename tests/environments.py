"""The Linux environments the kit's users grade on, each stood in for on this machine by tests/emulate.py.

Each :class:`Environment` names the launcher's flags that give this machine
the platform's restrictions, and whether grading should go ahead there
(every protection held by some mechanism) or be refused in one sentence.
A :class:`World` is one environment's disposable kit copy and folders, open
to the unprivileged user an environment may run as, and the way to run a
command in it. The hostile student tries, in one call, the four things the
confinement is there to stop; the reference's own softmax is what it
returns if any of them works.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from attacks import kit_copy
from grader.engine import registry

EMULATE = Path(__file__).with_name("emulate.py")
NOBODY = 65534


@dataclass(frozen=True)
class Environment:
    name: str
    flags: tuple[str, ...]
    grades: bool = True  # every protection holds: grade, the autograder and nbgrader go ahead
    uid: int = 0

    @property
    def root(self) -> bool:
        return self.uid == 0

    def launcher(self) -> list[str]:
        """The command prefix that runs a command here."""
        return [sys.executable, str(EMULATE), *self.flags, "--"]

    def as_user(self) -> list[str]:
        """The command prefix that runs a command as this environment's user, in place (its pid is the command's)."""
        return [] if self.root else [sys.executable, str(EMULATE), "--readable-python", "--uid", str(self.uid), "--"]


ENVIRONMENTS = [
    # A full Linux graded as root with a system Python (open to other users): a uid of its own on top of it all.
    Environment("full-kernel-root", ("--readable-python",)),
    # Gradescope: Docker's default profile, root in the container, a host kernel without Landlock.
    Environment("gradescope", ("--docker", "--landlock", "none", "--readable-python")),
    # Docker (or Kubernetes with RuntimeDefault) on Debian 12's kernel 6.1: Landlock ABI 2, root in the container.
    Environment("docker-debian12", ("--docker", "--landlock", "2")),
    # zero-to-jupyterhub: a non-root pod with RuntimeDefault on a 6.10 kernel (Landlock ABI 5).
    Environment("jupyterhub", ("--docker", "--landlock", "5", "--readable-python", "--uid", str(NOBODY)), uid=NOBODY),
    # Ubuntu 24.04 desktops and GitHub's runners: a non-root user, AppArmor refuses the uid map, Landlock ABI 4.
    Environment("ubuntu-24.04", ("--userns-map-refused", "--landlock", "4", "--readable-python", "--uid",
                                 str(NOBODY)), uid=NOBODY),
    # A non-root container without Landlock: nothing keeps a worker to its files, so grading is refused.
    Environment("docker-no-landlock-non-root", ("--docker", "--landlock", "none", "--readable-python", "--uid",
                                                str(NOBODY)), grades=False, uid=NOBODY),
]

# The hostile student: at import it leaves a mark (proof that its code ran at all); its softmax reads the
# reference, writes outside its folder, signals a neighbour and connects out, and answers only with the reference
# it read: its points are the read's proof.
HOSTILE = '''
import os, socket

MARK, REFERENCE, NEIGHBOUR, PORT = {mark!r}, {reference!r}, {neighbour}, {port}
try:
    open(MARK, "w").write("imported")
except OSError:
    pass


def softmax(x, axis=-1):
    got = []
    try:
        source = open(REFERENCE).read()
        got.append("read")
    except OSError:
        source = None
    try:
        open(MARK + ".written", "w").write("written")
        got.append("wrote")
    except OSError:
        pass
    try:
        os.kill(NEIGHBOUR, 9)
        got.append("signalled")
    except OSError:
        pass
    try:
        socket.create_connection(("127.0.0.1", PORT), timeout=1).sendall(b"stolen")
        got.append("connected")
    except OSError:
        pass
    if not got:
        raise RuntimeError("contained")
    if not source:  # no softmax of its own: any point it earns was read from the reference
        raise RuntimeError("it " + " and ".join(got) + ", but read no reference")
    scope = {{}}
    exec(source, scope)
    return scope["softmax"](x, axis)
'''


OWN_SOFTMAX = """
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
"""


def self_contained_lookup(reference_lookup: str) -> str:
    """The reference lookup with a softmax of its own: its points do not hang on the hostile softmax beside it."""
    assert "from softmax import softmax" in reference_lookup
    return reference_lookup.replace("from softmax import softmax", OWN_SOFTMAX)


class World:
    """One environment's kit copy and folders, all open to its user, and the processes a hostile student aims at."""

    def __init__(self, environment: Environment):
        self.environment = environment
        self.base = Path(tempfile.mkdtemp(prefix=f"softlookup-{environment.name}-", dir="/tmp"))
        os.chmod(self.base, 0o755)
        self.kit = kit_copy(self.base, registry.KIT_ROOT)
        self.home = self.folder("home")
        self.out = self.folder("out")  # what the environment's user writes: results, gradebooks
        self.marks = self.folder("marks")  # where the hostile student could write, if its files are not confined
        self.neighbour = subprocess.Popen([*environment.as_user(), sys.executable, "-c", "import time; time.sleep(900)"])
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.received: list[bytes] = []
        threading.Thread(target=self._accept, daemon=True).start()
        for path in self.base.rglob("*"):
            os.chmod(path, os.stat(path).st_mode | 0o005 | (0o001 if path.is_dir() else 0))

    def _accept(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.received.append(connection.recv(100))
            connection.close()

    def folder(self, name: str) -> Path:
        path = self.base / name
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, 0o777)
        return path

    def hostile(self, road: str, kit: Path | None = None) -> str:
        """The hostile student's softmax for one road, leaving its marks under that road's name; it goes for the
        solutions of ``kit``, the kit that grades it (by default the world's)."""
        return HOSTILE.format(mark=str(self.marks / road), reference=str((kit or self.kit) / "solutions" / "softmax.py"),
                              neighbour=self.neighbour.pid, port=self.listener.getsockname()[1])

    def ran(self, road: str) -> bool:
        """Whether the hostile student's module was imported at all on ``road`` (and could leave its mark)."""
        return (self.marks / road).exists()

    def contained(self, road: str) -> list[str]:
        """What the hostile student achieved on ``road``: empty when the confinement held."""
        achieved = [what for what, happened in (
            ("wrote outside its folder", (self.marks / f"{road}.written").exists()),
            ("signalled a neighbour", self.neighbour.poll() is not None),
            ("connected out", bool(self.received))) if happened]
        return achieved

    def python(self, *args, **options) -> subprocess.CompletedProcess:
        return self.run(sys.executable, *args, **options)

    def run(self, *command, cwd: Path | None = None, timeout: float = 600, **env) -> subprocess.CompletedProcess:
        """``command`` as this environment runs it, with the kit copy as the kit."""
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # nbgrader runs alembic
        environment = {**os.environ, "PYTHONPATH": str(self.kit), "HOME": str(self.home), "HF_HUB_OFFLINE": "1",
                       "COLUMNS": "200", "SOFTLOOKUP_NO_SERVER": "1", "PATH": path, **env}
        environment.pop("XDG_RUNTIME_DIR", None)
        return subprocess.run([*self.environment.launcher(), *map(str, command)], capture_output=True, text=True, env=environment,
                              cwd=cwd or self.base, timeout=timeout)

    def close(self):
        self.neighbour.kill()
        self.neighbour.wait()
        self.listener.close()
        shutil.rmtree(self.base, ignore_errors=True)
