"""GitHub Classroom: the workflow a student bundle carries.

Classroom's autograding reads a workflow named "Autograding Tests" whose one
job is "run-autograding-tests". Its last step, the
``classroom-resources/autograding-grading-reporter`` action, reads each
runner's result from ``<RUNNER>_RESULTS`` (base64-encoded JSON: ``status``,
``max_score``, ``tests`` with a ``score`` each), adds the scores up and posts
"Points X/Y" as a notice, which is what Classroom records. The kit's runner
is one step: ``softlookup check --json`` writes Gradescope's results.json,
and ``python -m grader.reports.classroom results.json`` turns it into that result
(:mod:`grader.reports.classroom`).
These are the public checks only, the ones a student bundle has.
"""

from __future__ import annotations

WORKFLOW = """\
# GitHub Classroom runs this on every push and records the points that the reporter's last line gives.
# Classroom reads only a workflow of this name with a single job of this name: keep both.
name: Autograding Tests
on: [push, workflow_dispatch, repository_dispatch]
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    timeout-minutes: 20
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Set up Python
        uses: actions/setup-python@v5
        with:
          python-version: "{python}"
      - name: Install the exercises
        # torch's CPU build first (a plain install would fetch a GPU build of several GB), then this folder.
        run: |
          python -m pip install "torch=={torch}" --index-url https://download.pytorch.org/whl/cpu
          python -m pip install .
      - name: Public checks
        id: softlookup
        env:
          HF_HUB_OFFLINE: "1"
          SOFTLOOKUP_NO_SERVER: "1"  # one check per run: nothing to keep warm
        # Exit status 1 means "below full marks", which is a result; anything else is a failure to grade.
        run: |
          softlookup check --json results.json || [ $? -eq 1 ]
          echo "result=$(python -m grader.reports.classroom results.json)" >> "$GITHUB_OUTPUT"
      - name: Autograding Reporter
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
          SOFTLOOKUP_RESULTS: "${{{{ steps.softlookup.outputs.result }}}}"
        with:
          runners: softlookup
"""


def workflow(python: str, torch: str) -> str:
    """The workflow, with the Python and torch versions the bundle's answers were recorded with."""
    return WORKFLOW.format(python=python, torch=torch)
