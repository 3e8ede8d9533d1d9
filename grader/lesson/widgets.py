"""The lesson's three interactive pictures, drawn from the learner's own functions.

Each widget is a function that takes the learner's functions and returns an
ipywidgets box: put it last in a notebook cell. Everything shown is computed
by :mod:`grader.lesson.explore`; this module only lays it out and draws it with
matplotlib (rendered to PNG, so no matplotlib backend needs to be set up).
"""

from __future__ import annotations

import functools
import io
import os
from html import escape

import numpy as np

from grader.reports import markup
from grader.lesson import explore, lesson
from grader.usage import optional

COLOURS = {"exact": "#8c8c8c", "nearest": "#e07b00", "soft": "#1f5fbf"}


def _not_while_grading(widget):
    """nbgrader runs every cell when it grades (NBGRADER_EXECUTION is set): nobody sees a widget then."""

    @functools.wraps(widget)
    def drawn(*args, **kwargs):
        if os.environ.get("NBGRADER_EXECUTION"):
            return "(widget not drawn while nbgrader grades)"
        return widget(*args, **kwargs)

    return drawn


@_not_while_grading
def house_prices(exact_lookup, nearest_lookup, soft_lookup):
    """House prices: slide the query from 1 to 5 bedrooms, change the sharpness, compare the three lookups."""
    w = optional("ipywidgets")  # the notebooks extra's, not the core's

    functions = {"exact": exact_lookup, "nearest": nearest_lookup, "soft": soft_lookup}
    query = w.FloatSlider(value=3.0, min=1.0, max=5.0, step=0.1, description="bedrooms", readout_format=".1f")
    sharpness = w.FloatSlider(value=1.5, min=0.05, max=10.0, step=0.05, description="sharpness")
    method = w.ToggleButtons(options=explore.METHODS, value="soft", description="lookup")
    play = w.Play(min=0, max=len(explore.QUERIES) - 1, interval=150, description="sweep the query")
    table, picture = w.HTML(), w.Image(format="png")

    def update(_=None):
        try:
            shown = explore.house_prices(functions, method.value, query.value, sharpness.value)
            curves = explore.price_curves(functions, sharpness.value)
        except explore.NotReady as problem:
            table.value, picture.layout.display = _message(problem), "none"
            return
        rows = _html_table(explore.HousePrices.HEADER, shown.table())
        table.value = f"{rows}<p>Answer for {query.value:.1f} bedrooms: <b>{explore.pounds(shown.answer)}</b></p>"
        picture.value, picture.layout.display = _price_picture(curves, shown), ""

    def step(change):
        """Move the query with the picture: the slider's new value reaches the browser after the picture and the
        table drawn for it, never before (a slider at 3.6 over a chart of 3.5)."""
        with query.hold_sync(), table.hold_sync(), picture.hold_sync():
            query.value = float(explore.QUERIES[change["new"]])

    play.observe(step, names="value")
    for control in (query, sharpness, method):
        control.observe(update, names="value")
    update()
    return w.VBox([w.HBox([play, query]), sharpness, method, w.HBox([table, picture])])


@_not_while_grading
def two_number_query(attend):
    """The two-number query: move the query of the last "the" and watch who gets its attention."""
    w = optional("ipywidgets")  # the notebooks extra's, not the core's

    x = w.FloatSlider(value=float(lesson.QUERY[0]), min=-3, max=3, step=0.05, description="is a thing")
    y = w.FloatSlider(value=float(lesson.QUERY[1]), min=-3, max=3, step=0.05, description="is an action")
    table, picture = w.HTML(), w.Image(format="png")

    def update(_=None):
        try:
            shown = explore.two_numbers(attend, [x.value, y.value])
        except explore.NotReady as problem:
            table.value, picture.layout.display = _message(problem), "none"
            return
        table.value = _html_table(("token", "key", "score q·k", "weight"), shown.table())
        picture.value, picture.layout.display = _two_number_picture(shown), ""

    for control in (x, y):
        control.observe(update, names="value")
    update()
    # The picture is wider than a notebook holds beside the table: it goes below it rather than be cut off
    # at the right (with "is an action", the third axis's label).
    picture.layout.max_width = "100%"
    return w.VBox([x, y, w.HBox([table, picture], layout=w.Layout(flex_flow="row wrap"))])


