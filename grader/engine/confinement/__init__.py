"""The confinement: the learner's side of the pipe, and everything that keeps it there.

A learner's code runs only in a worker, a process of its own that this package
starts (forked from a fork server, or spawned where Linux's fork cannot be
used) and confines before the learner's first line runs. What crosses the
boundary is plain data, one call at a time: the judge sends a call (a
module, a function, arguments encoded by :mod:`~grader.engine.confinement.codec`),
the worker answers it and waits for the next; nothing of the learner's, no
object, no exception, no pickle, ever reaches the judge, which decodes every
answer and checks every field of it (:mod:`~grader.engine.confinement.messages`)
before any use.

What it promises: the learner's code cannot reach the network, another
process, the judge's files or memory, or more than its own scratch folder,
and cannot take more memory, time, processes or disk than
:mod:`~grader.engine.confinement.policy` declares, where every system-call
rule and resource limit is written once, with its reason. Where this machine
offers fewer mechanisms, the worker reports which protections hold
(:mod:`~grader.engine.confinement.protections`) and the judge refuses to
grade without those it requires. SECURITY.md is the reviewer's way in.

One module per mechanism: seccomp, landlock and confine (namespaces, rlimits,
credentials) confine a worker; worker is its side of the pipe; zygote, spawner,
fork_servers and pipes start it and carry its messages; clock and scratch
account for its time and its disk; system says which of them this operating
system offers. It imports nothing of the judge's but the list of exercises and
the result model's vocabulary (:mod:`grader.engine.registry`,
:mod:`grader.engine.results`): ``tests/test_imports.py`` holds it so.
"""
