"""The kit checks itself (rustlings-style): registry, solutions, stubs and tolerances agree."""

import re

import pytest

from helpers import ASSIGNMENTS, SOLUTIONS, full_marks_problems, make_submission, run
from grader.engine import registry
from grader.engine.submissions import inspection
from grader.releases import stubs


def pasteable_solution_code(module) -> set[str]:
    """Each line between the solution markers as it could be pasted, flattened, without `return` or a target.

    Lines shorter than 10 characters that way (`return None`, `return value`)
    say nothing a hint could give away.
    """
    pasteable = set()
    for line in stubs.solution_lines((SOLUTIONS / f"{module}.py").read_text()):
        code = line.split("  # ")[0].strip()
        core = flatten(re.sub(r"^(return\s+|[\w\s,\[\].]+?=(?!=))", "", code))
        if len(core) >= 10:
            pasteable.add(core)
    return pasteable


@pytest.mark.parametrize("exercise", registry.EXERCISES, ids=lambda e: e.module)
def test_hints_never_show_solution_code(exercise):
    """Hints lead from the idea to the step in words; a line of the answer would end the exercise."""
    code = pasteable_solution_code(exercise.module)
    assert len(code) >= 3  # the markers were found
    shown = {hint: [line for line in code if line in flatten(hint)] for hint in exercise.hints}
    assert not {hint: lines for hint, lines in shown.items() if lines}


def flatten(text: str) -> str:
    """Code as compared: no whitespace or backticks, one kind of quote."""
    return re.sub(r"[\s`]+", "", text).replace("'", '"')


def test_stub_replaces_only_solution_regions():
    source = 'def f(x):\n    """Doc."""\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n\nY = 1\n'
    stub = stubs.make_stub(source)
    assert '"""Doc."""' in stub and "Y = 1" in stub and "return x" not in stub
    assert '    raise NotImplementedError("f(): replace this line with your code")' in stub
    compile(stub, "stub", "exec")


@pytest.mark.parametrize("source", [
    "def f():\n    ### BEGIN SOLUTION\n    return 1\n",
    "def f():\n    return 1\n    ### END SOLUTION\n",
    "def f():\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n",
])
def test_unbalanced_markers_are_refused(source):
    with pytest.raises(stubs.MarkerError):
        stubs.make_stub(source)


def test_solutions_earn_full_marks():
    result = run(SOLUTIONS)
    assert not full_marks_problems(result)
    assert {e.name for e in result.exercises} == set(registry.BY_MODULE)



def test_full_marks_means_every_check_ran(tmp_path):
    """A check that stopped running counts 0 of 0, so score == max score would still hold: the kit's own
    full-marks tests must see it, whether the check was skipped or never collected."""
    import copy
    import dataclasses

    result = run(make_submission(tmp_path / "s"), ["softmax"])
    assert not full_marks_problems(result, ["softmax"])
    skipped, dropped = copy.deepcopy(result), copy.deepcopy(result)
    first = skipped.exercises[0].checks[0]
    skipped.exercises[0].checks[0] = dataclasses.replace(first, outcome="skipped", points=0.0, max_points=0.0)
    assert skipped.full_marks  # the old rule: fooled
    assert any("skipped" in line for line in full_marks_problems(skipped, ["softmax"]))
    dropped.exercises[0].checks = [c for c in dropped.exercises[0].checks if c.check != first.check]
    assert dropped.full_marks
    assert f"softmax: {first.check} did not run" in full_marks_problems(dropped, ["softmax"])


def test_stubs_earn_nothing():
    result = run(ASSIGNMENTS)
    assert result.score == 0
    assert all(e.status == "not started" for e in result.exercises)
    assert all("not implemented yet" in c.message for e in result.exercises for c in e.checks
               if c.outcome == "failed")


def test_not_started_is_a_stubs_raise_not_words_that_say_so(tmp_path):
    """An answer that raises ValueError("not implemented yet") is code that ran: an error, the exercise in
    progress. A stub's own ``raise NotImplementedError`` is not started, also where the file is not the stub."""
    said = make_submission(tmp_path / "said", append={"softmax": (
        'def softmax(x, axis=-1):\n    raise ValueError("not implemented yet")')})
    stub = make_submission(tmp_path / "stub", append={"softmax": (
        'def softmax(x, axis=-1):\n    raise NotImplementedError("softmax(): replace this line with your code")')})
    raised, unfinished = (run(folder, ["softmax"], hidden=False).exercises[0] for folder in (said, stub))
    assert raised.status == "in progress" and {c.error for c in raised.checks} == {"exception"}
    assert any("raised ValueError: not implemented yet" in c.message for c in raised.checks)
    assert unfinished.status == "not started" and {c.error for c in unfinished.checks} == {"not_implemented"}


