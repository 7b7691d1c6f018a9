"""PNG plots of a report: accuracy vs tokens, recall@k by method and mode, SE by hop count."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on servers and CI

import matplotlib.pyplot as plt  # noqa: E402

from evals.summary import ALL, GroupSummary  # noqa: E402

KS = ("2", "5", "10")


def accuracy_vs_tokens(summaries: Mapping[str, Sequence[GroupSummary]], path: Path) -> Path:
    """One point per method: total tokens per question against EM (and Judge where judged)."""
    figure, axis = plt.subplots(figsize=(6.4, 4.4))
    for method, groups in summaries.items():
        overall = next(g for g in groups if g.group == ALL)
        x = max(overall.total_per_question, 1.0)
        (point,) = axis.plot([x], [overall.em], "o", label=f"{method} EM")
        if overall.judge is not None:
            axis.plot([x], [overall.judge], "^", color=point.get_color(), label=f"{method} Judge")
        axis.annotate(method, (x, overall.em), textcoords="offset points", xytext=(5, 5))
    axis.set_xscale("log")
    axis.set_xlabel("tokens per question (inference + amortised indexing)")
    axis.set_ylabel("accuracy")
    axis.set_ylim(0, 1.05)
    axis.set_title("Accuracy vs tokens")
    axis.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def _grouped_bars(
    labels: Sequence[str],
    series: Mapping[str, Sequence[float]],
    path: Path,
    title: str,
    ylabel: str,
    marks: Mapping[str, Sequence[str]] | None = None,
) -> Path:
    """Bars per label, one colour per series; `marks` writes a text on a series' bars (e.g. ∞)."""
    figure, axis = plt.subplots(figsize=(max(6.4, 1.2 * len(labels) * max(len(series), 1)), 4.4))
    width = 0.8 / max(len(series), 1)
    for n, (name, values) in enumerate(series.items()):
        positions = [i + (n - (len(series) - 1) / 2) * width for i in range(len(labels))]
        axis.bar(positions, values, width=width, label=name)
        for x, mark in zip(positions, (marks or {}).get(name, ()), strict=False):
            if mark:
                axis.annotate(mark, (x, 0), ha="center", va="bottom")
    axis.set_xticks(range(len(labels)), labels)
    axis.set_ylabel(ylabel)
    axis.set_title(title)
    axis.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def recall_bars(recall: Mapping[str, Mapping[str, float]], path: Path) -> Path:
    """Bars of recall@2/5/10, one series per "method / mode"."""
    series = {name: [values[k] for k in KS] for name, values in recall.items()}
    return _grouped_bars([f"R@{k}" for k in KS], series, path, "Recall of gold passages", "recall")


def success_economy_bars(
    summaries: Mapping[str, Sequence[GroupSummary]], path: Path
) -> Path | None:
    """SE per hop group and method (finite values only; lower is better); None if there is none."""
    hop_groups = sorted(
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
    title = "Success economy by hop count (lower is better)"
    return _grouped_bars(labels, series, path, title, "tokens per bit", marks)
