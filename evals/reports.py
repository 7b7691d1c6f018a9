"""The report of a results directory: markdown tables and PNG plots over every method's JSON lines."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.citation_metrics import (
    CITATION_HEADER,
    CITATION_NOTE,
    CitationSummary,
    citation_row,
    summarise_citations,
)
from evals.closed_book import cache_path
from evals.results import RETRIEVAL_DIR, read_jsonl
from evals.retrieval_eval import KS, mean_recalls
from evals.summary import (
    ALL,
    CauseSummary,
    GroupSummary,
    KeptSummary,
    format_number,
    summarise,
    summarise_causes,
    summarise_kept,
)
from evals.token_anatomy import anatomy_rows, mean_anatomy
from nodes.llm.prompt_parts import PARTS

REPORT_FILE = "report.md"
ACCURACY_PLOT = "accuracy_vs_tokens.png"
RECALL_PLOT = "recall.png"
SE_PLOT = "success_economy_by_hops.png"


@dataclass
class Report:
    """What a report found and wrote."""

    qa: dict[str, list[GroupSummary]] = field(default_factory=dict)
    causes: dict[str, CauseSummary] = field(default_factory=dict)
    kept: dict[str, KeptSummary] = field(default_factory=dict)
    recall: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    anatomy: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    citations: dict[str, CitationSummary] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)


def closed_book_estimates(directory: Path, model: str | None = None) -> dict[str, float] | None:
    """p_i by question id from the cache: the named model's, else the best-covered (model, n)."""
    rows = read_jsonl(cache_path(directory))
    if model is not None:
        rows = [r for r in rows if r.get("model") == model]
    if not rows:
        return None
    counts = Counter((str(r["model"]), int(r["samples"])) for r in rows)
    chosen = max(counts, key=lambda key: (counts[key], key))
    return {
        str(r["question_id"]): float(r["p"])
        for r in rows
        if (str(r["model"]), int(r["samples"])) == chosen
    }