# Right answers written differently must not lose points (the second-worst bug).
OTHER_RIGHT_ANSWERS = {
    "float32 everywhere": {
        "softmax": """
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float32)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
""",
    },
    "plain Python loops and lists": {
        "lookup": """
def exact_lookup(query, keys, values):
    table = {}
    for key, value in zip(keys, values):
        table.setdefault(key, value)  # the first of a repeated key stays
    return table.get(query)

def nearest_lookup(query, keys, values):
    best = 0
    for j in range(len(keys)):
        if abs(keys[j] - query) < abs(keys[best] - query):
            best = j
    return values[best]

def soft_lookup(query, keys, values, sharpness=1.0):
    if np.ndim(query) == 1:
        pairs = [soft_lookup(float(q), keys, values, sharpness) for q in query]
        return np.array([a for a, _ in pairs]), np.array([w for _, w in pairs])
    weights = softmax(np.array([-sharpness * (query - k) ** 2 for k in keys]))
    return sum(w * v for w, v in zip(weights, values)), np.array(weights)  # the docstring promises an array
""",
    },
    "masked with -1e9 and einsum": {
        "attention": """
def attend(query, keys, values):
    weights = softmax(np.einsum("d,nd->n", query, keys))
    return np.einsum("n,nv->v", weights, values), weights

def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = np.einsum("md,nd->mn", Q, K) / np.sqrt(np.shape(K)[1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    weights = softmax(scores)
    return weights @ V, weights

def causal_mask(n):
    return np.arange(n)[:, None] >= np.arange(n)[None, :]
""",
    },
    "tokenize(), a loop over heads, Conv1D called, float64": {
        "gpt2_heads": """
def head_pattern(model, tokenizer, text, layer, head):
    output = model(**tokenizer(text, return_tensors="pt"), output_attentions=True)
    return tokenizer.tokenize(text), output.attentions[layer][0, head].detach().double().numpy()

def attention_share(tokens, pattern, from_token, to_token):
    clean = [token.replace("Ġ", " ").strip() for token in tokens]
    try:
        row = clean.index(from_token.replace("Ġ", " ").strip())
        column = clean.index(to_token.replace("Ġ", " ").strip())
    except ValueError as error:  # list.index names the token; the docstring asks for the tokens there too
        raise ValueError(f"{error}: the tokens are {clean}") from None
    return float(pattern[row][column])  # a Python float, whatever the pattern's dtype

def layer_average(model, tokenizer, text, layer):
    heads = [head_pattern(model, tokenizer, text, layer, h) for h in range(model.config.n_head)]
    return heads[0][0], sum(pattern for _, pattern in heads) / len(heads)

def recompute_head_pattern(model, input_ids, layer, head):
    import math
    gpt = model.transformer if hasattr(model, "transformer") else model
    hidden = gpt(torch.tensor([list(input_ids)]), output_hidden_states=True).hidden_states[layer]
    block = gpt.h[layer]
    q, k, v = block.attn.c_attn(block.ln_1(hidden)).split(model.config.n_embd, dim=2)
    size = model.config.n_embd // model.config.n_head
    q, k = (t[0, :, head * size:(head + 1) * size].double() for t in (q, k))
    scores = q @ k.T / math.sqrt(size)
    scores[torch.ones_like(scores, dtype=torch.bool).triu(1)] = float("-inf")
    return torch.softmax(scores, dim=-1).detach().numpy()
""",
    },
    "float64 tensors made by hand, torch.optim.SGD, autograd.grad, a stable sort": {
        "learning": """
import numpy as np

def soft_answer(query, keys, values, sharpness):
    q = torch.as_tensor(query, dtype=torch.float64)
    k = torch.as_tensor(np.asarray(keys, dtype=np.float64))
    v = torch.as_tensor(np.asarray(values, dtype=np.float64))
    scores = -torch.as_tensor(sharpness, dtype=torch.float64) * (q.unsqueeze(-1) - k) ** 2
    w = (scores - scores.max(dim=-1, keepdim=True).values).exp()
    return (w * v).sum(dim=-1) / w.sum(dim=-1)

def nearest_answer(query, keys, values):
    distances = (torch.as_tensor(query, dtype=torch.float64).unsqueeze(-1) - torch.tensor(list(keys))).abs()
    return torch.tensor(list(values), dtype=torch.float64)[distances.argsort(dim=-1, stable=True)[..., 0]]

def answer_slope(query, keys, values, sharpness):
    q = torch.tensor(float(query), dtype=torch.float64, requires_grad=True)
    answer = soft_answer(q, keys, values, sharpness)
    (slope,) = torch.autograd.grad(answer, q)
    return float(answer), float(slope)

def nearest_slope(query, keys, values):
    q = torch.tensor(float(query), dtype=torch.float64, requires_grad=True)
    answer = nearest_answer(q, keys, values)
    return float(answer), 0.0 if answer.grad_fn is None else float(torch.autograd.grad(answer, q)[0])

def fit_sharpness(queries, answers, keys, values, start=0.1, steps=200, lr=5e-4):
    log_sharpness = torch.tensor(np.log(start), requires_grad=True)
    optimizer = torch.optim.SGD([log_sharpness], lr=lr)
    target = torch.tensor(np.asarray(answers, dtype=np.float64))
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(soft_answer(queries, keys, values, log_sharpness.exp()), target)
        losses.append(float(loss))
        loss.backward()
        optimizer.step()
    return float(log_sharpness.exp()), losses

def fit_nearest_key(queries, answers, keys, values, which, start, steps=50, lr=1e-3):
    key = torch.tensor(float(start), dtype=torch.float64, requires_grad=True)
    losses = []
    for _ in range(steps):
        keys_now = torch.stack([key if j == which else torch.tensor(float(k)) for j, k in enumerate(keys)])
        loss = ((nearest_answer(queries, keys_now, values) - torch.tensor(list(answers))) ** 2).mean()
        losses.append(loss.item())
        if loss.requires_grad:
            loss.backward()
            with torch.no_grad():
                key -= lr * key.grad
            key.grad = None
    return key.item(), losses
""",
    },
    "float64 by hand, a loop over tokens, lists": {
        "gpt2_values": """
def head_vectors(model, input_ids, layer, head):
    gpt = model.transformer if hasattr(model, "transformer") else model
    hidden = gpt(torch.tensor([list(input_ids)]), output_hidden_states=True).hidden_states[layer][0]
    block = gpt.h[layer]
    x = block.ln_1(hidden).detach().double()
    qkv = x @ block.attn.c_attn.weight.detach().double() + block.attn.c_attn.bias.detach().double()
    d = model.config.n_embd
    s = d // model.config.n_head
    return [qkv[:, part * d + head * s:part * d + (head + 1) * s].numpy() for part in range(3)]

def head_output(model, input_ids, layer, head):
    q, k, v = head_vectors(model, input_ids, layer, head)
    output = np.zeros_like(v)
    for i in range(len(q)):
        scores = k[:i + 1] @ q[i] / np.sqrt(q.shape[1])
        weights = np.exp(scores - scores.max())
        output[i] = (weights / weights.sum()) @ v[:i + 1]
    return output

def value_contributions(model, input_ids, layer, head, position):
    q, k, v = head_vectors(model, input_ids, layer, head)
    scores = k[:position + 1] @ q[position] / np.sqrt(q.shape[1])
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    sizes = [float(np.linalg.norm(weights[j] * v[j])) for j in range(position + 1)]
    return np.array([size / sum(sizes) for size in sizes] + [0.0] * (len(q) - position - 1))
""",
    },
}


