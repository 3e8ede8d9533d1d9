"""Fixtures that several check files share.

The judge runs the checks with ``--noconftest``, so a check file that needs
one imports it by name (pytest finds fixtures in the module's namespace).
"""

import os

import pytest

from grader.engine.confinement.codec import ModelSpec

SKIPPED = ("GPT-2 small's weights are not on this machine: `softlookup fetch-gpt2 FOLDER` downloads them (about "
           "550 MB, where the internet is reachable) into FOLDER; then `softlookup check --gpt2-model FOLDER`, or "
           "`SOFTLOOKUP_GPT2=FOLDER` set before `softlookup check`, finds them there (so does Hugging Face's own "
           "cache, if `from_pretrained(\"gpt2\")` ever put them in it)")


@pytest.fixture(scope="session")
def real_gpt2(kit, request):
    """GPT-2 small's spec; a check that needs it is skipped where its weights are not on disk."""
    path = request.config.getoption("gpt2_model") or os.environ.get("SOFTLOOKUP_GPT2")
    path = path and str(path)  # a spec crosses to the worker as plain data
    if not kit.models.real_available(path):
        pytest.skip(SKIPPED)
    return ModelSpec(kind="real", path=path)
