"""A source's passages added and, when it is mirrored, what it no longer holds removed: one step.

Both happen in one transaction under the corpus's lock (store/corpus_lock.py), so two indexes of
one source, or an index beside a deletion, end as if they had run one after the other: a
deletion or another re-index can never land between a source's new links and its pruning.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine

from store.corpus_lock import lock_corpus
from store.deletion import DeletionReport, prune_source_in
from store.engine import transaction
from store.passage_writes import PassageRow, insert_passages


def add_source_passages(
    engine: Engine,
    corpus: int,
    passages: Sequence[tuple[str, str]],
    source: str | None,
    *,
    mirror: bool,
    files: Sequence[str | None] | None = None,
) -> tuple[list[PassageRow], DeletionReport]:
    """Add the passages (held by `source`, if given); with `mirror`, prune the source to them.

    `files`: each passage's file inside a folder source (see store.passage_writes.add_passages).
    Returns every given passage's row, in order, and what the pruning removed.
    """
    with transaction(engine) as session:
        lock_corpus(session, corpus)
        rows = insert_passages(session, corpus, passages, source, files)
        if not mirror or source is None:
            return rows, DeletionReport()
        pruned = prune_source_in(session, corpus, source, keep=[row.id for row in rows])
    return rows, pruned
