"""What a handed-in folder holds: its files taken in within bounds, its notebooks made modules, read unrun.

Nothing here runs a learner's code: :mod:`~grader.engine.submissions.intake`
copies a submission (a folder or a zip) within one set of limits,
:mod:`~grader.engine.submissions.notebooks` turns notebooks into modules, and
:mod:`~grader.engine.submissions.inspection` reads what the files say without
running them.
"""
