"""A fork server shared by a class's judges: each judge forks from a copy of its own, and a failure says why.

The sharing itself, a class paying its imports once, is shown on a whole batch in
tests/engine/test_batch.py; here, what a judge sees when the shared fork server cannot start.
"""

import pytest

from grader.engine.confinement import system
from grader.engine.confinement.zygote import ForkServer, ForkServerError, SharedForkServer

pytestmark = pytest.mark.skipif(not system.confines(), reason="workers are forked on Linux alone")


def test_a_copy_of_a_shared_fork_server_that_cannot_import_says_why(tmp_path):
    """The judge holding a copy learns, in the fork server's own words, why no worker can start."""
    modules = ["numpy", "no_module_of_this_name"]
    shared = SharedForkServer(modules, tmp_path / "shared.log")
    try:
        copies = [ForkServer.adopt(shared.copy(), shared.log) for _ in range(2)]
        for copy in copies:
            with pytest.raises(ForkServerError, match="No module named 'no_module_of_this_name'"):
                copy.spawn({}, [])
            copy.close()
    finally:
        shared.close()
    assert shared.process.returncode is not None
