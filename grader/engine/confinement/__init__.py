"""The confinement: the learner's side of the pipe, the pipe, and everything that keeps the learner's code there.

What crosses the boundary is plain data, one call at a time. The judge sends
a call (a module, a function, arguments encoded by
:mod:`~grader.engine.confinement.codec`); the worker runs it, answers, and
waits for the next. Nothing of the learner's (no object, no exception, no
pickle) reaches the judge: it decodes every answer within bounds and checks
every field (:mod:`~grader.engine.confinement.messages`) before any use, so
the worst a learner's code can do is send back wrong numbers, which the
checks mark wrong.

What it promises: a learner's code runs only in a worker, a process this
package starts (forked from a fork server, or spawned where Linux's fork
cannot be used) and confines before the learner's first line runs. There it
cannot read the kit or another student's copy, write outside its own scratch
folder, reach the network, signal or start another process, or take more
time, memory, processes or disk than :mod:`~grader.engine.confinement.policy`
declares: every system-call rule and resource limit, each written once with
its reason, read by the mechanisms. Where a machine offers fewer mechanisms
the worker reports which protections hold
(:mod:`~grader.engine.confinement.protections`), and the instructor's roads
refuse to grade without them; a learner's own check says in one line what
does not hold. SECURITY.md is a reviewer's way in.

One module per mechanism: seccomp, landlock and confine (namespaces, rlimits,
credentials) confine a worker; worker and stand_ins are its side of the pipe;
zygote, fork_servers, spawner and pipes start it and carry its messages;
model_cache builds the models it is handed; clock and scratch account for its
time and its disk; system says which of them this operating system offers.
The package imports nothing of the judge's but the list of exercises and the
result model (:mod:`grader.engine.registry`, :mod:`grader.engine.results`):
``tests/test_imports.py`` holds it so.
"""
