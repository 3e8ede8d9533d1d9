"""GPT-2 models for the exercises: a tiny seeded pair for grading, the real one for the lesson.

Checks grade learners on the *tiny* pair: a GPT-2 with random weights, in
two shapes (``lesson.TINY_SHAPES``: 6 layers of 4 heads of size 16, and 3
layers of 6 heads of size 8), and an 88-token tokenizer, all built in memory
in milliseconds, with no files and no network. Its tokens look like GPT-2's ("The", "Ġcat") and its model is
a genuine ``transformers`` GPT-2, so code that works on it works unchanged on
GPT-2 small. The *real* pair (the lesson's numbers) needs the weights on disk:
``real_model`` looks only there and fails at once, in one line, without them.

Importing this module runs no torch operation and builds nothing: the grader
imports it in a fork server, and workers forked from there build the models
before any learner code runs. It computes no answers: the ground truth lives
in :mod:`grader.lesson.gpt2`, which learner workers never load.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import torch
from huggingface_hub import snapshot_download, try_to_load_from_cache
from tokenizers import Tokenizer, decoders, pre_tokenizers
from tokenizers.models import WordLevel
from transformers import (AttentionInterface, GPT2Config, GPT2LMHeadModel, GPT2Model, GPT2Tokenizer,
                          PreTrainedTokenizerFast)
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.models.gpt2.modeling_gpt2 import GPT2Attention

from grader.lesson import lesson

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "gpt2"
ENV_VAR = "SOFTLOOKUP_GPT2"
HUB_IDS = ("gpt2", "openai-community/gpt2")
HUB_FILES = ["config.json", "generation_config.json", "model.safetensors",
             "tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt"]
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
HEADS = {"lm": GPT2LMHeadModel, "base": GPT2Model}

EOT, UNK = "<|endoftext|>", "<unk>"
SENTENCES = (
    "The cat sat on the mat because it was tired",
    "The dog chased the ball across the garden because it was bored",
    "A little bird sang in the old tree and it sounded happy",
    "The teacher thanked the student because she had worked hard",
    "When the rain stopped the children ran outside to play",
)


class GPT2NotFound(RuntimeError):
    """GPT-2 small's weights are not on this machine."""


def _tiny_vocab() -> dict[str, int]:
    """<|endoftext|> = 0, <unk> = 1, then the words of SENTENCES, "." and ",", bare and after a space."""
    vocab = {EOT: 0, UNK: 1}
    for word in [w for sentence in SENTENCES for w in sentence.split()] + [".", ","]:
        for token in (word, "Ġ" + word):
            vocab.setdefault(token, len(vocab))
    return vocab


TINY_VOCAB = _tiny_vocab()


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    """A word-level tokenizer that splits text exactly as GPT-2's does, before its merges.

    GPT-2's byte-level pre-tokenizer writes a leading space as "Ġ", so its
    tokens come out as "The", "Ġcat", ...; a word outside the vocabulary
    becomes "<unk>". "<|endoftext|>" is special: it stays one token in text.
    """
    backend = Tokenizer(WordLevel(TINY_VOCAB, unk_token=UNK))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    backend.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token=EOT, eos_token=EOT, unk_token=UNK)


def tiny_model(seed: int = 0, head: str = "lm", shape: str = "standard") -> GPT2LMHeadModel | GPT2Model:
    """A GPT-2 of one of ``lesson.TINY_SHAPES`` with random weights, the same for the same seed.

    ``initializer_range=0.2`` (ten times the usual) gives weights large enough
    that every head attends unevenly; at the usual 0.02 the patterns are
    nearly uniform and a wrong implementation could pass a tight tolerance.
    Every bias and every LayerNorm is random too (:func:`_like_a_trained_one`).
    Eager attention: any other implementation returns no attentions.
    """
    n_layer, n_head, n_embd = lesson.TINY_SHAPES[shape]
    config = GPT2Config(n_layer=n_layer, n_head=n_head, n_embd=n_embd, vocab_size=len(TINY_VOCAB), n_positions=32,
                        bos_token_id=0, eos_token_id=0, initializer_range=0.2, attn_implementation="eager")
    with torch.random.fork_rng(devices=[]):  # leave the caller's random state alone
        torch.manual_seed(seed)
        model = HEADS[head](config)
    _like_a_trained_one(getattr(model, "transformer", model), torch.Generator().manual_seed(seed))
    return model.eval()


def _like_a_trained_one(model, generator: torch.Generator):
    """Seeded random biases and LayerNorm parameters, where transformers starts them at 0 (and weight 1).

    A blank GPT-2 cannot tell code that forgets ``c_attn``'s bias, or takes
    ``ln_2`` or ``ln_f`` in place of ``ln_1``, from code that does not: each
    of those is the identity (or nothing) at its default. GPT-2 small's are
    far from it, and now so are the tiny models': every parameter the
    lesson's recomputation uses changes the answer. Drawn from a generator
    of their own, so a ``GPT2Model`` and a ``GPT2LMHeadModel`` of one seed
    share every weight.
    """
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith("bias"):
                parameter.normal_(0.0, 0.3, generator=generator)
            elif "ln_" in name and name.endswith("weight"):  # a block's ln_1 and ln_2, the model's ln_f
                parameter.uniform_(0.5, 1.5, generator=generator)


def digest(model) -> str:
    """A fingerprint of a model's weights, equal only for bit-identical weights.

    A student bundle's recorded answers (:mod:`grader.engine.ground_truth`) hold only
    for the tiny GPT-2 they were computed on; another torch or transformers
    may initialise it differently under the same seed.
    """
    import hashlib

    hasher = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        hasher.update(name.encode())
        hasher.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return hasher.hexdigest()

