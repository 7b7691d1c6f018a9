"""Index one batch: extract, embed propositions and entity types, resolve entities, write."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nodes.deps import NodeServices
from nodes.embedding import Embedder, Vectors
from nodes.indexing.extraction_types import BatchOutcome, Extraction, Extractor, PassageInput
from store.failures import record_failure
from store.graph_writes import ExtractedEntity, ExtractedPassage, WriteCounts, write_extracted

log = logging.getLogger(__name__)


@dataclass
class BatchReport:
    """What one batch did, for the progress bar and the summary."""

    passages_done: int = 0
    passages_failed: int = 0
    passages_pending: int = 0
    propositions: int = 0
    entities_new: int = 0
    edges: int = 0
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None


def one_line_error(exc: BaseException) -> str:
    """The error's type and the first line of its message (a driver's error appends its SQL)."""
    # SQLAlchemy wraps the driver's error as `orig`; its own text adds the statement and a link.
    cause = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else 'no message'}"


def embed_extractions(
    embedder: Embedder, extractions: Sequence[Extraction]
) -> list[ExtractedPassage]:
    """Embed every proposition (or its `embed_texts`) and every distinct entity type once.

    One embedder call for both: a second, small call for the types would wait for a free model
    copy behind every other batch's queued slices, holding this batch's write back until the
    other batch's embedding is done too (the two batches then wrote at the same time, leaving
    the embedder idle).
    """
    texts = [t for e in extractions for t in (e.embed_texts or e.propositions)]
    types = sorted({m.type for e in extractions for m in e.entities})
    everything = texts + types
    embedded = embedder.embed(everything) if everything else np.zeros((0, embedder.dim), np.float32)
    vectors = embedded[: len(texts)]
    type_vectors: dict[str, Vectors] = dict(zip(types, embedded[len(texts) :], strict=True))
    items: list[ExtractedPassage] = []
    cursor = 0
    for extraction in extractions:
        n = len(extraction.propositions)
        entities = [
            ExtractedEntity(m.name, m.type, m.propositions, type_vectors[m.type])
            for m in extraction.entities
        ]
        items.append(
            ExtractedPassage(
                extraction.passage_id,
                extraction.propositions,
                vectors[cursor : cursor + n],
                entities,
            )
        )
        cursor += n
    return items


async def index_batch(
    services: NodeServices,
    extractor: Extractor,
    *,
    corpus_id: int,
    passages: Sequence[PassageInput],
    type_threshold: float,
) -> BatchReport:
    """Run one batch end to end; never raises, so one bad batch cannot stop the whole index."""
    report = BatchReport()
    try:
        outcome: BatchOutcome = await extractor.extract(passages, corpus_id)
        report.llm_calls = outcome.llm_calls
        report.input_tokens = outcome.input_tokens
        report.output_tokens = outcome.output_tokens
        items = await asyncio.to_thread(embed_extractions, services.embedder, outcome.extractions)
        counts: WriteCounts = await asyncio.to_thread(
            write_extracted, services.engine, corpus_id, items, type_threshold
        )
        for failure in outcome.failures:
            if failure.retryable:
                report.passages_pending += 1  # left pending: a re-run tries it again
                report.error = report.error or failure.error
                continue
            await asyncio.to_thread(
                record_failure,
                services.engine,
                corpus_id,
                failure.passage_id,
                failure.error,
                failure.raw_output,
            )
            report.passages_failed += 1
    except Exception as exc:  # database down, embedder crash: keep the batch pending, report it
        # The error goes to the user as one line (report.error); the trace only with --verbose,
        # or a stopped server would print one per batch in flight.
        log.debug("batch of %d passages failed", len(passages), exc_info=True)
        report.passages_pending = len(passages)
        report.error = one_line_error(exc)
        return report
    report.passages_done = counts.passages
    report.propositions = counts.propositions
    report.entities_new = counts.entities_new
    report.edges = counts.edges
    return report
