"""What checks hold: ``submission.lookup.soft_lookup(...)`` as if the learner's module were imported.

Each attribute step names a module and a function; calling it sends the call
as plain data to the sandbox's slot for that folder and module, which runs
it in a worker and returns the value, or raises
:class:`~grader.engine.errors.SubmissionError`.
"""

from __future__ import annotations

from grader.engine.sandbox import Sandbox
from grader.engine.slot import Slot


class Namespace:
    """``namespace.module.function(*args)`` runs that function in a worker.

    ``Namespace(sandbox, "path/to/submission", limits_for)`` is a learner's
    folder. A trusted namespace (the reference solutions, or the kit's own
    modules with ``package="grader.lesson"``) runs in unconfined workers, so the
    judge never imports torch, and its failures raise :class:`KitError`
    instead of being blamed on the learner.
    """

    def __init__(self, sandbox: Sandbox, directory: str | None, limits_for, package: str = "",
                 trusted: bool = False):
        self._sandbox, self._directory, self._limits_for = sandbox, directory, limits_for
        self._package, self._trusted = package, trusted

    def __getattr__(self, module):
        if module.startswith("_"):
            raise AttributeError(module)
        name = f"{self._package}.{module}" if self._package else module
        return _Module(self, name)


class _Module:
    def __init__(self, namespace: Namespace, name: str):
        self._namespace, self._name = namespace, name

    def __getattr__(self, function):
        if function.startswith("_"):
            raise AttributeError(function)
        return _Function(self._namespace, self._name, function)


class _Function:
    """``module.function``: calling it runs the function in a worker and returns its value."""

    def __init__(self, namespace: Namespace, module: str, name: str):
        self._namespace, self._module, self.__name__ = namespace, module, name

    def __call__(self, *args):
        namespace = self._namespace
        if namespace._trusted:  # the kit's answers depend on their arguments only: ask once per sandbox
            return namespace._sandbox.trusted_answer(namespace._directory, self._module, self.__name__, args,
                                                     namespace._limits_for(self._module))
        return self._slot().call(self.__name__, args)

    @property
    def exercise(self) -> str:
        """The exercise's module (``lookup``), the package's prefix left off: where its promises are written."""
        return self._module.rpartition(".")[2]

    def once(self, *args):
        """The value, as a call gives it, but asked of the learner's worker once per submission.

        For a call that several checks judge, each from its own angle (a fit's
        sharpness, and how its losses fall): the learner's code runs it once.
        """
        if self._namespace._trusted:
            return self(*args)  # asked once per sandbox already
        return self._namespace._sandbox.shared_answer(self._slot(), self.__name__, args)

    def arguments_after(self, *args):
        """``(value, arguments)``: the value, and the arguments as the call left them (compared by the judge)."""
        return self._slot().call(self.__name__, args, report_arguments=True)

    def _slot(self) -> Slot:
        namespace = self._namespace
        return namespace._sandbox.slot(namespace._directory, self._module, namespace._limits_for(self._module),
                                       trusted=False)
