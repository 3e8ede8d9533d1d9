"""The learner's loop, piece by piece: hints that follow the failing check, markup rendered, the learner's own
file named, verdicts that name the cause the numbers show, and pictures that read as drawn."""

import io
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from rich.console import Console

import helpers
from helpers import ASSIGNMENTS, load_solution, make_submission, most, run, solved_folder
from grader.engine import registry
from grader.engine.results import CheckResult, SubmissionResult
from grader.reports import markup
from grader.reports.html_table import html
from grader.reports.terminal import render
from grader.lesson import explore, lesson, widgets

SOFTLOOKUP = [sys.executable, "-m", "grader.cli"]
BROKEN_SOFT_LOOKUP = """
def soft_lookup(query, keys, values, sharpness=1.0):
    return 0.0, [0.0] * len(keys)
"""
NAIVE_SOFTMAX = ("import numpy as np\n\n\ndef softmax(x, axis=-1):\n    e = np.exp(x)\n"
                 "    return e / e.sum(axis=axis, keepdims=True)\n")


def softlookup(*args, **env):
    return subprocess.run([*SOFTLOOKUP, *map(str, args)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env})


def test_hints_start_with_the_function_whose_checks_fail(tmp_path):
    folder = make_submission(tmp_path / "submission", append={"lookup": BROKEN_SOFT_LOOKUP})
    state = {"XDG_STATE_HOME": str(tmp_path / "state")}
    assert softlookup("check", folder, "--exercise", "lookup", **state).returncode == 1
    assert json.loads((tmp_path / "state" / "softlookup" / "failing.json").read_text()) == {"lookup": ["soft_lookup"]}
    hints = registry.exercise("lookup").hints
    first = softlookup("hint", "lookup", **state).stdout
    assert f"Hint 1 of 5: {markup.plain(hints[3])}" in first and "failed in soft_lookup only" in first
    assert f"Hint 2 of 5: {markup.plain(hints[4])}" in softlookup("hint", "lookup", **state).stdout  # soft_lookup's too
    assert f"Hint 3 of 5: {markup.plain(hints[0])}" in softlookup("hint", "lookup", **state).stdout  # then the idea
    assert f"Hint 4 of 5: {markup.plain(hints[1])}" in softlookup("hint", "lookup", **state).stdout  # counted as shown


TITLE, MESSAGE = "Equally close keys: the one that comes first in `keys` wins", "the *farthest* key: use `argmin`"


def marked_result() -> SubmissionResult:
    result = SubmissionResult("submission")
    check = CheckResult("lookup", "test_nearest_tie_rule", "", TITLE, "failed", 0.0, 1.0, MESSAGE)
    result.add(check, "Three lookups")
    result.add(CheckResult("lookup", "test_nearest_lookup", "", "The nearest match", "passed", 1.0, 1.0), "")
    return result


def terminal_table() -> str:
    out = io.StringIO()
    render(marked_result(), Console(file=out, width=200, force_terminal=False))
    return out.getvalue()


@pytest.mark.parametrize("shown,wanted", [
    (terminal_table, ["first in keys wins", "the farthest key: use argmin"]),
    (lambda: html(marked_result()), ["first in <code>keys</code> wins", "the <em>farthest</em> key"]),
    (lambda: widgets._message(explore.NotReady("Implement `soft_lookup` first")), ["<code>soft_lookup</code>"]),
    (lambda: softlookup("hint", "--help").stdout, ["softlookup hint EXERCISE: the next hint"]),
], ids=["terminal table", "notebook table", "widget message", "hint --help"])
def test_markup_is_rendered_not_shown(shown, wanted):
    text = shown()
    assert all(part in text for part in wanted), text
    assert "`" not in text and "*farthest*" not in text


@pytest.mark.parametrize("text", ["-sharpness * (query - key)^2", "x*y*z", "2 * 3 = 6 *", "a ** b"])
def test_arithmetic_keeps_its_stars(text):
    assert markup.plain(text) == text


@pytest.fixture(scope="module")
def naive_softmax(tmp_path_factory):
    folder = make_submission(tmp_path_factory.mktemp("naive"), {"softmax": NAIVE_SOFTMAX})
    return folder, run(folder, ["softmax"])


def cases_of(result, check: str) -> dict:
    return {c.case: c for e in result.exercises for c in e.checks if c.check == check}


def test_warnings_name_the_learners_own_file(naive_softmax):
    folder, result = naive_softmax
    printed = cases_of(result, "test_large_scores")["plus-1000"].printed
    assert f"{folder.resolve() / 'softmax.py'}:5: RuntimeWarning: overflow encountered in exp" in printed
    assert "submission-" not in printed and "softlookup-" not in printed


@pytest.mark.parametrize("lookup_in", ["module", "notebook"])
def test_warnings_name_the_learners_file_in_a_folder_of_modules_and_notebooks(tmp_path, lookup_in):
    """assignments/ as handed out: the learner edits softmax.py; lookup is a stub, or solved in its notebook."""
    folder = shutil.copytree(ASSIGNMENTS, tmp_path / "assignments")
    (folder / "softmax.py").write_text(NAIVE_SOFTMAX)
    if lookup_in == "notebook":
        shutil.copy(solved_folder(tmp_path / "solved") / "lookup.ipynb", folder)
    done = helpers.softlookup("check", "--exercise", "softmax", "--exercise", "lookup", cwd=tmp_path)
    assert "assignments/softmax.py:5: RuntimeWarning: overflow encountered in exp" in done.stdout, done.stdout
    assert "softlookup-notebooks-" not in done.stdout and "submission-" not in done.stdout
    assert (f"0/{most('lookup')} points, not started" in done.stdout) == (lookup_in == "module")  # the solved notebook is graded


