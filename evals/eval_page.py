"""`grasp view --eval DIR`: an eval results folder as one self-contained HTML page.

The summary tables, the plots (base64 PNG, with their settings in the caption) and one row per
question, linked to the question's run page when `grasp view` wrote one. graphs/cli/view.py loads
this module by name: imports point evals → graphs, never back.
"""

from __future__ import annotations

import base64
import io
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from evals import plots
from evals.closed_book import cache_path
from evals.reports import closed_book_estimates, kept_summaries, qa_records, retrieval_summaries
from evals.results import read_jsonl
from evals.retrieval_eval import KS
from evals.summary import ALL, GroupSummary, KeptSummary, format_number, summarise
from graphs.viewer.html_page import page, table

#: Keys of a `<method>.summary.json` worth showing as the run's settings.
SUMMARY_SETTINGS = ("questions", "p_samples", "settings", "grasp_settings")


def thread_ids(directory: Path) -> list[str]:
    """Every question's thread id in the folder's answer files (methods that checkpoint)."""
    found: list[str] = []
    for records in qa_records(directory).values():
        found += [str(r["thread_id"]) for r in records if r.get("thread_id")]
    return list(dict.fromkeys(found))


def method_settings(directory: Path, method: str, records: Sequence[Mapping[str, Any]]) -> str:
    """One method's settings as its files record them."""
    parts = [f"n={len(records)}"]
    summary = directory / f"{method}.summary.json"
    if summary.exists():
        data = json.loads(summary.read_text(encoding="utf-8") or "{}")
        for key in SUMMARY_SETTINGS:
            if key in data:
                parts.append(f"{key}={data[key]}")
    judged = any(r.get("judge_strict") is not None for r in records)
    parts.append("judge on" if judged else "no judge")
    datasets = sorted({str(r["dataset"]) for r in records if r.get("dataset")})
    if datasets:
        parts.append("datasets " + "+".join(datasets))
    return f"{method} ({', '.join(parts)})"