def qa_records(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """Each `<method>.jsonl` of the directory's answer lines (files sorted by name)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(directory.glob("*.jsonl")):
        records = [r for r in read_jsonl(path) if "prediction" in r]
        if records:
            found[path.stem] = records
    return found


def qa_summaries(
    directory: Path, probabilities: Mapping[str, float] | None
) -> dict[str, list[GroupSummary]]:
    """Each `<method>.jsonl` of the directory summarised (files sorted by name)."""
    return {
        method: summarise(records, probabilities)
        for method, records in qa_records(directory).items()
    }


def cause_summaries(records: Mapping[str, list[dict[str, Any]]]) -> dict[str, CauseSummary]:
    """Each method's failure-cause counts, for the methods whose lines carry an attribution."""
    found: dict[str, CauseSummary] = {}
    for method, lines in records.items():
        causes = summarise_causes(lines)
        if causes is not None:
            found[method] = causes
    return found


def kept_summaries(records: Mapping[str, list[dict[str, Any]]]) -> dict[str, KeptSummary]:
    """Each method's kept-set precision and recall, for the methods that keep a set (PRISM)."""
    found: dict[str, KeptSummary] = {}
    for method, lines in records.items():
        kept = summarise_kept(lines)
        if kept is not None:
            found[method] = kept
    return found


def retrieval_summaries(directory: Path) -> dict[str, dict[str, dict[str, float]]]:
    """Each `retrieval/<method>-<mode>.jsonl` as mean recall per group."""
    found: dict[str, dict[str, dict[str, float]]] = {}
    for path in sorted((directory / RETRIEVAL_DIR).glob("*.jsonl")):
        records = [r for r in read_jsonl(path) if "recall" in r]
        if records:
            found[path.stem] = mean_recalls(records)
    return found


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def cause_table(causes: Mapping[str, CauseSummary]) -> list[str]:
    """The cause table: per method, each cause's count and share, and mean evidence recall."""
    names = list(next(iter(causes.values())).counts)
    rows = [
        [method, str(c.n)]
        + [f"{c.counts[name]} ({c.share(name):.0%})" for name in names]
        + [format_number(c.evidence_recall)]
        for method, c in causes.items()
    ]
    return _table(["method", "n", *names, "evidence recall"], rows)


def markdown(report: Report, title: str) -> str:
    """The report's tables as markdown."""
    lines = [f"# Evaluation report: {title}", ""]
    if report.qa:
        lines += ["## QA", ""]
        header = ["method", "n", "EM", "F1", "Judge", "Judge (lenient)", "tokens/q"]
        header += ["indexing/q", "total/q", "calls/q", "s/q", "SE"]
        rows = []
        for method, groups in report.qa.items():
            g = next(s for s in groups if s.group == ALL)
            rows.append(
                [method, str(g.n), format_number(g.em), format_number(g.f1)]
                + [format_number(g.judge), format_number(g.judge_lenient)]
                + [format_number(g.tokens_per_question, 0)]
                + [format_number(g.indexing_per_question, 0)]
                + [format_number(g.total_per_question, 0), format_number(g.calls_per_question, 1)]
                + [format_number(g.wall_s_per_question, 1), format_number(g.success_economy, 1)]
            )
        lines += [*_table(header, rows), ""]
        hop_rows = [
            [method, g.group, str(g.n), format_number(g.em), format_number(g.f1)]
            + [format_number(g.judge), format_number(g.total_per_question, 0)]
            + [format_number(g.success_economy, 1)]
            for method, groups in report.qa.items()
            for g in groups
            if g.group != ALL
        ]
        if hop_rows:
            header = ["method", "hops", "n", "EM", "F1", "Judge", "total/q", "SE"]
            lines += ["## QA by hop count", "", *_table(header, hop_rows), ""]
        lines += [
            "Tokens are the system's own (judge calls excluded); total = inference + indexing "
            "amortised over the corpus's questions; s/q = wall seconds per question (judging "
            "excluded; a reply from the LLM cache costs none). SE = tokens per bit of closed-book surprise "
            "solved (lower is better); n/a where p_i was not estimated.",
            "",
        ]
    if report.citations:
        rows = [citation_row(m, c) for m, c in report.citations.items()]
        lines += ["## Citations", "", *_table(CITATION_HEADER, rows), "", CITATION_NOTE, ""]
    if report.anatomy:
        header = ["method", "node", "calls/q", "in/q", "out/q", *(f"{p}/q" for p in PARTS)]
        rows = [row for m, means in report.anatomy.items() for row in anatomy_rows(m, means)]
        lines += ["## Token anatomy", "", *_table(header, rows), ""]
        lines += [
            "Per question, by node: its calls and tokens, the input split by prompt part "
            "(instructions, evidence, history, question; shared out by characters).",
            "",
        ]
    if report.causes:
        lines += ["## Failure causes", "", *cause_table(report.causes), ""]
        lines += [
            "Each question's first failing step (see evals/attribution.py): plan = the "
            "sub-questions do not cover the gold decomposition; retrieval = a gold passage never "
            "reached the reader; reading = it was shown, the answer drawn from it is wrong; "
            "synthesis = the hop answers were right, the final answer is not; correct = EM. "
            "Evidence recall = share of gold passages shown, averaged.",
            "",
        ]
    if report.kept:
        rows = [
            [method, str(k.n), format_number(k.precision), format_number(k.recall)]
            + [format_number(k.kept_per_question, 1)]
            for method, k in report.kept.items()
        ]
        header = ["method", "n", "precision", "recall", "kept/q"]
        lines += ["## Kept evidence (PRISM)", "", *_table(header, rows), ""]
        lines += [
            "Retrieval precision = kept passages that are gold supporting passages / kept "
            "passages; recall = gold passages kept / gold passages; each averaged over the "
            "questions where it is defined.",
            "",
        ]
    if report.recall:
        header = ["method / mode", "group", "n"] + [f"R@{k}" for k in KS]
        rows = [
            [name, group, str(int(values["n"]))] + [format_number(values[str(k)]) for k in KS]
            for name, groups in report.recall.items()
            for group, values in groups.items()
        ]
        lines += ["## Retrieval recall", "", *_table(header, rows), ""]
    for path in report.files:
        lines.append(f"![{path.stem}]({path.name})")
    return "\n".join(lines).rstrip() + "\n"


def write_report(directory: Path, p_model: str | None = None, plots: bool = True) -> Report:
    """Summarise every result file of `directory` into report.md and the PNG plots beside it."""
    records = qa_records(directory)
    probabilities = closed_book_estimates(directory, p_model)
    report = Report(
        qa={method: summarise(lines, probabilities) for method, lines in records.items()},
        causes=cause_summaries(records),
        kept=kept_summaries(records),
        recall=retrieval_summaries(directory),
        anatomy={m: a for m, lines in records.items() if (a := mean_anatomy(lines))},
        citations={m: c for m, lines in records.items() if (c := summarise_citations(lines))},
    )
    if plots:
        from evals import plots as charts

        if report.qa:
            report.files.append(charts.accuracy_vs_tokens(report.qa, directory / ACCURACY_PLOT))
            se = charts.success_economy_bars(report.qa, directory / SE_PLOT)
            if se is not None:
                report.files.append(se)
        if report.recall:
            overall = {name: groups[ALL] for name, groups in report.recall.items()}
            report.files.append(charts.recall_bars(overall, directory / RECALL_PLOT))
    path = directory / REPORT_FILE
    path.write_text(markdown(report, directory.name), encoding="utf-8")
    report.files.insert(0, path)
    return report


def report_payload(report: Report) -> dict[str, Any]:
    """The report's numbers as JSON-safe data (for `--json` output and tests)."""
    return {
        "qa": {m: [g.as_json() for g in groups] for m, groups in report.qa.items()},
        "causes": {m: c.as_json() for m, c in report.causes.items()},
        "kept": {m: k.as_json() for m, k in report.kept.items()},
        "recall": report.recall,
        "anatomy": report.anatomy,
        "citations": {m: c.as_json() for m, c in report.citations.items()},
    }
