"""grader.lesson.gpt2 and the reference solutions of the GPT-2 exercise.

Everything runs on the tiny seeded GPT-2, offline. Tests marked
``gpt2_weights`` need GPT-2 small on disk and are skipped without it.
"""

import os
import socket

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers is imported: never wait for the hub

import subprocess
import sys

import numpy as np
import pytest
import torch

from helpers import load_solution
from grader.engine.confinement.codec import ModelSpec
from grader.engine.registry import KIT_ROOT
from grader.lesson import gpt2, lesson, models

LESSON = "The cat sat on the mat because it was tired"
LESSON_TOKENS = ["The", "Ġcat", "Ġsat", "Ġon", "Ġthe", "Ġmat", "Ġbecause", "Ġit", "Ġwas", "Ġtired"]
LESSON_IDS = [464, 3797, 3332, 319, 262, 2603, 780, 340, 373, 10032]
CONVENTIONS = [LESSON, "<|endoftext|>" + LESSON]


solutions = load_solution("gpt2_heads")
values_solution = load_solution("gpt2_values")


@pytest.fixture(scope="module")
def tokenizer():
    return models.tiny_tokenizer()


@pytest.fixture(scope="module", params=["lm", "base"])
def model(request):
    return models.tiny_model(0, request.param)


def _same_weights(a, b) -> bool:
    pairs = zip(a.state_dict().values(), b.state_dict().values(), strict=True)
    return all(torch.equal(x, y) for x, y in pairs)


# -- the tiny pair -------------------------------------------------------------------


def test_tiny_model_is_reproducible():
    assert _same_weights(models.tiny_model(0), models.tiny_model(0))
    assert not _same_weights(models.tiny_model(0), models.tiny_model(1))
    assert _same_weights(models.tiny_model(3, "base"), models.tiny_model(3, "lm").transformer)


def test_tiny_model_leaves_global_random_state_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    models.tiny_model(5)
    assert torch.equal(torch.rand(3), expected)


# (n_layer, n_head, n_embd): the narrow shape's head size (8), head count and layer count differ from the standard's.
@pytest.mark.parametrize("shape,sizes", [("standard", (6, 4, 64)), ("narrow", (3, 6, 48))])
def test_tiny_model_shape(shape, sizes):
    model = models.tiny_model(shape=shape)
    assert isinstance(model, models.GPT2LMHeadModel) and not model.training
    assert isinstance(models.tiny_model(head="base", shape=shape), models.GPT2Model)
    config = model.config
    assert (config.n_layer, config.n_head, config.n_embd) == sizes == lesson.TINY_SHAPES[shape]
    assert config.vocab_size == len(models.TINY_VOCAB) == len(models.tiny_tokenizer())


def test_tiny_tokenizer_lesson_tokens(tokenizer):
    assert models.SENTENCES[0] == LESSON
    assert tokenizer.tokenize(LESSON) == LESSON_TOKENS
    with_eot = tokenizer("<|endoftext|>" + LESSON)["input_ids"]
    assert with_eot[0] == tokenizer.eos_token_id == tokenizer.bos_token_id == 0
    assert tokenizer.convert_ids_to_tokens(with_eot) == ["<|endoftext|>", *LESSON_TOKENS]
    assert tokenizer(LESSON, return_tensors="pt")["input_ids"].tolist() == [with_eot[1:]]


@pytest.mark.parametrize("text", models.SENTENCES)
def test_tiny_tokenizer_round_trip(tokenizer, text):
    ids = tokenizer(text)["input_ids"]
    assert tokenizer.unk_token_id not in ids
    assert tokenizer.decode(ids) == text


def test_tiny_tokenizer_unknown_word(tokenizer):
    assert tokenizer.tokenize("The zebra sat.") == ["The", "<unk>", "Ġsat", "."]


# -- the real tokenizer ------------------------------------------------------------------


def test_real_tokenizer_ids():
    tokenizer = models.real_tokenizer()
    assert len(tokenizer) == 50257
    assert tokenizer(LESSON)["input_ids"] == LESSON_IDS
    assert tokenizer("<|endoftext|>" + LESSON)["input_ids"] == [50256, *LESSON_IDS]
    assert tokenizer.tokenize(LESSON) == LESSON_TOKENS


# -- ground truth and reference solutions ------------------------------------------------


@pytest.mark.parametrize("text", CONVENTIONS)
def test_attention_patterns_are_causal_weights(model, tokenizer, text):
    tokens, attentions = gpt2.attention_patterns(model, tokenizer, text)
    T = len(tokens)
    assert tokens == tokenizer.tokenize(text)
    assert attentions.shape == (6, 4, T, T) and attentions.dtype == np.float64
    np.testing.assert_allclose(attentions.sum(axis=-1), 1, atol=1e-6)
    assert np.all(np.triu(attentions, k=1) == 0)


