"""The kit's own test run: offline, no warm server, its own home, and one fork server with torch for the whole run.

Shared helpers live in ``helpers.py`` and the catalogues (mistakes, lazy
answers, right answers from the wild, attacks, classes, exports) beside it;
the test files are grouped by the package of ``grader/`` they test. Run them
with ``pytest tests`` (``-n auto`` for one process per core): ``tests/pytest.ini``
is their configuration, whatever a learner's ``pytest`` at the root does.
"""

from __future__ import annotations

import os

import pytest
from _pytest.nodeid import coerce_node_id  # pytest 9.2's node ids: see pytest_collection_modifyitems

import own_folders

# Before anything else is imported: every environment a test copies for a child process has these too.
os.environ["HF_HUB_OFFLINE"] = "1"  # the hub is unreachable here; fail fast instead of retrying
os.environ["SOFTLOOKUP_NO_SERVER"] = "1"  # every `softlookup check` a test starts grades in-process (test_warm: not)
OWN_HOME = own_folders.isolate()  # no test reads or writes the learner's home, state, cache or runtime folders
if os.environ.get("PYTEST_XDIST_WORKER"):  # a process per core: torch's threads would queue behind the other's,
    os.environ["OMP_NUM_THREADS"] = "1"  # each GPT-2 readout up to 7 times slower (as the kit's workers, one)

from grader.engine.confinement import fork_servers  # noqa: E402


def pytest_configure(config):
    # One fork server for the whole run, with torch already imported, so every
    # GPT-2 grading below forks a worker instead of importing torch again; none in
    # xdist's controller (-n N), which hands the tests out and runs none of them.
    if os.environ.get("PYTEST_XDIST_WORKER") or not getattr(config.option, "numprocesses", None):
        fork_servers.preload("transformers")


def pytest_unconfigure(config):
    own_folders.remove(OWN_HOME)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """Tests that share a fixture their module builds once run in one process, so it is built once.

    A module-scoped fixture (a graded class, an nbgrader course, an emulated
    machine) is built in every xdist worker that runs one of its tests; with
    ``--dist loadgroup`` (tests/pytest.ini) a group runs in one worker. The
    group is the module and that fixture's parameter (one emulated machine
    each), unless the test already belongs to one.
    """
    for item in items:
        if item.get_closest_marker("xdist_group") or not hasattr(item, "_fixtureinfo"):
            continue
        definitions = item._fixtureinfo.name2fixturedefs
        shared = sorted(name for name in item.fixturenames
                        if definitions.get(name) and definitions[name][-1].scope == "module")
        if shared:
            params = getattr(getattr(item, "callspec", None), "params", {})
            key = [item.nodeid.split("::")[0],
                   *(f"{name}={getattr(params[name], 'name', params[name])}" for name in shared if name in params)]
            item.add_marker(pytest.mark.xdist_group("|".join(key)))
    yield
    # xdist (3.8) names a test's group by appending "@group" to its node id through an attribute pytest 9.2 no
    # longer reads, so every group was spread over the workers; in a worker, append it the way pytest 9.2 reads.
    if getattr(config.option, "loadgroup", False):  # set in xdist's workers under --dist loadgroup
        for item in items:
            groups = sorted({str(mark.args[0]) for mark in item.iter_markers("xdist_group") if mark.args})
            if groups and "@" not in item.nodeid.rpartition("]")[2]:
                item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(groups)}")
