"""Plots of a report: accuracy vs tokens, recall@k by method and mode, SE by hop count.

Every plot labels its axes with their units and carries a caption under it: what was measured and
the settings it was measured under (the caller's words, else what the summaries themselves say).
A plot goes to a file path or to any binary stream (the eval page embeds them as base64 PNG).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TypeVar

import matplotlib

matplotlib.use("Agg")  # files only: no display on servers and CI

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from evals.summary import ALL, GroupSummary  # noqa: E402

KS = ("2", "5", "10")
Target = TypeVar("Target", Path, IO[bytes])
CAPTION_WIDTH = 110


def qa_caption(summaries: Mapping[str, Sequence[GroupSummary]]) -> str:
    """What the QA summaries themselves say about how they were measured."""
    overall = {m: next(g for g in groups if g.group == ALL) for m, groups in summaries.items()}
    sizes = ", ".join(f"{m} n={g.n}" for m, g in overall.items())
    judged = [m for m, g in overall.items() if g.judge is not None]
    judge = f"judge on for {', '.join(judged)}" if judged else "no judge (EM only)"
    return f"Questions: {sizes}; {judge}."


def captioned(figure: Figure, caption: str) -> Figure:
    """The figure with `caption` wrapped under its axes."""
    wrapped = "\n".join(textwrap.wrap(caption, CAPTION_WIDTH))
    figure.text(0.01, -0.02, wrapped, ha="left", va="top", fontsize=8, color="#333333")
    return figure


def save(figure: Figure, target: Target) -> Target:
    """Write the figure as PNG (the caption included), then free it."""
    figure.savefig(target, dpi=120, bbox_inches="tight", format="png")
    plt.close(figure)
    return target


def accuracy_vs_tokens(
    summaries: Mapping[str, Sequence[GroupSummary]], path: Target, caption: str | None = None
) -> Target:
    """One point per method: total tokens per question against EM (and Judge where judged)."""
    return save(accuracy_figure(summaries, caption), path)


def accuracy_figure(
    summaries: Mapping[str, Sequence[GroupSummary]], caption: str | None = None
) -> Figure:
    """The accuracy-vs-tokens figure; `caption` names the settings (default: the summaries')."""
    figure, axis = plt.subplots(figsize=(7.2, 4.6))
    for method, groups in summaries.items():
        overall = next(g for g in groups if g.group == ALL)
        x = max(overall.total_per_question, 1.0)
        (point,) = axis.plot([x], [overall.em], "o", label=f"{method} EM")
        if overall.judge is not None:
            axis.plot([x], [overall.judge], "^", color=point.get_color(), label=f"{method} Judge")
        axis.annotate(method, (x, overall.em), textcoords="offset points", xytext=(5, 5))
    axis.set_xscale("log")
    axis.set_xlabel("tokens per question (input + output, indexing amortised; log scale)")
    axis.set_ylabel("accuracy (fraction of questions correct)")
    axis.set_ylim(0, 1.05)
    axis.grid(True, which="major", alpha=0.3)
    axis.set_title("Accuracy vs tokens (● exact match, ▲ LLM judge)")
    axis.legend(fontsize="small")
    note = (
        "Tokens are the system's own (judge calls excluded); indexing tokens are spread over "
        "the corpus's questions. "
    )
    return captioned(figure, note + (caption if caption is not None else qa_caption(summaries)))


def _grouped_bars(
    labels: Sequence[str],
    series: Mapping[str, Sequence[float]],
    axes: tuple[str, str, str],
    marks: Mapping[str, Sequence[str]] | None = None,
    value_format: str = "%.2f",
) -> Figure:
    """Bars per label, one colour per series; `marks` writes a text on a series' bars (e.g. ∞).

    `axes` is (title, x label, y label).
    """
    title, xlabel, ylabel = axes
    figure, axis = plt.subplots(figsize=(max(7.2, 1.2 * len(labels) * max(len(series), 1)), 4.6))
    width = 0.8 / max(len(series), 1)
    for n, (name, values) in enumerate(series.items()):
        positions = [i + (n - (len(series) - 1) / 2) * width for i in range(len(labels))]
        bars = axis.bar(positions, values, width=width, label=name)
        for x, mark in zip(positions, (marks or {}).get(name, ()), strict=False):
            if mark:
                axis.annotate(mark, (x, 0), ha="center", va="bottom")
        axis.bar_label(bars, fmt=value_format, fontsize=7, padding=2)
    axis.set_xticks(range(len(labels)), labels)
    axis.set_xlabel(xlabel)
    axis.set_ylabel(ylabel)
    axis.set_title(title)
    axis.grid(True, axis="y", alpha=0.3)
    axis.legend(fontsize="small")
    return figure


def recall_bars(
    recall: Mapping[str, Mapping[str, float]], path: Target, caption: str | None = None
) -> Target:
    """Bars of recall@2/5/10, one series per "method / mode" (the retrieval file's label)."""
    return save(recall_figure(recall, caption), path)


def recall_figure(recall: Mapping[str, Mapping[str, float]], caption: str | None = None) -> Figure:
    """The recall@k figure; `caption` names the settings (default: the series and their sizes)."""
    series = {name: [values[k] for k in KS] for name, values in recall.items()}
    figure = _grouped_bars(
        [f"R@{k}" for k in KS],
        series,
        (
            "Recall@k of gold passages by method and mode",
            "k (passages retrieved per question)",
            "recall (fraction of gold passages in the top k)",
        ),
    )
    sizes = ", ".join(f"{name} n={int(values.get('n', 0))}" for name, values in recall.items())
    default = f"Series are <method>[settings]-<mode> as run; questions: {sizes}."
    return captioned(figure, caption if caption is not None else default)


def success_economy_bars(
    summaries: Mapping[str, Sequence[GroupSummary]], path: Target, caption: str | None = None
) -> Target | None:
    """SE per hop group and method (finite values only; lower is better); None if there is none."""
    figure = success_economy_figure(summaries, caption)
    return None if figure is None else save(figure, path)


def success_economy_figure(
    summaries: Mapping[str, Sequence[GroupSummary]], caption: str | None = None
) -> Figure | None:
    """The SE-by-hops figure, or None when no method has an SE."""
    hop_groups: list[str] = sorted(
        {g.group for groups in summaries.values() for g in groups if g.group != ALL},
        key=lambda g: int(g.removesuffix("hop")),
    )
    labels = [ALL, *hop_groups]
    series: dict[str, list[float]] = {}
    marks: dict[str, list[str]] = {}
    for method, groups in summaries.items():
        by_group = {g.group: g.success_economy for g in groups}
        values = [by_group.get(label) for label in labels]
        if any(v is not None for v in values):
            series[method] = [v if v is not None and not math.isinf(v) else 0.0 for v in values]
            # Nothing solved (∞) and not measured (n/a) both draw no bar, so say which it is.
            marks[method] = ["n/a" if v is None else "∞" if math.isinf(v) else "" for v in values]
    if not series:
        return None
    figure = _grouped_bars(
        labels,
        series,
        (
            "Success economy by hop count (lower is better)",
            "question group (hop count)",
            "success economy (tokens per bit solved)",
        ),
        marks,
        value_format="%.0f",
    )
    note = (
        "SE = tokens spent / bits of closed-book surprise (−log2 p) of the questions solved; "
        "∞: none solved, n/a: p not estimated. "
    )
    return captioned(figure, note + (caption if caption is not None else qa_caption(summaries)))
