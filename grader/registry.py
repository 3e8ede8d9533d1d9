"""The one list of exercises: every command and the kit's own tests read it.

An exercise is a module the learner edits (``assignments/<module>.py``), the
functions it must define, the points each check is worth and the hints shown
to a learner who is stuck. Checks live in ``grader/checks/{public,hidden}/
test_<module>.py`` and are found by name: a check is a test function there,
its points are listed here, and a kit test keeps the two in step.

A parametrised check shares its points equally between its cases, so partial
credit follows the number of cases passed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
CHECKS_DIR = PACKAGE_DIR / "checks"
KIT_ROOT = PACKAGE_DIR.parent  # the repository: solutions/ and assignments/ live here


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: there is one of each
class Exercise:
    module: str
    title: str
    functions: tuple[str, ...]
    points: dict[str, float]  # check (test function name) -> points
    hints: tuple[str, ...]
    time_limit: float = 5.0  # seconds per call into the learner's code
    needs_gpt2: bool = False  # imports torch and transformers

    @property
    def max_points(self) -> float:
        return sum(self.points.values())

    def check_files(self, hidden: bool = True) -> list[Path]:
        folders = ["public", "hidden"] if hidden else ["public"]
        files = [CHECKS_DIR / folder / f"test_{self.module}.py" for folder in folders]
        return [file for file in files if file.exists()]


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        module="softmax",
        title="Softmax: scores into weights",
        functions=("softmax",),
        points={
            "test_lesson_scores": 2,
            "test_weights_positive_and_sum_to_one": 2,
            "test_keeps_shape": 1,
            "test_axis": 2,
            "test_shift_invariance": 1,
            "test_large_scores": 2,
            "test_minus_infinity_gets_zero": 1,
            "test_sharpness_limits": 1,
            "test_matches_reference": 3,
        },
        hints=(
            "Exponentiate the scores, then divide by their sum along `axis` (use keepdims=True).",
            "Subtract the largest score along `axis` before np.exp: the weights do not change, "
            "and exp never sees a number large enough to overflow.",
            "exp(-inf) is exactly 0, so a masked score needs no special case.",
        ),
    ),
    Exercise(
        module="lookup",
        title="Three lookups: exact, nearest, soft",
        functions=("exact_lookup", "nearest_lookup", "soft_lookup"),
        points={
            "test_exact_lookup_finds_key": 1,
            "test_exact_lookup_missing_key": 1,
            "test_exact_lookup_first_of_repeated_key": 1,
            "test_nearest_lookup": 2,
            "test_nearest_tie_rule": 1,
            "test_lesson_table": 3,
            "test_soft_weights_sum_to_one": 1,
            "test_soft_answer_within_values": 1,
            "test_squared_distance_scores": 2,
            "test_soft_answer_is_smooth": 1,
            "test_sharpness_limits": 2,
            "test_many_queries": 2,
            "test_exact_matches_reference": 1,
            "test_nearest_matches_reference": 1,
            "test_soft_matches_reference": 3,
        },
        hints=(
            "exact_lookup: loop over (key, value) pairs and return the value when key == query; "
            "return None after the loop.",
            "nearest_lookup: np.argmin of |query - keys| picks the first of equally close keys, "
            "which is the tie rule the docstring asks for.",
            "soft_lookup: scores = -sharpness * (query - keys)**2, weights = softmax(scores), "
            "answer = weights @ values. For many queries, give the queries a new axis so the "
            "scores form a (queries x keys) matrix.",
        ),
    ),
    Exercise(
        module="attention",
        title="Queries, keys and values",
        functions=("attend", "scaled_dot_product_attention", "causal_mask"),
        points={
            "test_two_number_example": 3,
            "test_output_mixes_values": 2,
            "test_attend_weights_sum_to_one": 1,
            "test_query_length_is_sharpness": 1,
            "test_output_inside_values": 1,
            "test_scores_scaled_by_sqrt_d": 2,
            "test_matrix_output_mixes_values": 1,
            "test_mask_gives_exact_zero": 2,
            "test_mask_true_means_allowed": 1,
            "test_causal_mask": 2,
            "test_causal_attention": 1,
            "test_attend_matches_reference": 1,
            "test_sdpa_matches_reference": 3,
            "test_causal_mask_matches_reference": 1,
        },
        hints=(
            "attend: scores = keys @ query (one dot product per key), weights = softmax(scores), "
            "output = weights @ values. Keys decide the weights; values are what gets mixed.",
            "scaled_dot_product_attention: scores = Q @ K.T / sqrt(d_k), with d_k = K.shape[-1].",
            "Masking: set the scores of forbidden pairs to -np.inf before softmax "
            "(np.where(mask, scores, -np.inf)); True in the mask means 'may attend'.",
            "causal_mask(n): np.tril(np.ones((n, n), dtype=bool)).",
        ),
    ),
    Exercise(
        module="gpt2_heads",
        title="Inside GPT-2: one head's soft lookup",
        functions=("head_pattern", "attention_share", "layer_average", "recompute_head_pattern"),
        points={
            "test_tokens": 1,
            "test_head_pattern": 3,
            "test_pattern_is_causal_weights": 1,
            "test_attention_share": 2,
            "test_attention_share_unknown_token": 1,
            "test_layer_average": 2,
            "test_recompute_head_pattern": 4,
            # The lesson's claims need GPT-2 small's weights: checked where they exist, worth no
            # points, so a class's scores do not depend on which machine graded them.
            "test_lesson_claim_head_4_3": 0,
            "test_lesson_claim_layer_4_average": 0,
            "test_head_pattern_matches_reference": 2,
            "test_attention_share_matches_reference": 1,
            "test_layer_average_matches_reference": 1,
            "test_recompute_matches_reference": 2,
        },
        hints=(
            "head_pattern: ids = tokenizer(text, return_tensors='pt')['input_ids']; "
            "model(ids, output_attentions=True).attentions[layer][0, head] is the pattern.",
            "attention_share: strip a leading 'Ġ' or ' ' from every token and from both names, find the "
            "first position of each, and read pattern[from_row, to_column].",
            "layer_average: the same attentions[layer][0], averaged over the head axis (dim 0).",
            "recompute_head_pattern: hidden_states[layer] -> block.ln_1 -> block.attn.c_attn -> split into "
            "q, k, v -> the head's 64 (head size) columns -> q @ k.T / sqrt(head size) -> mask the future "
            "-> softmax.",
        ),
        time_limit=30.0,
        needs_gpt2=True,
    ),
)

BY_MODULE = {exercise.module: exercise for exercise in EXERCISES}


def exercise(module: str) -> Exercise:
    try:
        return BY_MODULE[module]
    except KeyError:
        names = ", ".join(BY_MODULE)
        raise KeyError(f"no exercise called {module!r}; the exercises are: {names}") from None
