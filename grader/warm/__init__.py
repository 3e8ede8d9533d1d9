"""A per-user warm server for ``softlookup check``, so that a check after the first one starts in milliseconds.

A learner runs ``softlookup check`` over and over. In a fresh process each
run pays for Python, pytest, numpy and, for the GPT-2 exercises, torch and
transformers (seconds) before the first check. The first ``check`` therefore
starts a server on the learner's own account (:mod:`grader.warm.server`) and
hands it the command line; every later ``check`` is a request to it
(:mod:`grader.warm.client`). The server keeps what a grading run
already keeps (the fork servers with their imports, the reference's and the
kit's answers) and, like ``--watch``, does not grade again an exercise while
no file of the folder has changed since it graded it (one rule for both:
:mod:`grader.engine.classes.keeper`); it is a keeper of the runner's state, not a
second engine: each request is ``softlookup check``'s own
``main`` on the learner's folder, and every worker starts as in-process
grading starts it (forked from a fork server and confined on Linux, spawned
on macOS).

Who may talk to it (:mod:`grader.warm.place`): its socket lies in a folder
that only the learner's account may enter (owner and mode checked before
every use), and each side checks the other's uid on the socket itself. A
system that cannot say who the peer is (Windows) has no server. It
serves ``check`` and nothing else: ``softlookup grade``, the Gradescope
autograder and nbgrader never reach it. It exits after some idle minutes,
and a kit whose files changed gets a new server (the old one is told to
exit). ``--no-server`` or ``SOFTLOOKUP_NO_SERVER=1`` turns it off; whatever
goes wrong with it, the check is graded in-process as before.
"""
