"""The pytest plugin: options, the ``submission`` fixture, points and results.

Installed as a pytest11 entry point, so ``pytest grader/checks`` and
``softlookup check`` run the very same checks. The plugin stays out of the
way of any test outside ``grader/checks``.

Fixtures for checks:

* ``submission``: the learner's folder (``--submission``; by default, as
  for ``softlookup check``, this folder if it holds the exercises, else its
  ``assignments/``); ``submission.lookup.soft_lookup(...)`` runs in a worker.
* ``reference``: the reference solutions, for hidden checks.
* ``kit``: the kit's own modules in a worker (``kit.gpt2...``), so the judge
  never imports torch; in a student bundle, ``kit.gpt2``'s answers are
  recorded ones (:mod:`grader.engine.ground_truth`).

A learner types plain ``pytest``: where the configuration found says
``softlookup_exercises = true`` (the kit's pyproject.toml, ``assignments/pytest.ini``,
the student bundle's), a ``pytest`` given no file runs the exercises' checks
(:func:`pytest_configure`) on the learner's folder, notebooks included, as
``softlookup check`` does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import time
from pathlib import Path

import pytest

from grader.engine import ground_truth, hint_record, options, registry, slot
from grader.engine.confinement import clean, fork_servers
from grader.engine.errors import KitError, SubmissionError
from grader.engine.proxies import Namespace
from grader.engine.results import CheckResult, ErrorKind, SubmissionResult
from grader.engine.sandbox import Sandbox
from grader.engine.slot import Limits
from grader.engine.submissions import inspection, notebooks
from grader.engine.submissions.intake import exercise_folder
from grader.engine.verify import CheckFailure

PLUGIN = "softlookup-grading"  # the name its Grading is registered under, once per pytest session

# The time a submission ran out of, in a gradebook's terms: a budget spent, or a function stopped earlier.
_STATUS_KINDS = {ErrorKind.BUDGET: ErrorKind.TIMEOUT, ErrorKind.HUNG: ErrorKind.TIMEOUT}
MAX_MESSAGE_CHARS = 20_000  # a check's verdict, as kept in results
MAX_PRINTED_CHARS = 2**21  # what a check's calls printed, labels included (-v keeps up to 1 MB per check)

# Trusted code gets generous limits, so that a loaded machine never blames a learner for the kit's slowness.
KIT_LIMITS = Limits(time=300.0, memory=16 * 2**30, needs="transformers", import_time=300.0)


def pytest_addoption(parser):
    group = parser.getgroup("softlookup", "softlookup grading")
    group.addoption("--submission", metavar="DIR",
                    help="folder with the learner's modules or notebooks (default: this folder if it holds them, "
                         "else its assignments/)")
    options.declare(group.addoption)
    parser.addini("softlookup_exercises", "a pytest given no file runs the softlookup checks on the learner's "
                                          "exercises", type="bool", default=False)


def learners_folder(*places: Path) -> Path:
    """The folder a learner means when they name none: the first of ``places`` that holds the exercises (modules
    or notebooks), itself or in its ``assignments/``; else ``assignments``, which the error then names."""
    return next((found for place in places if (found := exercise_folder(Path(place))) is not None),
                Path("assignments"))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpt2_weights: needs the real GPT-2 weights; skipped without them")
    config.addinivalue_line("markers", "points(n): what a check is worth; grader.engine.registry reads it from the "
                                       "source")
    if config.getoption("submission") is None:
        config.option.submission = learners_folder(Path(os.curdir), config.rootpath)
    learners_pytest = (config.getini("softlookup_exercises")
                       and config.args_source == pytest.Config.ArgsSource.INVOCATION_DIR)
    if learners_pytest:
        # A bare `pytest`: the exercises' checks (the hidden ones too where the reference is), not this folder.
        # Their folders, not each file: a file outside the rootdir named as an argument gets a node id without
        # its path, so checks of the same name in two files shared one, and pytest's progress stopped at 96%.
        config.args[:] = sorted({str(path.parent) for exercise in registry.EXERCISES
                                 for path in exercise.check_files(hidden=not config.getoption("public"))})
    config.pluginmanager.register(Grading(config, learners_pytest), PLUGIN)


def grading(config) -> Grading | None:
    """The grading of this pytest session (None where this plugin is not loaded)."""
    return config.pluginmanager.get_plugin(PLUGIN)


def _check_of(item) -> tuple[registry.Exercise, bool] | None:
    """(exercise, hidden) for an item under grader/checks, else None: asked seven times a check, worked out once."""
    return _check_file(str(item.path))


@functools.lru_cache(maxsize=256)
def _check_file(path: str) -> tuple[registry.Exercise, bool] | None:
    path = Path(path)
    if registry.CHECKS_DIR not in path.parents or not path.stem.startswith("test_"):
        return None
    return registry.exercise(path.stem[len("test_"):]), path.parent.name == "hidden"


@dataclasses.dataclass
class Submission:
    """The submission graded now: what :meth:`Grading.begin_submission` found, and its result so far.

    Made whole for each submission, so that nothing of one student is left for the next.
    """

    result: SubmissionResult
    folder: Path | None = None  # resolved: what its workers copy and import from (None: none begun yet)
    ungradable: dict[str, SubmissionError] = dataclasses.field(default_factory=dict)  # module -> every check's error
    needs: dict[str, str] = dataclasses.field(default_factory=dict)  # module -> the fork server its workers need
    started: float | None = None  # time.monotonic() once it was ready to grade
    reads: dict = dataclasses.field(default_factory=dict)  # module -> what its checks read (Sandbox.release)


class Grading:
    """One pytest session's grading, registered once as its plugin: the state every hook and fixture shares.

    ``softlookup check`` grades one folder per pytest session (``--submission``,
    begun once the checks are collected); ``softlookup grade``'s judges call
    :meth:`begin_submission` and :meth:`end_submission` once per student in a
    single session (:attr:`batch`), so that pytest's start-up and collection,
    the fork servers and the reference's answers serve the whole class.
    """

    def __init__(self, config, learners_pytest: bool):
        self.options = chosen = options.Options.of(config.option)
        self.sandbox = Sandbox(  # -v or -s: show everything the learner's code printed
            require_isolation=chosen.require_isolation, forbidden=[chosen.solutions] if chosen.solutions else [],
            all_output=config.getoption("verbose", 0) > 0 or config.getoption("capture", "fd") == "no")
        self.submission = Submission(SubmissionResult(str(config.getoption("submission"))))
        self.cases: dict[tuple[str, str], int] = {}  # (module, check) -> its cases collected, sharing its points
        self.exercises: list[registry.Exercise] = []  # those whose checks were collected, in the registry's order
        self.batch = False  # set by softlookup grade: it begins and ends each submission itself
        self.problem = ""  # why --submission cannot be graded at all (runner.run_checks's problem)
        self.learners_pytest = learners_pytest  # a learner's bare pytest: its failures guide softlookup hint
        self.made = contextlib.ExitStack()  # the folder of modules made from a learner's notebooks, while graded

    def begin_submission(self, folder: Path, problem: str = "", shown: str | None = None):
        """Make ``folder`` the submission the checks run on next, with a fresh result.

        ``problem`` says why the folder cannot be graded at all (a file where
        a folder should be, a broken zip): every check then fails with it.
        ``shown`` is how messages name the folder (by default its path): a
        batch grades folders it unpacked, which are gone by the time a
        student reads their feedback.
        """
        folder = folder.resolve()
        current = self.submission = Submission(SubmissionResult(str(folder)), folder)
        # A whole time budget, no function known to hang, nothing a previous student's code printed carried over:
        self.sandbox.begin_submission(self.options.budget)
        invalid = SubmissionError(ErrorKind.INVALID, problem) if problem else None
        current.ungradable = {exercise.module: error for exercise in self.exercises
                              if (error := invalid or inspection.ungradable(folder, exercise, shown))}
        current.needs = {exercise.module: inspection.needs_of(folder, exercise) for exercise in self.exercises}
        fork_servers.preload(registry.richest(needs for module, needs in current.needs.items()
                                         if module not in current.ungradable))
        if self.options.require_isolation:  # otherwise the first learner's worker reports what holds
            self.sandbox.probe()
        current.started = time.monotonic()

    def end_submission(self) -> SubmissionResult:
        """The result of the submission begun last; its workers are stopped and its copy removed."""
        current = self.submission
        if current.started is not None:
            current.result.seconds = time.monotonic() - current.started
        if self.sandbox.protections is not None:
            current.result.unprotected = self.sandbox.protections.missing()
        if current.folder is not None:
            current.reads = self.sandbox.release(str(current.folder))
        return current.result

    def limits_for(self, module: str) -> Limits:
        """The limits of a call into the learner's ``module``: the options', its exercise's, its imports'."""
        exercise = registry.exercise(module)
        return Limits(time=self.options.time_limit_for(exercise), memory=self.options.memory_bytes,
                      needs=self.submission.needs.get(module, exercise.needs),
                      import_time=self.options.import_time_limit_for(exercise))

    # -- pytest's hooks ----------------------------------------------------------------

    def pytest_collection_modifyitems(self, config, items):
        if self.learners_pytest:  # collected folder by folder: run, and tabled, exercise by exercise as registered
            order = {exercise.module: index for index, exercise in enumerate(registry.EXERCISES)}
            items.sort(key=lambda item: (order[found[0].module], found[1]) if (found := _check_of(item)) else (-1, 0))
        if self.options.public:
            hidden = [item for item in items if (found := _check_of(item)) and found[1]]
            if hidden:
                config.hook.pytest_deselected(items=hidden)
                items[:] = [item for item in items if item not in hidden]

    def pytest_collection_finish(self, session):
        checks = [(item, found) for item in session.items if (found := _check_of(item)) is not None]
        for item, (exercise, _) in checks:
            name = item.originalname
            try:
                points = exercise.points
            except registry.RegistryError as error:
                raise pytest.UsageError(str(error)) from None
            if name not in points:  # collected, but not a marked test function of its own file (imported, made)
                raise pytest.UsageError(f"check {name} in {item.path.name} has no @pytest.mark.points(N) of its own")
            self.cases[(exercise.module, name)] = self.cases.get((exercise.module, name), 0) + 1
            _report_verdicts_plainly(item)
        if any(hidden for _, (_, hidden) in checks) and not self.options.public:
            solutions = self.options.reference_folder
            if not solutions.is_dir():  # without them the hidden checks' points would silently vanish
                raise pytest.UsageError(f"the hidden checks need the reference solutions and {solutions} is not a "
                                        "folder: give --solutions DIR, or --public to grade the public checks only")
        collected = {exercise for _, (exercise, _) in checks}
        self.exercises = [exercise for exercise in registry.EXERCISES if exercise in collected]
        # The GPT-2s a check file names (WORKER_MODELS), expected by its exercise's module and the kit's, whose
        # answers come from the same models: a first worker builds them all, not one start per model.
        for item, (exercise, _) in checks:
            for spec in getattr(item.module, "WORKER_MODELS", ()):
                for module in (exercise.module, *(f"{registry.KIT_PACKAGE}.{name}" for name in ground_truth.MODULES)):
                    slot.expect_models(module, spec.family())
        if self.exercises and not self.batch:
            self._begin_option(Path(session.config.getoption("submission")))

    def _begin_option(self, folder: Path):
        """Begin ``--submission``, its notebooks made into modules as softlookup check grades them."""
        if not folder.is_dir():
            raise pytest.UsageError(f"--submission: {folder} is not a folder; give the folder with your modules")
        try:
            modules = folder.resolve() if self.problem else self.made.enter_context(
                notebooks.module_folder(folder.resolve()))
            self.begin_submission(modules, self.problem, shown=str(folder) if modules != folder.resolve() else None)
        except (KitError, notebooks.NotebookError) as error:
            self.made.close()
            raise pytest.UsageError(str(error)) from None

    def pytest_runtest_setup(self, item):
        if (found := _check_of(item)) is not None:
            self.sandbox.begin_check(found[0].module)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        """A check of an exercise that cannot earn a point fails at once: no fixture, no worker, no torch."""
        found = _check_of(item)
        error = self.submission.ungradable.get(found[0].module) if found else None
        if error is None:
            return None
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        report = pytest.TestReport(item.nodeid, item.location, {}, "failed", str(error), "call",
                                   softlookup_error=error.kind)  # pytest_table counts the not started as such
        item.ihook.pytest_runtest_logreport(report=report)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        self._record(item, "failed", str(error), error.kind)
        return True

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        # One result per check: from setup when it skipped or failed there, else from the call.
        if _check_of(item) is None or report.when == "teardown" or (report.when == "setup" and report.passed):
            return report
        message, kind, mistake = "", "", ""
        if call.excinfo is not None:
            error = call.excinfo.value
            if isinstance(error, (CheckFailure, SubmissionError)):
                message, kind, mistake = str(error), getattr(error, "kind", ""), getattr(error, "mistake", "")
                kind = _STATUS_KINDS.get(kind, kind)
            elif report.skipped:
                message = str(getattr(error, "msg", error))
            else:
                message = f"the grader could not judge this ({type(error).__name__}: {error}); please report it"
                kind = ErrorKind.KIT
        self._record(item, "passed" if report.passed else "skipped" if report.skipped else "failed", message, kind,
                     self.sandbox.printed.text(), mistake)
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo):
        """Ctrl-C: the workers go at once, before pytest's own report of it; and that report shows where it
        was pressed, not the source of every frame on the way there (seconds of parsing on a busy machine).

        "Where" is the last frame pytest shows: Ctrl-C can land in one it hides (pluggy's hook calls), and a
        report left with no frame to show raised AssertionError out of pytest instead of ending the grading.
        """
        self.sandbox.stop_workers()
        excinfo.traceback = excinfo.traceback.filter(excinfo)[-1:]

    def pytest_sessionfinish(self, session):
        if not self.batch:
            result = self.end_submission()
            if self.learners_pytest:  # softlookup check records its own
                hint_record.record_failures(result)
        self.sandbox.close()
        self.made.close()

    def _record(self, item, outcome: str, message: str, error: str = "", printed: str = "", mistake: str = ""):
        """Add one case of a check to the result, with its share of the check's points.

        ``printed`` is what learner code printed during this check: only a check that ran has any. ``mistake``
        is the diagnosis its verdict named; a name the exercise does not list is the kit's slip, and kept out
        of the result (``softlookup dev check`` finds it in the checks' source).
        """
        exercise, hidden = _check_of(item)
        # Verdicts quote learner values and text: whatever it holds, a message is encodable and bounded.
        message, printed = (clean.clean_text(self.sandbox.learners_paths(text, as_handed_in=self.batch), limit)
                            for text, limit in ((message, MAX_MESSAGE_CHARS), (printed, MAX_PRINTED_CHARS)))
        share = exercise.points[item.originalname] / self.cases[(exercise.module, item.originalname)]
        (module, function), self.sandbox.last_call = self.sandbox.last_call or ("", ""), None  # per check
        doc = (item.function.__doc__ or "").strip()
        self.submission.result.add(
            CheckResult(
                exercise=exercise.module,
                check=item.originalname,
                case=item.callspec.id if hasattr(item, "callspec") else "",
                title=registry.check_title(doc),
                outcome=outcome,
                points=share if outcome == "passed" else 0.0,
                max_points=0.0 if outcome == "skipped" else share,
                message=message,
                hidden=hidden,
                printed=printed,
                error=error,
                function=function if module == exercise.module else "",
                mistake=mistake if mistake in exercise.mistakes else "",
            ),
            exercise.title,
        )


def _report_verdicts_plainly(item):
    """Make a failed check's report its verdict, not a traceback through the judge.

    pytest would otherwise parse the source of every frame to draw a traceback
    (about 0.2 s per failure) that a learner should not need to read.
    """
    traceback_report = item.repr_failure

    def repr_failure(excinfo, *args, **kwargs):
        if isinstance(excinfo.value, (CheckFailure, SubmissionError)):
            return str(excinfo.value)
        return traceback_report(excinfo, *args, **kwargs)

    item.repr_failure = repr_failure


# -- fixtures -----------------------------------------------------------------------


@pytest.fixture  # per check, because softlookup grade changes the folder between students
def submission(request):
    state = grading(request.config)
    return Namespace(state.sandbox, str(state.submission.folder), state.limits_for)


@pytest.fixture(scope="session")
def reference(request):
    state = grading(request.config)

    def limits_for(module: str) -> Limits:
        return dataclasses.replace(KIT_LIMITS, needs=registry.exercise(module).needs)

    return Namespace(state.sandbox, str(state.options.reference_folder.resolve()), limits_for, trusted=True)


@pytest.fixture(scope="session")
def kit(request):
    namespace = Namespace(grading(request.config).sandbox, None, lambda module: KIT_LIMITS,
                          package=registry.KIT_PACKAGE, trusted=True)
    return ground_truth.for_checks(namespace, request.config)
