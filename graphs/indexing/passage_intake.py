"""What the index graph's first step does with a run's passages besides storing them.

The key a source file's passages are recorded under, removing what an edited source no longer
holds, and turning away passages PostgreSQL cannot store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import Engine

from graphs.indexing.state import IndexState
from store.deletion import prune_source
from store.failures import record_failure
from store.passage_writes import PassageRow, storable, unstorable_reason


def source_key(state: IndexState) -> str | None:
    """The source the run's passages are recorded under, if any."""
    # storable: a path with undecodable bytes (surrogate escapes) must not stop the index.
    if state.get("source"):
        return storable(state["source"])
    if state.get("source_path"):
        return storable(str(Path(state["source_path"]).resolve()))
    return None


def sync_source(
    engine: Engine, corpus: int, source: str, rows: Sequence[PassageRow]
) -> dict[str, int]:
    """Remove what the source no longer holds; count how many of those were edited, not dropped.

    A passage is its content (title and text): an edited passage is a new passage, and its old
    version leaves with everything derived from it. An old version whose title the new read
    still has counts as changed; the rest as removed.
    """
    report = prune_source(engine, corpus, source, keep=[row.id for row in rows])
    added = Counter(row.title for row in rows if row.added)
    changed = sum((Counter(report.titles) & added).values())
    return {"passages_changed": changed, "passages_removed": report.passages - changed}


def reject_unstorable(
    engine: Engine, corpus: int, pairs: Sequence[tuple[str, str]], rows: Sequence[PassageRow]
) -> dict[int, str]:
    """Record as failed every passage whose text PostgreSQL cannot hold; return id → reason.

    Such a passage is stored with its bad characters replaced (see
    store.passage_writes.storable), so extracting that copy would index text the file does not
    have: it is never extracted, and its failure is recorded once, however often the file is
    indexed or retried.
    """
    rejected: dict[int, str] = {}
    for (title, text), row in zip(pairs, rows, strict=True):
        reason = unstorable_reason(title, text)
        if reason is None or row.id in rejected:
            continue
        rejected[row.id] = reason
        if row.status != "failed":
            record_failure(engine, corpus, row.id, f"unstorable passage: {reason}", None)
    return rejected