def real_tokenizer() -> GPT2Tokenizer:
    """GPT-2's own tokenizer, from OpenAI's BPE files shipped with the kit (see NOTICE.md).

    Not ``vocab_file=``/``merges_file=``: transformers 5 ignores them and
    silently builds a tokenizer that knows a single token.
    """
    return GPT2Tokenizer(vocab=str(DATA_DIR / "encoder.json"), merges=str(DATA_DIR / "vocab.bpe"))


def _has_weights(folder) -> bool:
    folder = Path(folder)
    return (folder / "config.json").is_file() and any((folder / name).is_file() for name in WEIGHT_FILES)


def locate(path=None) -> str | None:
    """The folder that holds GPT-2 small: ``path``, else $SOFTLOOKUP_GPT2, else the Hugging Face cache."""
    folder = path or os.environ.get(ENV_VAR)
    if folder:
        return str(folder) if _has_weights(folder) else None
    for repo in HUB_IDS:
        config = try_to_load_from_cache(repo, "config.json")
        if isinstance(config, str) and _has_weights(Path(config).parent):
            return str(Path(config).parent)
    return None


def real_available(path=None) -> bool:
    """Whether :func:`real_model` would find the weights (looks at files only, loads nothing)."""
    return locate(path) is not None


def real_model(path=None, head: str = "lm") -> GPT2LMHeadModel | GPT2Model:
    """GPT-2 small from disk, never from the network: fails at once when it is not there."""
    folder = locate(path)
    if folder is None:
        where = path or os.environ.get(ENV_VAR)
        found = f"no GPT-2 (config.json, model.safetensors) in {where}" if where else "no GPT-2 on this machine"
        raise GPT2NotFound(f"{found}: run `softlookup fetch-gpt2 FOLDER` on a machine with internet, "
                           f"copy FOLDER here and set {ENV_VAR}=FOLDER")
    model = HEADS[head].from_pretrained(folder, local_files_only=True, attn_implementation="eager")
    return model.eval()


def load(path=None) -> tuple[GPT2LMHeadModel, GPT2Tokenizer | PreTrainedTokenizerFast, str]:
    """``(model, tokenizer, name)``: GPT-2 small where its weights are on disk, else the tiny seeded pair.

    One call for trying the GPT-2 exercise by hand::

        from grader.lesson.models import load
        model, tokenizer, name = load()    # name says which one you got
        ids = tokenizer("The cat sat on the mat", return_tensors="pt")["input_ids"]
    """
    if real_available(path):
        return real_model(path), real_tokenizer(), f"GPT-2 small, from {locate(path)}"
    return tiny_model(), tiny_tokenizer(), "the tiny seeded GPT-2 (GPT-2 small's weights are not on this machine)"


def fetch_gpt2(target) -> str:
    """Download GPT-2 small's files into ``target`` (needs internet); returns the folder."""
    try:
        snapshot_download(HUB_IDS[1], local_dir=target, allow_patterns=HUB_FILES)
    except OSError as exc:  # offline, no DNS, hub down: all end up here
        raise GPT2NotFound(f"could not download GPT-2 from the Hugging Face hub ({type(exc).__name__}): "
                           "is this machine online, with HF_HUB_OFFLINE unset?") from None
    return str(target)


def _attention_without_weights(module, query, key, value, attention_mask, **kwargs):
    """transformers' SDPA attention, minus the weights: ``output_attentions`` then gives nothing."""
    output, _ = sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    return output, None


HIDDEN_WEIGHTS = "softlookup_hidden_weights"
AttentionInterface.register(HIDDEN_WEIGHTS, _attention_without_weights)


def hide_attention_weights(model):
    """The same model, computing the same outputs, but unable to report its attention weights.

    For the checks of functions that must recompute a pattern from the
    weights: reading ``output_attentions`` (or switching the model back to
    eager attention) would only copy the answer.
    """
    model.set_attn_implementation(HIDDEN_WEIGHTS)

    def refuse(*args, **kwargs):
        raise RuntimeError("this model's attention weights are hidden: recompute them from its weights")

    model.set_attn_implementation = refuse
    # Each attention layer reads its implementation from its own config, one that answers HIDDEN_WEIGHTS
    # whatever is set: switching the model back (its config, or set_attn_implementation through its class)
    # then changes nothing that computes attention.
    hidden = copy.copy(model.config)
    hidden.__class__ = type("HiddenWeightsConfig", (type(model.config),), {
        "_attn_implementation": property(lambda self: HIDDEN_WEIGHTS, lambda self, value: None)})
    for module in model.modules():
        if isinstance(module, GPT2Attention):
            module.config = hidden
    return model


def build(spec):
    """The model or tokenizer a :class:`grader.engine.confinement.codec.ModelSpec` names (workers build their own)."""
    shapes = lesson.TINY_SHAPES if spec.kind == "tiny" else ("standard",)  # GPT-2 small has one shape
    if spec.kind not in ("tiny", "real") or spec.part not in ("model", "tokenizer") or spec.shape not in shapes:
        raise ValueError(f"cannot build {spec}")
    if spec.part == "tokenizer":
        return tiny_tokenizer() if spec.kind == "tiny" else real_tokenizer()
    model = tiny_model(spec.seed, spec.head, spec.shape) if spec.kind == "tiny" else real_model(spec.path, spec.head)
    return model if spec.attentions else hide_attention_weights(model)