@pytest.mark.parametrize("case,cause,not_the_cause", [("plus-1000", "overflows to inf", "underflows"),
                                                      ("minus-1000", "underflows to 0", "overflow")])
def test_the_nan_verdict_names_the_cause_the_scores_show(naive_softmax, case, cause, not_the_cause):
    message = cases_of(naive_softmax[1], "test_large_scores")[case].message
    assert cause in message and not_the_cause not in message and "-inf" not in message


@pytest.fixture(scope="module")
def two_numbers():
    shown = explore.two_numbers(load_solution("attention").attend, lesson.QUERY)
    figure = widgets._two_number_figure(shown)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure).draw()
    return shown, figure


def test_the_output_labels_stand_apart(two_numbers):
    from mpl_toolkits.mplot3d import proj3d

    _, figure = two_numbers
    axes = figure.axes[1]
    anchors = []
    for text in axes.texts:
        x, y, _ = proj3d.proj_transform(*text.get_position_3d(), axes.get_proj())
        anchors.append(axes.transData.transform((x, y)))
    assert len(anchors) >= 2
    apart = min(np.linalg.norm(a - b) for i, a in enumerate(anchors) for b in anchors[i + 1:])
    assert apart > 40  # pixels: a label is about 12 high and 20 wide
    assert any("output" in label for label in axes.get_legend_handles_labels()[1])  # the red dot is named


def test_the_two_number_table_keeps_each_key_on_one_line(two_numbers):
    shown, _ = two_numbers
    table = widgets._html_table(("token", "key", "score q·k", "weight"), shown.table())
    assert table.count("white-space:nowrap") == 4 * (len(lesson.TOKENS) + 1)


def test_the_slider_moves_after_the_picture_it_shows(monkeypatch):
    """During play the browser gets the picture and the table for a query before the slider's new value."""
    import ipywidgets

    lookup = load_solution("lookup")
    sent = []
    monkeypatch.setattr(ipywidgets.Widget, "_send", lambda self, message, buffers=None: sent.append(type(self).__name__))
    box = widgets.house_prices(lookup.exact_lookup, lookup.nearest_lookup, lookup.soft_lookup)
    play = box.children[0].children[0]
    sent.clear()
    play.value = 5
    assert sent.index("FloatSlider") > max(sent.index("Image"), sent.index("HTML")), sent


def drawn_two_numbers(query):
    figure = widgets._two_number_figure(explore.two_numbers(load_solution("attention").attend, query))
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return figure, canvas.get_renderer()


@pytest.mark.parametrize("query", [lesson.QUERY, (0.3, 1.6), (-0.2, -1.3), (-1.0, 0.8), (-1.0, -1.0), (2.5, 0.2)],
                         ids=["lesson", "towards sat", "towards the", "towards on", "towards The", "past cat"])
def test_no_key_arrow_runs_through_the_query_label(query):
    figure, renderer = drawn_two_numbers(query)
    axes = figure.axes[0]
    label = next(text for text in axes.texts if text.get_text() == "query")
    box = label.get_window_extent(renderer)
    arrows = [text for text in axes.texts if text.get_text() == ""]  # each key's, then the query's own
    assert len(arrows) == len(lesson.KEYS) + 1, "an arrow per key and the query's, or this test checks nothing"
    for key, arrow in zip(lesson.KEYS, arrows):
        start, end = axes.transData.transform([(0, 0), key])
        half_width = arrow.arrow_patch.get_linewidth() * renderer.points_to_pixels(1) / 2
        along = start + np.linspace(0, 1, 400)[:, None] * (end - start)
        inside = ((along[:, 0] > box.x0 - half_width) & (along[:, 0] < box.x1 + half_width)
                  & (along[:, 1] > box.y0 - half_width) & (along[:, 1] < box.y1 + half_width))
        assert not inside.any(), f"the arrow of key {key} crosses the query label"
    for other in axes.texts:  # nor does it sit on a key's name
        if other.get_text() not in ("", "query"):
            assert not box.overlaps(other.get_window_extent(renderer)), other.get_text()


def test_the_output_axes_tick_labels_and_names_stand_apart():
    figure, renderer = drawn_two_numbers(lesson.QUERY)
    axes = figure.axes[1]
    texts = [label for axis in (axes.xaxis, axes.yaxis, axes.zaxis)
             for label in [*axis.get_ticklabels(), axis.label] if label.get_text() and label.get_visible()]
    boxes = [(text.get_text(), text.get_window_extent(renderer)) for text in texts]
    assert len(boxes) == 12  # three ticks and a name on each axis
    crowded = [(a, b) for i, (a, one) in enumerate(boxes) for b, other in boxes[i + 1:] if one.overlaps(other)]
    assert not crowded, crowded
