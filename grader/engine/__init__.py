"""The grading engine: the registry, the pytest plugin, both sides of the sandbox, and the result model.

Nothing here knows about any one command; the commands depend on the engine, never the other way round.
"""
