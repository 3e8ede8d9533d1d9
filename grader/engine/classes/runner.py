"""The one way to grade a folder: :func:`run_checks` runs the checks with pytest and returns the result.

Every road calls it (``softlookup check``, a notebook's ``check_here``, the
Gradescope autograder, nbgrader's autograde step, the student bundle's
release), and ``softlookup grade``'s judges run pytest the same way
(:func:`grader.engine.options.pytest_command`). pytest runs in this process; the learner's code runs
in confined workers, never here.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
from pathlib import Path

import pytest

from grader.engine import plugin, registry
from grader.engine.confinement import fork_servers
from grader.engine.options import Options, pytest_command, stay_offline
from grader.engine.results import SubmissionResult
from grader.engine.submissions import inspection


def run_checks(folder: Path, exercises: list[registry.Exercise], options: Options = Options(),
               verbose: bool = False, plugins=(), problem: str = "") -> SubmissionResult:
    """Run the checks of ``exercises`` on ``folder`` and return the result (``plugins``: more pytest plugins).

    ``problem`` says why the folder cannot be graded at all (a link on the way to it): every check then
    fails with it, as in a batch. Raises RuntimeError, in one line, when the checks cannot run at all
    (pytest's usage errors included).
    """
    stay_offline()
    if problem:
        plugins = [*plugins, _Problem(problem)]
    # The fork servers start now, so that their imports (seconds, for torch) overlap pytest's start-up.
    fork_servers.preload(inspection.fork_server_needed(Path(folder), exercises))
    args = [*pytest_command(exercises, options), f"--submission={folder}"]
    capture, output = _Capture(), io.StringIO()
    try:
        with plugins_named_only():
            if verbose:
                code = pytest.main([*args, "-v"], plugins=[capture, *plugins])
            else:
                with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
                    code = pytest.main([*args, "-q"], plugins=[capture, *plugins])
    except Exception:
        if capture.interrupted:  # pytest failed while it wound up after a Ctrl-C: a Ctrl-C all the same
            raise KeyboardInterrupt from None
        raise
    if code == pytest.ExitCode.INTERRUPTED or capture.interrupted:
        raise KeyboardInterrupt
    if capture.result is None or code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        lines = output.getvalue().strip().splitlines()
        errors = [line.removeprefix("ERROR: ") for line in lines if line.startswith("ERROR: ")]
        raise RuntimeError(errors[0] if errors else f"the checks could not run (pytest exit {int(code)}): "
                           f"{' '.join(lines[-1:])}")
    return capture.result


class _Capture:
    """A pytest plugin object that keeps the session's result for the caller, and whether Ctrl-C ended it."""

    result: SubmissionResult | None = None
    interrupted = False

    def pytest_keyboard_interrupt(self):
        self.interrupted = True

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session):
        self.result = plugin.grading(session.config).submission.result


class _Problem:
    """A pytest plugin object that hands the session the reason its submission cannot be graded."""

    def __init__(self, problem: str):
        self.problem = problem

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config):
        plugin.grading(config).problem = self.problem


@contextlib.contextmanager
def plugins_named_only():
    """No pytest plugin loads by entry point while the judge runs: only those that
    :data:`grader.engine.options.PYTEST_ARGS` names."""
    before = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"]
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = before


def _interrupt(signum, frame):
    raise KeyboardInterrupt  # pytest then finishes its session: workers stopped, temporary folders removed


def stop_cleanly_on_sigterm():
    signal.signal(signal.SIGTERM, _interrupt)
