"""The eval plots label their axes with units and carry the run's settings in their caption."""

from __future__ import annotations

import io

from matplotlib.figure import Figure

from evals import plots
from evals.summary import summarise

RECORDS = [
    {"id": "a", "hops": 2, "em": 1.0, "f1": 1.0, "judge_strict": True, "judge_lenient": True,
     "tokens": 1000, "total_tokens": 1200},
    {"id": "b", "hops": 3, "em": 0.0, "f1": 0.5, "judge_strict": False, "judge_lenient": True,
     "tokens": 3000, "total_tokens": 3200},
]  # fmt: skip


def texts(figure: Figure) -> tuple[str, str, str, str]:
    """(title, x label, y label, caption) of a one-axis figure."""
    axis = figure.axes[0]
    caption = " ".join(t.get_text() for t in figure.texts)
    return axis.get_title(), axis.get_xlabel(), axis.get_ylabel(), caption


def test_each_plot_names_its_units_and_settings() -> None:
    summaries = {"grasp": summarise(RECORDS, {"a": 0.25, "b": 0.5})}
    settings = "Results films: grasp (n=2, p_samples=5, judge on)."

    title, x, y, caption = texts(plots.accuracy_figure(summaries, settings))
    assert "Accuracy vs tokens" in title
    assert x.startswith("tokens per question") and "log scale" in x
    assert y == "accuracy (fraction of questions correct)"
    assert caption.replace("\n", " ").endswith(settings)

    figure = plots.success_economy_figure(summaries)
    assert figure is not None
    title, x, y, caption = texts(figure)
    assert (x, y) == ("question group (hop count)", "success economy (tokens per bit solved)")
    # Without the caller's words the caption still says what the numbers were measured on.
    assert "Questions: grasp n=2; judge on for grasp." in caption.replace("\n", " ")

    recall = {"grasp[k_entities=3]-single": {"2": 0.5, "5": 0.75, "10": 1.0, "n": 2.0}}
    title, x, y, caption = texts(plots.recall_figure(recall))
    assert (x, y) == (
        "k (passages retrieved per question)",
        "recall (fraction of gold passages in the top k)",
    )
    assert "grasp[k_entities=3]-single n=2" in caption

    buffer = io.BytesIO()
    assert plots.recall_bars(recall, buffer) is buffer
    assert buffer.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_success_economy_without_closed_book_estimates() -> None:
    assert plots.success_economy_figure({"grasp": summarise(RECORDS, None)}) is None
