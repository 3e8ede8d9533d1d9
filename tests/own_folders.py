"""The folders a test run keeps to itself: a home, state, cache, config, data and runtime folder of its own.

The kit writes the learner's state where the learner's environment says:
which hints were seen and which functions failed last
(``$XDG_STATE_HOME/softlookup``), the warm server's socket
(``$XDG_RUNTIME_DIR/softlookup``), and through the libraries it runs,
Jupyter's and IPython's files, matplotlib's font cache, Hugging Face's cache.
A test run that used the learner's would rewrite their hint state (so that
``softlookup hint`` followed failures they never had) and start warm servers in
their runtime folder. :func:`isolate` points every one of these variables
at a fresh temporary folder, before any test module is imported (so that
every environment a test copies for a child process has them too), and
:func:`remove` deletes it at the end.

Jupyter is told where this Python's data files are (``JUPYTER_PATH``): a venv
made with ``--system-site-packages`` has its packages' templates and
extensions (nbconvert's, the widgets') in the base Python's prefix, where
Jupyter does not look by itself.

Two things are read, never written, from where the learner keeps them:
GPT-2 small's weights, where they are in the Hugging Face cache, so that the
checks of the lesson's claims run where the weights exist; and pip's own
configuration (which index, which folder of wheels), so that the tests that
install a release into a fresh venv install it as this machine installs.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

# Each variable, and where it points inside the run's own home.
FOLDERS = {
    "HOME": ".",
    "XDG_STATE_HOME": ".local/state",
    "XDG_CACHE_HOME": ".cache",
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_RUNTIME_DIR": "run",
    "IPYTHONDIR": ".ipython",
    "JUPYTER_CONFIG_DIR": ".jupyter",
    "JUPYTER_DATA_DIR": ".local/share/jupyter",
    "JUPYTER_RUNTIME_DIR": "run/jupyter",
    "MPLCONFIGDIR": ".config/matplotlib",
    "HF_HOME": ".cache/huggingface",
    "HF_HUB_CACHE": ".cache/huggingface/hub",
}
GPT2_REPOSITORIES = ("models--gpt2", "models--openai-community--gpt2")


def learners_hub_cache(environ) -> Path:
    """Where Hugging Face's hub keeps models for the user of ``environ`` (its own rules, in order)."""
    if environ.get("HF_HUB_CACHE"):
        return Path(environ["HF_HUB_CACHE"])
    if environ.get("HF_HOME"):
        return Path(environ["HF_HOME"]) / "hub"
    cache = environ.get("XDG_CACHE_HOME") or Path(environ.get("HOME") or Path.home()) / ".cache"
    return Path(cache) / "huggingface" / "hub"


def learners_pip_config(environ) -> Path | None:
    """The user's own pip configuration file, where pip would find one (its rules: XDG first, then ~/.pip)."""
    home = Path(environ.get("HOME") or Path.home())
    config = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    return next((path for path in (config / "pip" / "pip.conf", home / ".pip" / "pip.conf") if path.is_file()), None)


def isolate(environ=os.environ) -> Path:
    """Point :data:`FOLDERS` at a new private home in the temporary folder; returns that home."""
    home = Path(tempfile.mkdtemp(prefix="softlookup-tests-home-"))  # mode 0700: the warm server's rule
    hub = learners_hub_cache(environ)
    if not environ.get("PIP_CONFIG_FILE") and (pip := learners_pip_config(environ)) is not None:
        environ["PIP_CONFIG_FILE"] = str(pip)
    for variable, inside in FOLDERS.items():
        folder = (home / inside).resolve()
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        environ[variable] = str(folder)
    if any((hub / name).is_dir() for name in GPT2_REPOSITORIES):  # read only: the run is offline
        environ["HF_HUB_CACHE"] = str(hub)
    shares = [str(Path(prefix) / "share" / "jupyter") for prefix in dict.fromkeys((sys.prefix, sys.base_prefix))]
    environ["JUPYTER_PATH"] = os.pathsep.join(part for part in (environ.get("JUPYTER_PATH"), *shares) if part)
    return home


def remove(home: Path):
    shutil.rmtree(home, ignore_errors=True)
