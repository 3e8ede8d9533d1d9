"""``softlookup gpt2-report``: the lesson's GPT-2 numbers, measured, and a heatmap of the head.

Measures " it" -> " cat" and " it" -> " mat" at layer 4 head 3, and the
layer-4 average " it" -> " cat" and " it" -> first token, under both
conventions (the sentence as Hugging Face tokenizes it, and with
<|endoftext|> first), next to the lesson's claims; then, token by token, the
head's attention from " it" beside each token's share of what the head moves
into " it" (its value share). Without GPT-2 small on disk it runs on the
tiny seeded GPT-2 and says so on its first line.
"""

from __future__ import annotations

from pathlib import Path

from grader.engine import options
from grader.lesson import lesson
from grader.usage import Parser, UsageError

LAYER, HEAD = 4, 3


def heatmap(tokens, pattern, title, path: Path):
    """The head's pattern with token labels on both axes and the " it" row outlined."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    labels = [token.replace("Ġ", " ") for token in tokens]
    figure, axes = plt.subplots(figsize=(7, 6))
    image = axes.imshow(pattern, cmap="viridis", vmin=0, vmax=1)
    axes.set_xticks(range(len(labels)), labels, rotation=60, ha="right")
    axes.set_yticks(range(len(labels)), labels)
    axes.set_xlabel("attended to (key)")
    axes.set_ylabel("attending (query)")
    row = lesson.position(tokens, "it")
    axes.add_patch(Rectangle((-0.5, row - 0.5), len(labels), 1, fill=False, edgecolor="red", linewidth=2.5))
    axes.set_title(title)
    figure.colorbar(image, ax=axes, label="attention weight")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def value_report(console, measured, name):
    """Who gets the head's attention beside whose value makes up its output, for " it", both conventions."""
    from rich.table import Table

    claim = lesson.VALUE_CLAIM
    table = Table(title=f"layer {claim.layer} head {claim.head} on {name}: what {claim.source!r} attends to, "
                        "and what moves into it", title_justify="left")
    table.add_column("token")
    for convention in lesson.CONVENTIONS:
        table.add_column(f"attention, {convention}", justify="right")
        table.add_column("value share", justify="right")
    longest = max((data["tokens"] for data in measured.values()), key=len)
    for row, token in enumerate(longest[:lesson.position(longest, claim.source) + 1]):
        cells = []
        for data in measured.values():
            own = row - (len(longest) - len(data["tokens"]))  # the conventions differ by tokens in front
            cells += [f"{100 * data[kind][own]:.1f}%" if own >= 0 else "" for kind in ("attention", "value")]
        table.add_row(token.replace("Ġ", " "), *cells)
    console.print(table)
    for convention, data in measured.items():
        top = int(data["value"].argmax())
        largest = data["tokens"][top].replace("Ġ", " ")
        verdict = (" [green]✓[/] as the lesson says" if largest.strip() == claim.target
                   else f"; the lesson says {' ' + claim.target!r}")
        console.print(f"{convention}: the largest value share is {largest!r}, {100 * data['value'][top]:.1f}%{verdict}")


def main(argv=None) -> int:
    parser = Parser(prog="softlookup gpt2-report", description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, metavar="PATH",
                        help="folder with GPT-2 small (default: $SOFTLOOKUP_GPT2, then the Hugging Face cache)")
    parser.add_argument("--out", type=Path, default=Path("gpt2-report"), metavar="DIR",
                        help="where the heatmaps go (default: ./gpt2-report)")
    args = parser.parse_args(argv)
    if args.model and not args.model.is_dir():
        parser.error(f"--model: {args.model} is not a folder")
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out: {args.out} is a file; give a folder for the heatmaps")
    options.stay_offline()

    from rich.console import Console
    from rich.table import Table

    from grader.lesson import gpt2, models

    console = Console(highlight=False)
    if models.real_available(args.model):
        model, tokenizer, name = models.real_model(args.model), models.real_tokenizer(), "GPT-2 small"
        console.print(f"GPT-2 small, from {models.locate(args.model)}")
    elif args.model:
        raise UsageError(f"no GPT-2 (config.json and weights) in {args.model}")
    else:
        model, tokenizer, name = models.tiny_model(), models.tiny_tokenizer(), "tiny GPT-2 (seed 0)"
        console.print("GPT-2 small's weights are not on this machine: this report uses the tiny seeded GPT-2, "
                      "whose random weights mean nothing (softlookup fetch-gpt2 gets the real ones).")
    measured = gpt2.lesson_shares(model, tokenizer)

    table = Table(title=f"{lesson.SENTENCE!r} on {name}", title_justify="left")
    table.add_column("share")
    table.add_column("lesson says", justify="right")
    for convention in lesson.CONVENTIONS:
        table.add_column(convention, justify="right")
    for claim in lesson.CLAIMS:
        cells = []
        for convention in lesson.CONVENTIONS:
            share = measured[convention][claim.label]
            cells.append(f"{100 * share:.1f}% {'[green]✓[/]' if lesson.reproduces(share, claim) else ' '}")
        table.add_row(claim.label, f"{100 * claim.share:.0f}%", *cells)
    console.print(table)
    for convention, numbers in measured.items():
        held = sum(lesson.reproduces(numbers[claim.label], claim) for claim in lesson.CLAIMS)
        console.print(f"{convention}: {held} of {len(lesson.CLAIMS)} claims reproduced (to the lesson's rounding)")
    value_report(console, gpt2.lesson_value_shares(model, tokenizer), name)

    args.out.mkdir(parents=True, exist_ok=True)
    for convention, prefix in lesson.CONVENTIONS.items():
        tokens, attentions = gpt2.attention_patterns(model, tokenizer, prefix + lesson.SENTENCE)
        path = args.out / f"layer{LAYER}-head{HEAD}{'-endoftext' if prefix else ''}.png"
        heatmap(tokens, attentions[LAYER, HEAD], f"{name}, layer {LAYER} head {HEAD}\n{convention}", path)
        console.print(f"wrote {path}")
    return 0