@pytest.mark.parametrize("shape", lesson.TINY_SHAPES)
def test_attention_patterns_are_far_from_uniform(tokenizer, shape):
    """Random weights must still give sharp patterns, or a wrong answer could pass."""
    _, attentions = gpt2.attention_patterns(models.tiny_model(shape=shape), tokenizer, LESSON)
    T = attentions.shape[-1]
    uniform = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    assert np.abs(attentions - uniform).max(axis=(2, 3)).min() > 0.2


def test_attention_patterns_refuse_a_model_without_attentions(tokenizer):
    model = models.tiny_model()
    model.set_attn_implementation("sdpa")
    with pytest.raises(RuntimeError, match="eager"):
        gpt2.attention_patterns(model, tokenizer, LESSON)


@pytest.mark.parametrize("text", CONVENTIONS)
def test_recompute_matches_transformers(model, tokenizer, text):
    _, attentions = gpt2.attention_patterns(model, tokenizer, text)
    ids = tokenizer(text)["input_ids"]
    for layer in range(6):
        for head in range(4):
            pattern = solutions.recompute_head_pattern(model, ids, layer, head)
            np.testing.assert_allclose(pattern, attentions[layer, head], atol=1e-5)
    as_array = solutions.recompute_head_pattern(model, np.array(ids), 2, 1)  # ids as a numpy array work too
    np.testing.assert_allclose(as_array, attentions[2, 1], atol=1e-5)


@pytest.mark.parametrize("text", CONVENTIONS)
def test_head_pattern_and_layer_average(model, tokenizer, text):
    tokens, attentions = gpt2.attention_patterns(model, tokenizer, text)
    for layer in range(6):
        got_tokens, average = solutions.layer_average(model, tokenizer, text, layer)
        assert got_tokens == tokens
        np.testing.assert_allclose(average, attentions[layer].mean(axis=0), atol=1e-6)
        for head in range(4):
            got_tokens, pattern = solutions.head_pattern(model, tokenizer, text, layer, head)
            assert got_tokens == tokens
            np.testing.assert_allclose(pattern, attentions[layer, head], atol=1e-6)


def test_attention_share():
    tokens = ["<|endoftext|>", "The", "Ġcat", "Ġsaw", "Ġthe", "Ġcat", "Ġit"]
    pattern = np.tril(np.arange(49, dtype=float).reshape(7, 7))
    share = solutions.attention_share
    for name in ("it", " it", "Ġit"):
        assert share(tokens, pattern, name, "Ġcat") == 44.0  # row 6, the first cat (column 2)
    assert share(tokens, pattern, "cat", "cat") == 16.0  # the first cat, for the row too
    assert share(tokens, pattern, "the", "The") == 29.0  # case counts: "the" is token 4
    assert share(tokens, pattern, "Ġit", "<|endoftext|>") == 42.0
    assert isinstance(share(list(tokens), pattern.tolist(), "it", "cat"), float)
    with pytest.raises(ValueError, match="dog") as error:
        share(tokens, pattern, "it", "dog")
    assert "Ġcat" in str(error.value)
    with pytest.raises(ValueError, match="THE"):
        share(tokens, pattern, "THE", "cat")


