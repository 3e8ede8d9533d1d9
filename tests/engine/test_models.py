"""The GPT-2 models a worker is handed: built once per process, and each worker's copy its own.

The fork server builds every model a worker asks for before forking it
(grader.engine.confinement.model_cache), and the models an exercise's checks need
are remembered from one grading to the next (grader.engine.slot.MODELS_NEEDED).
So a second grading of a GPT-2 exercise starts one worker for the learner's
module, not one per model; and a learner who changes a model in place
changes only their own copy, never the next student's.
"""

from helpers import exercise_score, full_marks_problems, make_submission, run
from grader.engine import slot

# Appended to a right gpt2_heads.py: every call, once answered, zeroes the weights of the model it was given.
VANDAL = '''
import functools as _functools
import torch as _torch


def _vandal(function):
    @_functools.wraps(function)
    def wrapped(*args, **kwargs):
        answer = function(*args, **kwargs)
        for argument in args:
            if isinstance(argument, _torch.nn.Module):
                with _torch.no_grad():
                    for parameter in argument.parameters():
                        parameter.zero_()
        return answer
    return wrapped


head_pattern = _vandal(head_pattern)
layer_average = _vandal(layer_average)
recompute_head_pattern = _vandal(recompute_head_pattern)
'''


def learner_starts(monkeypatch) -> list[int]:
    """How many models each worker started for learner code was built with, in start order."""
    started = []
    real = slot.Slot.start

    def start(self):
        real(self)
        if not self.trusted:
            started.append(len(self.built))

    monkeypatch.setattr(slot.Slot, "start", start)
    return started


def test_a_second_grading_starts_one_worker_for_the_learners_module(tmp_path, monkeypatch):
    folder = make_submission(tmp_path / "submission")
    first = run(folder, ["gpt2_heads"])
    started = learner_starts(monkeypatch)
    (folder / "gpt2_heads.py").write_text((folder / "gpt2_heads.py").read_text() + "\n# saved again\n")
    second = run(folder, ["gpt2_heads"])
    assert exercise_score(first, "gpt2_heads") == exercise_score(second, "gpt2_heads")
    assert not full_marks_problems(second, ["gpt2_heads"])
    assert len(started) == 1 and started[0] > 1, started  # every model the checks need, in one worker


def test_a_learner_who_changes_a_model_changes_only_their_own_copy(tmp_path):
    vandal = run(make_submission(tmp_path / "vandal", append={"gpt2_heads": VANDAL}), ["gpt2_heads"])
    earned, possible = exercise_score(vandal, "gpt2_heads")
    assert earned < possible  # its own later calls saw the zeroed model
    honest = run(make_submission(tmp_path / "honest"), ["gpt2_heads"])
    assert not full_marks_problems(honest, ["gpt2_heads"])


def test_a_first_grading_starts_one_worker_for_the_learners_module(tmp_path, monkeypatch):
    """The check files name the models they hand out (WORKER_MODELS): a fresh process builds them all at once."""
    monkeypatch.setattr(slot, "MODELS_NEEDED", {})  # nothing remembered, as in a fresh process
    started = learner_starts(monkeypatch)
    result = run(make_submission(tmp_path / "submission"), ["gpt2_heads"])
    assert not full_marks_problems(result, ["gpt2_heads"])
    assert len(started) == 1 and started[0] > 1, started


def test_the_check_files_name_every_model_their_checks_hand_out(tmp_path, monkeypatch):
    """A model that no check file names is learned late, a worker started again for it. With the names set
    aside, the reference's grading asks for no model outside them."""
    declared = {}
    monkeypatch.setattr(slot, "MODELS_NEEDED", {})
    monkeypatch.setattr(slot, "expect_models", lambda module, specs: declared.setdefault(module, set()).update(specs))
    modules = ["gpt2_heads", "gpt2_values"]
    assert not full_marks_problems(run(make_submission(tmp_path / "submission"), modules), modules)
    asked = {module: specs for module, specs in slot.MODELS_NEEDED.items() if specs}
    unnamed = {module: specs - declared.get(module, set()) for module, specs in asked.items()}
    assert asked and not any(unnamed.values()), unnamed