@_not_while_grading
def gpt2_head(head_pattern, text: str = lesson.SENTENCE):
    """GPT-2's heads: pick a layer and a head and see where each token looks, " it" highlighted."""
    w = optional("ipywidgets")  # the notebooks extra's, not the core's

    from grader.lesson import models

    if models.real_available():
        model, tokenizer = models.real_model(), models.real_tokenizer()
        note = "GPT-2 small, from this machine's copy of its weights."
    else:
        model, tokenizer = models.tiny_model(), models.tiny_tokenizer()
        note = ("GPT-2 small's weights are not on this machine, so this is the kit's <b>tiny GPT-2 with random "
                "weights</b>: its patterns mean nothing, but your code runs on it exactly as on the real one "
                "(<code>softlookup fetch-gpt2</code> explains how to get the real weights).")
    layer = w.Dropdown(options=range(model.config.n_layer), value=min(4, model.config.n_layer - 1), description="layer")
    head = w.Dropdown(options=range(model.config.n_head), value=min(3, model.config.n_head - 1), description="head")
    problem, picture = w.HTML(), w.Image(format="png")

    def update(_=None):
        try:
            shown = explore.head(head_pattern, model, tokenizer, text, layer.value, head.value)
        except explore.NotReady as error:
            problem.value, picture.layout.display = _message(error), "none"
            return
        problem.value, picture.value, picture.layout.display = "", _head_picture(shown), ""

    for control in (layer, head):
        control.observe(update, names="value")
    update()
    return w.VBox([w.HTML(f"<p>{note}</p>"), w.HBox([layer, head]), problem, picture])


# The widget each exercise's notebook shows, called with the learner's functions of the same names.
FOR_EXERCISE = {"lookup": house_prices, "attention": two_number_query, "gpt2_heads": gpt2_head}


# -- drawing ------------------------------------------------------------------------


def _message(problem) -> str:
    return f'<p style="padding:0.5em;border-left:4px solid #e07b00">{markup.html(str(problem))}</p>'


def _html_table(header, rows) -> str:
    pad = 'style="padding:0.15em 0.7em;text-align:right;white-space:nowrap"'  # "(-0.9, -0.9)" on one line
    head = "".join(f"<th {pad}>{escape(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td {pad}>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    return buffer.getvalue()


def _figure(width, height, **subplot):
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    return figure, figure.add_subplot(**subplot)


def _price_picture(curves, shown) -> bytes:
    figure, axes = _figure(5, 3.4)
    for method, answers in curves.items():
        style = {"marker": "o", "linestyle": "none"} if method == "exact" else {"drawstyle": "steps-mid"} \
            if method == "nearest" else {}
        axes.plot(explore.QUERIES, answers, color=COLOURS[method], label=f"{method} lookup",
                  linewidth=3 if method == shown.method else 1.2, **style)
    axes.scatter(lesson.BEDROOMS, lesson.PRICES, color="black", zorder=3, s=18, label="the records")
    axes.axvline(shown.query, color=COLOURS[shown.method], linestyle=":")
    if shown.answer is not None:
        axes.plot([shown.query], [shown.answer], "o", color=COLOURS[shown.method], markersize=9)
    axes.set(xlabel="bedrooms (query)", ylabel="price (£k)", title=f"sharpness {shown.sharpness:g}")
    axes.legend(fontsize="small", loc="upper left")
    return _png(figure)


def _two_number_picture(shown) -> bytes:
    return _png(_two_number_figure(shown))


def _two_number_figure(shown):
    """Keys as arrows as thick as their weight; the output as the weighted values laid tip to tail.

    Each step of the output is named at its middle, where no two meet (at
    their tips "cat" and "sat" overlap); the output itself is in the legend.
    """
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9, 4))
    keys_axes = figure.add_subplot(1, 2, 1)
    for token, key, width in zip(lesson.TOKENS, lesson.KEYS, shown.arrow_widths()):
        keys_axes.annotate("", xy=key, xytext=(0, 0), arrowprops={"arrowstyle": "-|>", "lw": width, "color": "#1f5fbf"})
        keys_axes.annotate(token, xy=key, xytext=(4, 4), textcoords="offset points")
    keys_axes.annotate("", xy=shown.query, xytext=(0, 0), zorder=3,  # over the keys' arrows
                       arrowprops={"arrowstyle": "-|>", "lw": 2, "color": "#cf222e"})
    reach = max(3.0, float(np.abs(shown.query).max()) + 0.3)
    keys_axes.set(xlim=(-reach, reach), ylim=(-reach, reach), xlabel="is a thing", ylabel="is an action",
                  title="keys (thicker: more weight)", aspect="equal")
    _label_query(figure, keys_axes, shown)
    keys_axes.axhline(0, color="#ddd", zorder=0)
    keys_axes.axvline(0, color="#ddd", zorder=0)
    output_axes = figure.add_subplot(1, 2, 2, projection="3d")
    for token, start, end in zip(lesson.TOKENS, shown.path[:-1], shown.path[1:]):
        output_axes.quiver(*start, *(end - start), color="#1f5fbf", arrow_length_ratio=0.15)
        if np.linalg.norm(end - start) > 0.05:
            output_axes.text(*(start + end) / 2, f" {token}", fontsize="small")
    output_axes.scatter(*shown.output, color="#cf222e", s=30, label="output (the weighted values added)")
    output_axes.set(xlabel="is a thing", ylabel="is alive", zlabel="is an action", xlim=(0, 1), ylim=(0, 1), zlim=(0, 1),
                    title="output: values × weights, tip to tail")
    # Three ticks an axis, small and close to it, and each axis's name beyond them: where two axes meet, their
    # end ticks ("1.0" and "0.0") no longer run into each other, nor into the names.
    for axis in (output_axes.xaxis, output_axes.yaxis, output_axes.zaxis):
        axis.set_ticks([0, 0.5, 1], ["0", "0.5", "1"])
        axis.labelpad = 2
    output_axes.tick_params(labelsize="small", pad=0)
    output_axes.set_box_aspect(None, zoom=0.8)  # room for the axis labels inside the picture
    output_axes.legend(loc="upper left", fontsize="small")
    return figure