@pytest.mark.parametrize("text", CONVENTIONS)
def test_head_readouts_agree_with_each_other(model, tokenizer, text):
    """The hooks read what the attentions say: pattern from q and k, output = pattern @ v."""
    readouts = gpt2.head_readouts(model, tokenizer, text)
    T = len(readouts["tokens"])
    for name in ("queries", "keys", "values", "outputs"):
        assert readouts[name].shape == (6, 4, T, 16) and readouts[name].dtype == np.float64
    attentions = readouts["attentions"]
    np.testing.assert_allclose(attentions @ readouts["values"], readouts["outputs"], atol=1e-5)
    scores = readouts["queries"] @ readouts["keys"].swapaxes(-1, -2) / 4.0  # sqrt(head size 16)
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    pattern = np.exp(scores - scores.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(pattern / pattern.sum(axis=-1, keepdims=True), attentions, atol=1e-5)


@pytest.mark.parametrize("weights,values,shares", [
    ((0.6, 0.4), [(0.6, 0.8), (1.8, -2.4)], (1 / 3, 2 / 3)),  # the docstring's example: lengths 1 and 3
    ((0.5, 0.5, 0.0), [(2.0, 0.0), (0.0, -2.0), (3.0, 4.0)], (0.5, 0.5, 0.0)),  # a token after the position
    ((0.9, 0.1), [(0.1, 0.0), (0.0, 9.0)], (0.09 / 0.99, 0.9 / 0.99)),  # 90% of the attention, 9% of what moves
], ids=["docstring", "masked", "short value"])
def test_value_shares_are_the_numbers_worked_by_hand(weights, values, shares):
    """The expected shares that the checks and the tests below compare with, pinned to arithmetic done by hand
    (weight times value length, over their sum), not to the code that computes them."""
    np.testing.assert_allclose(lesson.value_shares(weights, values), shares, rtol=1e-12)


@pytest.mark.parametrize("text", CONVENTIONS)
def test_values_solution_matches_transformers(model, tokenizer, text):
    readouts = gpt2.head_readouts(model, tokenizer, text)
    ids = tokenizer(text)["input_ids"]
    for layer in range(6):
        for head in range(4):
            vectors = values_solution.head_vectors(model, ids, layer, head)
            for name, received in zip(("queries", "keys", "values"), vectors):
                np.testing.assert_allclose(received, readouts[name][layer, head], atol=1e-6)
            output = values_solution.head_output(model, ids, layer, head)
            np.testing.assert_allclose(output, readouts["outputs"][layer, head], atol=1e-5)
            for position in (0, len(ids) - 1):
                shares = values_solution.value_contributions(model, ids, layer, head, position)
                expected = lesson.value_shares(readouts["attentions"][layer, head, position],
                                               readouts["values"][layer, head])
                np.testing.assert_allclose(shares, expected, atol=1e-6)
                assert shares.sum() == pytest.approx(1) and np.all(shares[position + 1:] == 0)


def test_lesson_value_shares(tokenizer):
    measured = gpt2.lesson_value_shares(models.tiny_model(), tokenizer)
    assert list(measured) == list(lesson.CONVENTIONS)
    for data in measured.values():
        row = lesson.position(data["tokens"], "it")
        assert data["attention"].shape == data["value"].shape == (len(data["tokens"]),)
        assert data["value"].sum() == pytest.approx(1) and np.all(data["value"][row + 1:] == 0)


@pytest.mark.parametrize("module,allowed", [("gpt2_heads", {"numpy", "torch"}),
                                            ("gpt2_values", {"numpy", "torch", "attention"})])
def test_solutions_import_only_numpy_and_torch(module, allowed):
    source = (KIT_ROOT / "solutions" / f"{module}.py").read_text()
    imports = {line.split()[1] for line in source.splitlines() if line.startswith(("import ", "from "))}
    assert imports == allowed


# -- finding, loading and building models -------------------------------------------


def test_real_model_fails_fast_without_weights(monkeypatch, tmp_path):
    """Without weights on disk the loader says where to put them, offline: it never tries the network."""
    monkeypatch.delenv(models.ENV_VAR, raising=False)

    def no_network(*args, **kwargs):
        raise AssertionError("the loader tried the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    cases = [{"path": tmp_path}]
    if not models.real_available():  # no GPT-2 in this machine's Hugging Face cache
        cases.append({})
    for kwargs in cases:
        with pytest.raises(models.GPT2NotFound) as error:
            models.real_model(**kwargs)
        message = str(error.value)
        assert "\n" not in message and "softlookup fetch-gpt2" in message and models.ENV_VAR in message
    monkeypatch.setenv(models.ENV_VAR, str(tmp_path))
    assert not models.real_available()
    with pytest.raises(models.GPT2NotFound, match=str(tmp_path)):
        models.real_model()


def test_real_model_loads_a_folder(monkeypatch, tmp_path):
    """The loading path, with the tiny model standing in for GPT-2 small."""
    tiny = models.tiny_model(7)
    tiny.save_pretrained(tmp_path)
    assert models.real_available(tmp_path)
    monkeypatch.setenv(models.ENV_VAR, str(tmp_path))
    for head in ("lm", "base"):
        loaded = models.build(ModelSpec(kind="real", head=head))
        assert not loaded.training and loaded.config._attn_implementation == "eager"
        assert _same_weights(loaded, tiny if head == "lm" else tiny.transformer)


def test_build():
    assert _same_weights(models.build(ModelSpec(seed=2, head="base")), models.tiny_model(2, "base"))
    hidden = models.build(ModelSpec(seed=2).without_attentions())
    assert _same_weights(hidden, models.tiny_model(2))
    ids = models.tiny_tokenizer()(LESSON, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        assert not hidden(ids, output_attentions=True).attentions  # nothing to copy a pattern from
        assert torch.allclose(hidden(ids).logits, models.tiny_model(2)(ids).logits, atol=1e-5)
    with pytest.raises(RuntimeError, match="recompute"):
        hidden.set_attn_implementation("eager")
    narrow = ModelSpec(seed=2, shape="narrow").without_attentions()
    assert narrow.shape == "narrow" and _same_weights(models.build(narrow), models.tiny_model(2, shape="narrow"))
    assert narrow.tokenizer() == ModelSpec(seed=2).tokenizer()  # one tokenizer for every shape
    tokenizer = models.build(ModelSpec().tokenizer())
    assert tokenizer.tokenize(LESSON) == LESSON_TOKENS
    assert models.build(ModelSpec(kind="real").tokenizer())(LESSON)["input_ids"] == LESSON_IDS
    for wrong in (ModelSpec(kind="huge"), ModelSpec(shape="huge"), ModelSpec(kind="real", shape="narrow")):
        with pytest.raises(ValueError):
            models.build(wrong)


def test_load_gives_the_tiny_pair_without_weights(monkeypatch, tmp_path):
    monkeypatch.setenv(models.ENV_VAR, str(tmp_path))
    model, tokenizer, name = models.load()
    assert "tiny" in name and _same_weights(model, models.tiny_model())
    assert tokenizer.tokenize(LESSON) == LESSON_TOKENS
    models.tiny_model(7).save_pretrained(tmp_path)
    model, tokenizer, name = models.load()
    assert "GPT-2 small" in name and _same_weights(model, models.tiny_model(7))
    assert tokenizer(LESSON)["input_ids"] == LESSON_IDS


def test_fetch_fails_in_one_line_offline(tmp_path):
    from huggingface_hub import constants

    if not constants.HF_HUB_OFFLINE:
        pytest.skip("huggingface_hub was imported before HF_HUB_OFFLINE was set: it would download")
    with pytest.raises(models.GPT2NotFound) as error:
        models.fetch_gpt2(tmp_path / "gpt2")
    assert "\n" not in str(error.value)


FORK_AFTER_IMPORT = """
import os, sys
from grader.lesson import gpt2, models  # import torch and transformers, run no torch operation
pid = os.fork()
if pid == 0:
    tokens, attentions = gpt2.attention_patterns(models.tiny_model(), models.tiny_tokenizer(), models.SENTENCES[0])
    os._exit(0 if attentions.shape == (6, 4, 10, 10) else 1)
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def test_a_process_forked_after_import_builds_models():
    """Grading workers are forked from a fork server that has imported grader.lesson.models."""
    done = subprocess.run([sys.executable, "-c", FORK_AFTER_IMPORT], cwd=KIT_ROOT, timeout=120,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# -- GPT-2 small itself ----------------------------------------------------------------


@pytest.fixture(scope="module")
def real_pair():
    if not models.real_available():
        pytest.skip(f"GPT-2 small is not on this machine (run `softlookup fetch-gpt2`, set {models.ENV_VAR})")
    return models.real_model(), models.real_tokenizer()


@pytest.mark.gpt2_weights
@pytest.mark.parametrize("text", CONVENTIONS)
def test_real_head_pattern_matches_recompute(real_pair, text):
    model, tokenizer = real_pair
    tokens, attentions = gpt2.attention_patterns(model, tokenizer, text)
    assert attentions.shape == (12, 12, len(tokens), len(tokens))
    got_tokens, pattern = solutions.head_pattern(model, tokenizer, text, 4, 3)
    assert got_tokens == tokens
    np.testing.assert_allclose(pattern, attentions[4, 3], atol=1e-6)
    recomputed = solutions.recompute_head_pattern(model, tokenizer(text)["input_ids"], 4, 3)
    np.testing.assert_allclose(recomputed, attentions[4, 3], atol=1e-5)


@pytest.mark.gpt2_weights
@pytest.mark.parametrize("text", CONVENTIONS)
def test_real_head_output_matches_transformers(real_pair, text):
    model, tokenizer = real_pair
    readouts = gpt2.head_readouts(model, tokenizer, text)
    assert readouts["outputs"].shape == (12, 12, len(readouts["tokens"]), 64)
    output = values_solution.head_output(model, tokenizer(text)["input_ids"], 4, 3)
    np.testing.assert_allclose(output, readouts["outputs"][4, 3], atol=1e-4)


@pytest.mark.parametrize("switch_back", [
    lambda model: setattr(model.config, "_attn_implementation", "eager"),
    lambda model: type(model).set_attn_implementation(model, "eager"),
    lambda model: setattr(model.get_decoder().config if hasattr(model, "get_decoder") else model.config,
                          "_attn_implementation", "eager"),
], ids=["through its config", "through its class", "through the base model's config"])
def test_a_model_with_hidden_weights_stays_hidden_when_switched_back(switch_back):
    """A learner's one line cannot bring the weights back for recompute_head_pattern; the outputs stay right."""
    ids = torch.tensor([[2, 3, 4, 5, 6]])
    hidden = models.hide_attention_weights(models.tiny_model())
    switch_back(hidden)
    output = hidden(ids, output_attentions=True)
    assert not output.attentions
    assert torch.allclose(output.logits, models.tiny_model()(ids).logits, atol=1e-5)
