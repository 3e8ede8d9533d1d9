"""A student bundle's GPT-2 ground truth: recorded once, replayed without the code, refused where it does not hold."""

from types import SimpleNamespace

import numpy as np
import pytest

from grader.engine import ground_truth
from grader.engine.confinement import codec
from grader.engine.confinement.codec import ModelSpec
from grader.engine.errors import KitError

TINY = ModelSpec(kind="tiny", seed=0)
TEXT = "The cat sat"


def kit(digest: str, patterns=None):
    """A stand-in for the kit fixture: ``gpt2`` computes (or, without ``patterns``, must not be asked)."""
    def refuse(*args):
        raise AssertionError("a replay asked the kit's gpt2 module")

    return SimpleNamespace(gpt2=SimpleNamespace(attention_patterns=patterns or refuse),
                           models=SimpleNamespace(digest=lambda spec: digest))


@pytest.fixture
def record():
    answer = (["The", "Ġcat", "Ġsat"], np.arange(8.0).reshape(2, 2, 2))
    record = {}
    recording = ground_truth.Recording(kit("weights-1", lambda *args: answer), record)
    recording.gpt2.attention_patterns(TINY, TINY.tokenizer(), TEXT)
    return record


def test_a_replay_answers_as_recorded_without_the_code(record):
    tokens, patterns = ground_truth.Replay(kit("weights-1"), record).gpt2.attention_patterns(TINY, TINY.tokenizer(), TEXT)
    assert tokens == ["The", "Ġcat", "Ġsat"] and np.array_equal(patterns, np.arange(8.0).reshape(2, 2, 2))


def test_other_weights_under_the_same_seed_skip_rather_than_fail(record):
    with pytest.raises(pytest.skip.Exception, match="different tiny GPT-2"):
        ground_truth.Replay(kit("weights-2"), record).gpt2.attention_patterns(TINY, TINY.tokenizer(), TEXT)


def test_gpt2_small_is_never_recorded_and_its_claims_skip(record):
    real = ModelSpec(kind="real", path="/models/gpt2")
    with pytest.raises(pytest.skip.Exception, match="when your instructor grades"):
        ground_truth.Replay(kit("weights-1"), record).gpt2.lesson_shares(real, real.tokenizer())


def test_a_question_not_recorded_is_the_kits_fault(record):
    with pytest.raises(KitError, match="no recorded answer"):
        ground_truth.Replay(kit("weights-1"), record).gpt2.attention_patterns(TINY, TINY.tokenizer(), "Another text")


def test_a_standard_spec_reads_as_before_shapes_and_another_shape_has_answers_of_its_own(record):
    """Keys recorded before the tiny GPT-2 had two shapes still match; the narrow one's answers are not the standard's."""
    assert "shape" not in codec.to_plain(TINY)["model_spec"]
    narrow = ModelSpec(kind="tiny", seed=0, shape="narrow")
    assert narrow.tokenizer() == TINY.tokenizer()
    with pytest.raises(KitError, match="no recorded answer"):
        ground_truth.Replay(kit("weights-1"), record).gpt2.attention_patterns(narrow, narrow.tokenizer(), TEXT)