@pytest.mark.parametrize("variant", OTHER_RIGHT_ANSWERS, ids=list(OTHER_RIGHT_ANSWERS))
def test_other_right_answers_earn_full_marks(tmp_path, variant):
    modules = OTHER_RIGHT_ANSWERS[variant]
    result = run(make_submission(tmp_path / "s", append=modules), list(modules))
    assert not full_marks_problems(result, list(modules))


@pytest.mark.parametrize("source,expected", [
    ('def f(x):\n    """Doc."""\n    # YOUR CODE HERE\n    raise NotImplementedError("f(): replace this")\n', True),
    ("def f(x):\n    raise NotImplementedError\n", True),
    ("def f(x):\n    return x\n", False),
    ("def f(x):\n    raise NotImplementedError\nf = print\n", False),
    ("def f(x):\n    raise NotImplementedError\nfrom os import path as f\n", False),
    ("def f(x):\n    raise NotImplementedError\ndef f(x):\n    return 1\n", False),
    ("def g(x):\n    raise NotImplementedError\n", False),
    ("def f(x:\n", False),
])
def test_untouched_stubs_are_recognised_without_running_them(tmp_path, source, expected):
    path = tmp_path / "module.py"
    path.write_text(source)
    assert inspection.untouched(path, ("f",)) is expected


def test_every_released_stub_is_recognised_as_untouched():
    for exercise in registry.EXERCISES:
        assert inspection.untouched(ASSIGNMENTS / f"{exercise.module}.py", exercise.functions)
        assert not inspection.untouched(SOLUTIONS / f"{exercise.module}.py", exercise.functions)
