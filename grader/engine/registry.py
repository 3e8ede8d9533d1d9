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

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # grader/
CHECKS_DIR = PACKAGE_DIR / "checks"
KIT_ROOT = PACKAGE_DIR.parent  # the repository: solutions/ and assignments/ live here


class Hint(str):
    """A hint's text, and the functions it helps with (none: the idea of the whole exercise).

    ``softlookup hint`` shows first the hints about the functions whose checks
    failed last; a plain string is a hint about the exercise as a whole.
    """

    about: tuple[str, ...] = ()

    def __new__(cls, text: str, *about: str):
        hint = super().__new__(cls, text)
        hint.about = about
        return hint


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: there is one of each
class Exercise:
    module: str
    title: str
    functions: tuple[str, ...]
    points: dict[str, float]  # check (test function name) -> points
    hints: tuple[str, ...]  # from the idea to the specific step; a Hint names the functions it is about
    time_limit: float = 5.0  # seconds per call into the learner's code
    needs: str = "numpy"  # what its workers import beforehand: "numpy", "torch" or "transformers" (GPT-2)

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
            "test_rows_far_apart": 1,
            "test_arguments_unchanged": 1,
            "test_matches_reference": 3,
        },
        hints=(
            "Softmax turns scores into weights in two moves: make every score positive with the exponential, "
            "then divide each one by the total of its row along `axis`, so that the row adds up to 1.",
            "Take the total along the axis you were given, and keep that axis as a dimension of size 1, so the "
            "division lines up with every entry of its row. A total over the whole array, or over a fixed axis, "
            "only happens to work for a vector.",
            "Large scores overflow: the exponential of 1000 is infinity. Adding the same number to every score "
            "leaves the weights unchanged, so first subtract the largest score along the axis; the biggest "
            "exponential is then exactly 1.",
            "A masked score of minus infinity needs no special case: its exponential is exactly 0, so its weight "
            "comes out 0 by itself.",
            "Leave the caller's scores alone: subtracting into a new array keeps them, while an in-place `-=` or "
            "`out=` changes the array the caller handed you, and the checks look at it after the call.",
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
            "test_very_sharp_and_far_queries": 2,
            "test_arguments_unchanged": 1,
            "test_exact_matches_reference": 1,
            "test_nearest_matches_reference": 1,
            "test_soft_matches_reference": 3,
        },
        hints=(
            "Three answers to one question. Exact: a key matches the query or it does not, and no match means "
            "None. Nearest: the value of the closest key, however far. Soft: every value, weighted by how well "
            "its key matches.",
            Hint("exact_lookup: go through the records in order and stop at the first key equal to the query; finish "
                 "with None when nothing matched. A dict made of all the pairs would keep the last of a repeated key.",
                 "exact_lookup"),
            Hint("nearest_lookup: measure how far each key lies from the query (the absolute difference) and take the "
                 "value at the position of the smallest distance. numpy's position-of-the-minimum returns the first "
                 "of equal distances, which is the tie rule.", "nearest_lookup"),
            Hint("soft_lookup: a key's score is minus the sharpness times its squared distance from the query; your "
                 "softmax from exercise 1 turns the scores into weights; the answer adds up each weight times its value.",
                 "soft_lookup"),
            Hint("Many queries at once: give the array of queries an extra last axis, so that taking away the keys "
                 "makes a table with one row per query and one column per key. Softmax each row; each row of weights "
                 "times the values is that query's answer.", "soft_lookup"),
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
            "test_long_queries": 2,
            "test_arguments_unchanged": 1,
            "test_attend_matches_reference": 1,
            "test_sdpa_matches_reference": 3,
            "test_causal_mask_matches_reference": 1,
        },
        hints=(
            "Attention is the soft lookup of exercise 2 with vectors: a query matches a key by their dot product, "
            "softmax turns the scores into weights, and the output mixes the values (not the keys) with them.",
            Hint("attend: the matrix of keys times the query vector gives one dot product per key; the weights times "
                 "the matrix of values give the output.", "attend"),
            Hint("scaled_dot_product_attention: Q times the transpose of K holds every score at once, one row per "
                 "query. Divide them by the square root of d_k, the length of a key (the last dimension of K), then "
                 "softmax each row.", "scaled_dot_product_attention"),
            Hint("Masking: before softmax, give every pair the mask forbids (False) a score of minus infinity, so its "
                 "weight comes out exactly 0. True means the query may attend to that key.",
                 "scaled_dot_product_attention"),
            Hint("causal_mask(n): an n by n grid of booleans, True on and below the diagonal (row i may see columns 0 "
                 "to i) and False above it. numpy has a function that keeps the lower triangle of a matrix.",
                 "causal_mask"),
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
            "A GPT-2 head is the attention of exercise 3 with learned matrices, and the model hands you its "
            "patterns if you ask: run it on the sentence's ids with output_attentions set, and read the tokens "
            "back from the same ids.",
            Hint("head_pattern: the tokenizer returns the ids as a tensor of shape (1, T); the output's attentions hold "
                 "one tensor per layer, of shape (1, heads, T, T): take the layer, then the first (only) sentence and "
                 "the head. The tokenizer's convert_ids_to_tokens gives the strings, such as 'Ġcat'.", "head_pattern"),
            Hint("attention_share: strip a leading 'Ġ' or space from every token and from both names, find the first "
                 "position of each name, and read the pattern at (row of the token that attends, column of the token "
                 "it attends to). A name that is not there is a ValueError.", "attention_share"),
            Hint("layer_average: the same attentions of the layer, averaged over the axis of the heads.",
                 "layer_average"),
            Hint("recompute_head_pattern: the block's input is the model's hidden state at that layer (ask for "
                 "output_hidden_states); normalise it with the block's ln_1; the block's c_attn multiplies by its "
                 "weight and adds its bias, giving q, k and v side by side, n_embd columns each.",
                 "recompute_head_pattern"),
            Hint("Then keep head h's columns of q and of k (the head size is n_embd // n_head: 16 or 8 in the tiny "
                 "models, 64 in GPT-2 small), score each q against every k divided by the square root of the head size, give "
                 "future positions (above the diagonal) minus infinity, and softmax each row.",
                 "recompute_head_pattern"),
        ),
        time_limit=30.0,
        needs="transformers",
    ),
    Exercise(
        module="learning",
        title="Why attention is soft: slopes and learning",
        functions=("soft_answer", "nearest_answer", "answer_slope", "nearest_slope", "fit_sharpness",
                   "fit_nearest_key"),
        points={
            "test_soft_answer": 2,
            "test_nearest_answer": 1,
            "test_answer_slope_lesson": 3,
            "test_answer_slope_matches_finite_differences": 2,
            "test_nearest_slope_is_zero": 2,
            "test_fit_recovers_sharpness": 3,
            "test_fit_losses_go_down": 2,
            "test_fit_losses_are_mean_squared_error": 1,
            "test_fit_keeps_sharpness_positive": 2,
            "test_fit_noisy_answers": 1,
            "test_nearest_fit_makes_no_progress": 2,
            "test_very_sharp_answers": 2,
            "test_lookups_match_reference": 1,
            "test_slopes_match_reference": 2,
            "test_fit_matches_reference": 2,
        },
        hints=(
            Hint("soft_answer: exercise 2's three steps with torch functions, on float64 tensors "
                 "(torch.as_tensor keeps a tracked tensor tracked): scores from the squared distances, torch.softmax "
                 "over the keys (dim=-1), then the weighted sum of the values.", "soft_answer", "nearest_answer"),
            Hint("answer_slope: make the query a float64 tensor with requires_grad=True, call .backward() on its soft "
                 "answer and read the query's .grad. nearest_slope: the nearest answer does not require grad at all "
                 "(argmin has no slope), and that means a slope of 0.0.", "answer_slope", "nearest_slope"),
            Hint("fit_sharpness: the parameter is the logarithm of the sharpness. Each step: the mean squared error, "
                 "its .item() into losses, backward, a step of lr times the gradient downhill under torch.no_grad(), "
                 "then zero the gradient.", "fit_sharpness"),
            Hint("fit_nearest_key: the same loop with nearest_answer and the key put in place with torch.cat; when "
                 "the loss does not require grad, the gradient is 0 and the key stays where it is.",
                 "fit_nearest_key"),
        ),
        needs="torch",
    ),
    Exercise(
        module="gpt2_values",
        title="Inside GPT-2: what a head moves",
        functions=("head_vectors", "head_output", "value_contributions"),
        points={
            "test_head_vectors": 3,
            "test_head_output": 4,
            "test_first_token_moves_only_itself": 1,
            "test_value_contributions": 4,
            "test_lesson_claim_value_4_3": 0,  # needs GPT-2 small's weights, like exercise 4's claims
            "test_head_vectors_matches_reference": 1,
            "test_head_output_matches_reference": 2,
            "test_value_contributions_matches_reference": 1,
        },
        hints=(
            Hint("head_vectors: the block's input is hidden_states[layer]; ln_1, then c_attn, whose output holds q, k "
                 "and v side by side (n_embd columns each); head h owns columns h*s to (h+1)*s of each, with the head "
                 "size s = n_embd // n_head from model.config.", "head_vectors"),
            Hint("head_output: exercise 3's scaled_dot_product_attention on the head's queries, keys and values, with "
                 "causal_mask(T): its output is the head's output.", "head_output"),
            Hint("value_contributions: row `position` of the same call's weights, times the length of each value "
                 "vector (np.linalg.norm along axis 1), divided by the sum.", "value_contributions"),
        ),
        time_limit=30.0,
        needs="transformers",
    ),
)

BY_MODULE = {exercise.module: exercise for exercise in EXERCISES}


def exercise(module: str) -> Exercise:
    try:
        return BY_MODULE[module]
    except KeyError:
        names = ", ".join(BY_MODULE)
        raise KeyError(f"no exercise called {module!r}; the exercises are: {names}") from None
