"""A QA evaluation end to end: run the questions, estimate closed-book p_i, save the summary."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evals.citation_metrics import summarise_citations
from evals.closed_book import ClosedBookItem, estimate_probabilities
from evals.provenance import provenance
from evals.qa_run import QaItem, QaRun, RunOutcome
from evals.qa_runner import run_questions
from evals.summary import GroupSummary, summarise, summarise_kept
from nodes.llm.client import LlmClient


def summary_path(results: Path) -> Path:
    """`<method>.summary.json` beside `<method>.jsonl`."""
    return results.with_name(results.stem + ".summary.json")


async def evaluate(
    run: QaRun,
    items: Sequence[QaItem],
    sampler: LlmClient | None,
    p_samples: int,
    progress: Callable[[str], None] | None = None,
) -> tuple[RunOutcome, list[GroupSummary]]:
    """Run, estimate the closed-book p_i (when p_samples > 0), summarise and save the summary."""
    # Taken before the run: a long run's tree may be committed to, or edited, while it answers.
    origin = provenance()
    outcome = await run_questions(run, items, progress)
    probabilities: dict[str, float] | None = None
    if p_samples > 0 and sampler is not None:
        probabilities = await estimate_probabilities(
            [ClosedBookItem(i.id, i.question, i.answers) for i in items],
            run.results.parent,
            sampler,
            run.services.judge() if run.judge else None,
            p_samples,
            run.concurrency,
        )
    summaries = summarise(outcome.records, probabilities)
    payload: dict[str, Any] = {
        "method": run.label,
        "settings": run.settings(),
        "questions": len(items),
        "answered_now": outcome.answered,
        "skipped": outcome.skipped,
        "failed": [{"id": qid, "error": error} for qid, error in outcome.failed],
        "p_samples": p_samples,
        "groups": [s.as_json() for s in summaries],
        **origin,  # the command and commit docs/results.md shows beside the numbers
    }
    kept = summarise_kept(outcome.records)
    if kept is not None:
        payload["kept_retrieval"] = kept.as_json()
    cited = summarise_citations(outcome.records)
    if cited is not None:
        payload["citations"] = cited.as_json()  # docs/results.md's citation table reads it
    summary_path(run.results).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return outcome, summaries
