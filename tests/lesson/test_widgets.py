"""The widgets' update logic on the learner's functions: the numbers a learner reads off each picture."""

import importlib.util
import sys

import numpy as np
import pytest

from helpers import ASSIGNMENTS, SOLUTIONS
from grader.lesson import explore, lesson, widgets


def load(folder, module):
    """A module of ``folder`` imported under its own name, with its sibling ``softmax`` beside it."""
    sys.path.insert(0, str(folder))
    try:
        for name in ("softmax", module):
            sys.modules.pop(name, None)
        spec = importlib.util.spec_from_file_location(module, folder / f"{module}.py")
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        return loaded
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("softmax", None)


def lookups(folder):
    module = load(folder, "lookup")
    return {"exact": module.exact_lookup, "nearest": module.nearest_lookup, "soft": module.soft_lookup}


def test_house_prices_show_the_lesson_table():
    shown = explore.house_prices(lookups(SOLUTIONS), "soft", 3.0, 1.5)
    assert [row[3] for row in shown.table()] == ["0.55%", "49.45%", "49.45%", "0.55%"]  # not 0.55% shown as 1%
    assert [row[4] for row in shown.table()] == ["0.82", "103.85", "168.13", "2.31"]  # they add up to the answer
    assert explore.HousePrices.HEADER[4] == "weight × value (£k)"  # in the unit of the answer
    assert explore.pounds(shown.answer) == "£275.11k"


@pytest.mark.parametrize("method,query,answer", [("exact", 3.0, "nothing found"), ("exact", 4.0, "£340k"),
                                                 ("nearest", 3.0, "£210k"), ("nearest", 4.6, "£420k")])
def test_hard_lookups_put_all_weight_on_one_row(method, query, answer):
    shown = explore.house_prices(lookups(SOLUTIONS), method, query, 1.5)
    assert explore.pounds(shown.answer) == answer
    weights = [row.weight for row in shown.rows]
    assert sum(weights) == (0 if shown.answer is None else 1)


def test_price_curves_sweep_the_query():
    curves = explore.price_curves(lookups(SOLUTIONS), sharpness=1.5)
    assert set(curves) == set(explore.METHODS)
    assert np.isnan(curves["exact"]).sum() == len(explore.QUERIES) - len(lesson.BEDROOMS)
    assert np.all(np.diff(curves["soft"]) > 0)  # smooth and rising, unlike the nearest match's steps
    assert curves["soft"][explore.QUERIES.tolist().index(3.0)] == pytest.approx(275.11, abs=0.01)


def test_two_number_query_shows_77_68_percent_on_cat():
    shown = explore.two_numbers(load(SOLUTIONS, "attention").attend, lesson.QUERY)
    table = {row[0]: row for row in shown.table()}
    assert table["cat"][2:] == ("2.44", "77.68%")
    assert shown.arrow_widths().argmax() == lesson.TOKENS.index("cat")
    assert np.allclose(shown.path[-1], shown.output)  # the scaled values, tip to tail, end at the output


def test_gpt2_head_marks_the_row_of_it():
    from grader.lesson import models

    module = load(SOLUTIONS, "gpt2_heads")
    shown = explore.head(module.head_pattern, models.tiny_model(), models.tiny_tokenizer(), lesson.SENTENCE, 4, 3)
    assert shown.tokens[shown.highlight] == " it"
    assert np.allclose(shown.pattern.sum(axis=1), 1)


@pytest.mark.parametrize("picture,module", [
    (lambda m: explore.house_prices({"soft": m.soft_lookup}, "soft", 3.0, 1.5), "lookup"),
    (lambda m: explore.two_numbers(m.attend, lesson.QUERY), "attention"),
])
def test_stubs_ask_for_the_function_first(picture, module):
    with pytest.raises(explore.NotReady, match="Implement `(soft_lookup|attend)` first"):
        picture(load(ASSIGNMENTS, module))


def test_a_missing_softmax_is_named_not_the_function_that_calls_it(tmp_path):
    """soft_lookup is written but softmax is still a stub: the picture asks for softmax."""
    (tmp_path / "softmax.py").write_text((ASSIGNMENTS / "softmax.py").read_text())
    (tmp_path / "lookup.py").write_text((SOLUTIONS / "lookup.py").read_text())
    with pytest.raises(explore.NotReady, match="Implement `softmax` first"):
        explore.house_prices(lookups(tmp_path), "soft", 3.0, 1.5)


def test_a_wrong_return_is_one_sentence():
    with pytest.raises(explore.NotReady, match=r"should return the pair \(answer, weights\)"):
        explore.house_prices({"soft": lambda *args: 275.0}, "soft", 3.0, 1.5)
    with pytest.raises(explore.NotReady, match="raised ZeroDivisionError"):
        explore.two_numbers(lambda q, k, v: 1 / 0, lesson.QUERY)


@pytest.mark.parametrize("folder", [SOLUTIONS, ASSIGNMENTS], ids=["solutions", "stubs"])
def test_widgets_build_and_react(folder):
    """The widgets draw on a right answer, say what to do on a stub, and redraw when a control moves."""
    lookup = load(folder, "lookup")
    box = widgets.house_prices(lookup.exact_lookup, lookup.nearest_lookup, lookup.soft_lookup)
    controls, *_, pictures = box.children
    play, query = controls.children
    table, picture = pictures.children
    if folder is ASSIGNMENTS:
        assert "Implement <code>soft_lookup</code> first" in table.value and picture.layout.display == "none"
        return
    assert "£275.11k" in table.value and "49.45%" in table.value and "weight × value (£k)" in table.value
    before = picture.value
    play.value = len(explore.QUERIES) - 1  # the play button sweeps the query: its last stop is 5 bedrooms
    assert query.value == 5.0 and "£405." in table.value and picture.value != before
