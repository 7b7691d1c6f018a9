"""Closed-book success probabilities p_i (n samples at temperature 1.0), cached per (model, question).

Why not the LLM response cache: it keys on model + prompt, so n identical prompts would replay one
reply n times and p_i could only be 1/(n+2) or (n+1)/(n+2). Making the prompts distinct ("sample
3 of 5") would change the question asked. So the samples go through a client with its cache off
(and, for a local model, a new seed each call: `sampled=True` in `evals.commands.sampler_for`),
and what is kept is the estimate itself: one JSON line per (model, question, n) in
`<results dir>/cache/closed_book.jsonl`, shared by every method evaluated on that corpus.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.judge import judge_answer
from evals.metrics import closed_book_probability, exact_match
from evals.results import CACHE_DIR, JsonlAppender, read_jsonl
from nodes.llm.client import CallTag, LlmClient
from nodes.peers.answer import answer_closed_book

log = logging.getLogger(__name__)

SAMPLING_TEMPERATURE = 1.0
CACHE_FILE = "closed_book.jsonl"


@dataclass(frozen=True)
class ClosedBookItem:
    """What p_i needs of a question."""

    id: str
    question: str
    answers: list[str]


def cache_path(directory: Path) -> Path:
    """The closed-book cache of a results directory."""
    return directory / CACHE_DIR / CACHE_FILE


def cached_probabilities(directory: Path, model: str, samples: int) -> dict[str, float]:
    """question id → p_i of the estimates already made with this model and sample count."""
    return {
        str(r["question_id"]): float(r["p"])
        for r in read_jsonl(cache_path(directory))
        if r.get("model") == model and r.get("samples") == samples
    }


async def _sample_correct(
    sampler: LlmClient, judge: LlmClient | None, item: ClosedBookItem, n: int
) -> tuple[bool, str]:
    run = f"closed-book:{item.id}:{n}"
    # The closed-book method's own prompt (nodes/peers/answer.py), sampled at temperature 1.0.
    outcome = await answer_closed_book(
        sampler, question=item.question, tag=CallTag(node="closed_book_sample", run_id=run)
    )
    prediction = outcome.answer
    if exact_match(prediction, item.answers):
        return True, prediction
    if judge is None:
        return False, prediction
    # Same criterion as the runs themselves: the strict judge where one runs (EM is free, so first).
    verdicts = await judge_answer(judge, item.question, prediction, item.answers, run)
    return verdicts.strict, prediction


async def estimate_probabilities(
    items: Sequence[ClosedBookItem],
    directory: Path,
    sampler: LlmClient,
    judge: LlmClient | None,
    samples: int = 5,
    concurrency: int = 1,
) -> dict[str, float]:
    """p_i for every item, sampling only those the cache lacks; returns question id → p_i."""
    if samples < 1:
        raise ValueError("closed-book estimation needs at least one sample")
    known = cached_probabilities(directory, sampler.model_name, samples)
    todo = [item for item in items if item.id not in known]
    appender = JsonlAppender(cache_path(directory))
    gate = asyncio.Semaphore(max(concurrency, 1))

    async def estimate(item: ClosedBookItem) -> None:
        async with gate:
            outcomes = [await _sample_correct(sampler, judge, item, n) for n in range(samples)]
        correct = sum(ok for ok, _ in outcomes)
        p = closed_book_probability(correct, samples)
        record: dict[str, Any] = {
            "model": sampler.model_name,
            "question_id": item.id,
            "question": item.question,
            "samples": samples,
            "correct": correct,
            "p": p,
            "predictions": [prediction for _, prediction in outcomes],
        }
        await appender.append(record)
        known[item.id] = p

    results = await asyncio.gather(*(estimate(item) for item in todo), return_exceptions=True)
    for item, result in zip(todo, results, strict=True):
        if isinstance(result, BaseException):
            # Without p_i a question has no SE; the summary says n/a rather than guess.
            log.warning("closed-book estimate of %s failed: %s", item.id, result)
    return {item.id: known[item.id] for item in items if item.id in known}