def _label_query(figure, axes, shown):
    """Name the query's arrow where nothing else is drawn: no key's arrow through the word, no key's name under it.

    The query moves with the sliders, so no one place is always free: the word
    tries the places around the arrow's tip in turn (beside it first, then
    past it, then short of it) and takes the first that is clear.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(figure).get_renderer()
    axes.apply_aspect()
    arrows = [text for text in axes.texts if not text.get_text()][:len(lesson.KEYS)]
    names = [text.get_window_extent(renderer) for text in axes.texts if text.get_text()]
    segments = [(axes.transData.transform([(0, 0), key]), arrow.arrow_patch.get_linewidth() * renderer.points_to_pixels(1))
                for key, arrow in zip(lesson.KEYS, arrows)]

    def clear(box) -> bool:
        if any(box.overlaps(name) for name in names):
            return False
        for (start, end), width in segments:
            along = start + np.linspace(0, 1, 200)[:, None] * (end - start)
            if (((along[:, 0] > box.x0 - width) & (along[:, 0] < box.x1 + width) & (along[:, 1] > box.y0 - width)
                 & (along[:, 1] < box.y1 + width)).any()):
                return False
        return True

    direction = np.asarray(shown.query, dtype=float)
    direction = direction / (np.linalg.norm(direction) or 1.0)
    normal = np.array([-direction[1], direction[0]])
    label = None
    for way in (normal, -normal, direction, (direction + normal) / 2, (direction - normal) / 2, -direction):
        x, y = 12 * way / np.linalg.norm(way)
        if label is not None:
            label.remove()
        label = axes.annotate("query", xy=shown.query, xytext=(x, y), textcoords="offset points", color="#cf222e",
                              zorder=3, ha="left" if x > 2 else "right" if x < -2 else "center",
                              va="bottom" if y > 2 else "top" if y < -2 else "center")
        if clear(label.get_window_extent(renderer)):
            return


def _head_picture(shown) -> bytes:
    size = 0.45 * len(shown.tokens) + 1.5
    figure, axes = _figure(size + 1, size)
    image = axes.imshow(shown.pattern, cmap="Blues", vmin=0, vmax=1)
    axes.set_xticks(range(len(shown.tokens)), shown.tokens, rotation=90)
    axes.set_yticks(range(len(shown.tokens)), shown.tokens)
    axes.set(xlabel="attends to (key)", ylabel="token (query)", title=f"layer {shown.layer}, head {shown.head}")
    if shown.highlight is not None:
        row = shown.highlight
        axes.add_patch(_rectangle((-0.5, row - 0.5), len(shown.tokens), 1))
        best = int(np.argmax(shown.pattern[row]))
        axes.text(best, row, f"{shown.pattern[row, best]:.0%}", ha="center", va="center", color="#cf222e",
                  fontsize="small", fontweight="bold")
    figure.colorbar(image, ax=axes, fraction=0.046)
    return _png(figure)


def _rectangle(corner, width, height):
    from matplotlib.patches import Rectangle

    return Rectangle(corner, width, height, fill=False, edgecolor="#cf222e", linewidth=2)
