"""The kit's own test run: offline, no warm server, and one fork server with torch for the whole run.

Shared helpers live in ``helpers.py`` and the catalogues (mistakes, lazy
answers, right answers from the wild, attacks, classes, exports) beside it;
the test files are grouped by the package of ``grader/`` they test.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # the hub is unreachable here; fail fast instead of retrying
os.environ["SOFTLOOKUP_NO_SERVER"] = "1"  # every `softlookup check` a test starts grades in-process (test_warm: not)

from grader.engine import servers  # noqa: E402


def pytest_configure(config):
    # One fork server for the whole run, with torch already imported, so every
    # GPT-2 grading below forks a worker instead of importing torch again.
    servers.preload("transformers")
