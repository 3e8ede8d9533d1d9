"""A class, graded as a sequence of submissions: the runner that grades one folder, the judges, what is kept.

:mod:`~grader.engine.classes.runner` is the one way to grade a folder;
:mod:`~grader.engine.classes.batch` grades a class with judges
(:mod:`~grader.engine.classes.judge`) that take student after student;
:mod:`~grader.engine.classes.keeper` keeps results between gradings of one
folder; :mod:`~grader.engine.classes.similarity` finds work handed in twice.
"""
