"""The real-GPT-2 path end to end, on a stand-in: a small random GPT-2 with GPT-2's vocabulary, on disk.

GPT-2 small's weights cannot be had here, so this proves everything around
them: finding a folder, loading it offline, the shipped tokenizer, the claim
checks running (not skipped) and reporting exactly what they measured, and
gpt2-report naming the model it used and showing value shares beside attention.
"""

import re

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from helpers import SOLUTIONS
from grader.engine import registry
from grader.engine.classes.runner import run_checks
from grader.engine.options import Options
from grader.lesson import gpt2, models
from helpers import softlookup


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpt2-stand-in")
    config = GPT2Config(n_layer=5, n_head=4, n_embd=32, vocab_size=50257, n_positions=64, initializer_range=0.2)
    torch.manual_seed(0)
    GPT2LMHeadModel(config).save_pretrained(folder)
    return folder


def test_claim_checks_run_and_say_what_they_measured(stand_in):
    result = run_checks(SOLUTIONS, [registry.exercise("gpt2_heads")], Options(public=True, gpt2_model=stand_in))
    claims = [c for e in result.exercises for c in e.checks if c.check.startswith("test_lesson_claim")]
    assert [c.outcome for c in claims] == ["failed", "failed"]  # random weights do not give 84%
    for claim in claims:
        assert claim.max_points == 0
        learner, truth = re.search(r"Your code measured (.*)\. transformers itself measures (.*)\. If", claim.message).groups()
        assert learner == truth  # the reference agrees with transformers, so the message blames the claim
        assert "as Hugging Face tokenizes it" in learner and "with <|endoftext|> first" in learner
    assert result.full_marks  # 0-point claims never cost points


def test_value_claim_check_runs_and_agrees_with_transformers(stand_in):
    result = run_checks(SOLUTIONS, [registry.exercise("gpt2_values")], Options(public=True, gpt2_model=stand_in))
    (claim,) = [c for e in result.exercises for c in e.checks if c.check == "test_lesson_claim_value_4_3"]
    assert claim.max_points == 0 and result.full_marks
    model = models.real_model(stand_in)
    truth = gpt2.lesson_value_shares(model, models.real_tokenizer())
    holds = any(data["tokens"][data["value"].argmax()] == "Ġcat" for data in truth.values())
    assert claim.outcome == ("passed" if holds else "failed")
    if not holds:  # the reference measures what transformers measures, so the message blames the claim
        learner, measured = re.search(r"Your code measured (.*)\. transformers itself measures (.*)\. If",
                                      claim.message).groups()
        assert learner == measured and "with <|endoftext|> first" in learner


def test_gpt2_report_uses_the_folder_it_is_given(stand_in, tmp_path):
    done = softlookup("gpt2-report", "--model", stand_in, "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"GPT-2 small, from {stand_in}")
    assert len(list(tmp_path.glob("*.png"))) == 2
    assert "value share" in done.stdout
    assert done.stdout.count("the largest value share is") == 2  # one line per convention


def test_the_skip_says_where_to_put_the_weights_and_check_finds_them_there(stand_in):
    if models.real_available():
        pytest.skip("GPT-2 small is on this machine: the claim checks run, and no skip is shown")
    plain = softlookup("check", SOLUTIONS, "--exercise", "gpt2_values", "--public")
    skipped = next(line for line in plain.stdout.splitlines() if "test_lesson_claim_value_4_3" in line and "○" in line)
    assert "softlookup fetch-gpt2 FOLDER" in skipped and "into FOLDER" in skipped, skipped  # where to put them
    assert "softlookup check --gpt2-model FOLDER" in skipped and "SOFTLOOKUP_GPT2=FOLDER" in skipped, skipped
    followed = softlookup("check", SOLUTIONS, "--exercise", "gpt2_values", "--public", "--gpt2-model", stand_in)
    assert followed.returncode == 0, followed.stdout + followed.stderr
    assert "weights are not on this machine" not in followed.stdout  # the claim check found the folder and ran