def settings_caption(directory: Path, records: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    """The folder's run settings, for plot captions and the page head."""
    rows = read_jsonl(cache_path(directory))
    closed = Counter((str(r.get("model")), int(r.get("samples", 0))) for r in rows)
    p_note = (
        "closed-book p from {} ({} samples per question)".format(
            *max(closed, key=closed.__getitem__)
        )
        if closed
        else "no closed-book estimates (SE n/a)"
    )
    methods = "; ".join(method_settings(directory, m, r) for m, r in records.items())
    return f"Results {directory.name}: {methods or 'no QA runs'}; {p_note}."


def png(draw: Any, data: Any, caption: str) -> str | None:
    """A plot drawn into memory as a data: URI (None when the plot has nothing to show)."""
    buffer = io.BytesIO()
    if draw(data, buffer, caption=caption) is None:
        return None
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def figure(name: str, uri: str | None, caption: str) -> str:
    """An inline plot with its caption."""
    if uri is None:
        return ""
    return (
        f'<figure class="plot" data-plot="{escape(name)}"><img alt="{escape(name)}" '
        f'src="{uri}" style="max-width:100%"><figcaption class="muted">{escape(caption)}'
        "</figcaption></figure>"
    )


def summary_table(qa: Mapping[str, Sequence[GroupSummary]]) -> str:
    """Method × metric, overall and by hop count."""
    header = ["method", "group", "n", "EM", "F1", "Judge", "Judge (lenient)", "tokens/q"]
    header += ["indexing/q", "total/q", "calls/q", "s/q", "SE"]
    rows = [
        [escape(method), escape(g.group), str(g.n), format_number(g.em), format_number(g.f1)]
        + [format_number(g.judge), format_number(g.judge_lenient)]
        + [format_number(g.tokens_per_question, 0), format_number(g.indexing_per_question, 0)]
        + [format_number(g.total_per_question, 0), format_number(g.calls_per_question, 1)]
        + [format_number(g.wall_s_per_question, 1), format_number(g.success_economy, 1)]
        for method, groups in qa.items()
        for g in groups
    ]
    return table(header, rows, set(range(2, len(header))))


def kept_table(kept: Mapping[str, KeptSummary]) -> str:
    """Precision and recall of the kept evidence sets (PRISM's) against the gold passages."""
    rows = [
        [escape(method), str(k.n), format_number(k.precision), format_number(k.recall)]
        + [format_number(k.kept_per_question, 1)]
        for method, k in kept.items()
    ]
    return table(["method", "n", "precision", "recall", "kept/q"], rows, {1, 2, 3, 4})


def recall_table(recall: Mapping[str, Mapping[str, Mapping[str, float]]]) -> str:
    """Recall@k per retrieval run and hop group."""
    rows = [
        [escape(name), escape(group), str(int(values["n"]))]
        + [format_number(values[str(k)]) for k in KS]
        for name, groups in recall.items()
        for group, values in groups.items()
    ]
    return table(["method / mode", "group", "n", *[f"R@{k}" for k in KS]], rows, {2, 3, 4, 5})


def question_rows(
    records: Mapping[str, Sequence[Mapping[str, Any]]], links: Mapping[str, str]
) -> str:
    """One row per (method, question), linked to its run page where there is one."""
    rows: list[str] = []
    for method, lines in records.items():
        for r in lines:
            thread = str(r.get("thread_id") or "")
            href = links.get(thread)
            run = f'<a class="run-link" href="{escape(href)}">{escape(thread)}</a>' if href else ""
            judge = r.get("judge_strict")
            cells = [
                escape(method),
                escape(str(r.get("id", ""))),
                escape(str(r.get("hops", ""))),
                escape(str(r.get("question", ""))),
                escape(str(r.get("prediction", ""))),
                escape(" | ".join(str(a) for a in r.get("gold", []))),
                format_number(float(r.get("em", 0.0)), 0),
                format_number(float(r.get("f1", 0.0)), 2),
                "n/a" if judge is None else "✓" if judge else "✗",
                f"{int(r.get('tokens', 0)):,}",
                str(r.get("calls", "")),
                f"{float(r.get('wall_s', 0.0)):.1f}",
                run,
            ]
            numeric = {6, 7, 9, 10, 11}
            rows.append(
                f'<tr class="question" data-method="{escape(method)}" '
                f'data-id="{escape(str(r.get("id", "")))}" data-linked="{str(bool(href)).lower()}">'
                + "".join(
                    f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
                    for i, c in enumerate(cells)
                )
                + "</tr>"
            )
    header = ["method", "id", "hops", "question", "prediction", "gold", "EM", "F1", "judge"]
    header += ["tokens", "calls", "s", "run"]
    head = "".join(f"<th>{h}</th>" for h in header)
    return f'<table id="questions"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def render_eval_page(directory: Path, links: Mapping[str, str] | None = None) -> str:
    """The whole eval page of a results folder; `links` maps thread ids to run-page hrefs."""
    links = links or {}
    records = qa_records(directory)
    probabilities = closed_book_estimates(directory)
    qa = {method: summarise(lines, probabilities) for method, lines in records.items()}
    recall = retrieval_summaries(directory)
    kept = kept_summaries(records)
    caption = settings_caption(directory, records)
    figures = ""
    if qa:
        figures += figure("accuracy_vs_tokens", png(plots.accuracy_vs_tokens, qa, caption), caption)
        figures += figure(
            "success_economy_by_hops", png(plots.success_economy_bars, qa, caption), caption
        )
    if recall:
        overall = {name: groups[ALL] for name, groups in recall.items()}
        recall_caption = f"Results {directory.name}: " + ", ".join(
            f"{name} n={int(values['n'])}" for name, values in overall.items()
        )
        recall_caption += "."
        figures += figure("recall", png(plots.recall_bars, overall, recall_caption), recall_caption)
    body = (
        f"<h1>Evaluation report: {escape(directory.name)}</h1>"
        f'<p class="muted" id="settings">{escape(caption)}</p>'
        + (f"<h2>QA</h2>{summary_table(qa)}" if qa else "<p>No QA results in this folder.</p>")
        + (f"<h2>Kept evidence (PRISM)</h2>{kept_table(kept)}" if kept else "")
        + (f"<h2>Retrieval recall</h2>{recall_table(recall)}" if recall else "")
        + (f"<h2>Plots</h2>{figures}" if figures else "")
        + ("<h2>Questions</h2>" + question_rows(records, links) if records else "")
    )
    attributes: dict[str, str | int | float] = {
        "methods": len(qa),
        "questions": sum(len(lines) for lines in records.values()),
        "plots": figures.count('class="plot"'),
        "links": len(links),
    }
    return page(f"Evaluation report: {directory.name}", body, attributes)
