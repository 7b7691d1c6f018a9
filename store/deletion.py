"""Delete passages, and everything derived from them, leaving no orphan behind.

A deletion runs in one transaction under the corpus's write lock (store/corpus_lock.py, the one
every writer of the corpus takes first), so it never interleaves with an indexer writing it. The derived
edges of the passages' units (entity–unit, co-occurrence, containment; no foreign key reaches
them) are removed first (store/derived_edges.py); removing a passage row then cascades, through
the schema's foreign keys, to its units, failures, source links and vector; what the cascade
cannot know is done here: entities no unit mentions any more are removed (with their synonymy
edges), the surviving entities' stored degrees lose exactly the edges removed, the corpus's BM25
counters (N and total length of passages and of units) lose exactly what was removed, the BM25
postings of the passages and of their units are removed (no foreign key reaches them, see
store/models.py), and graph_version is bumped so cached entity graphs are rebuilt.
Document frequencies are counted from the postings at query time (store/retrieval.py), so they
need no upkeep of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from store.corpus_lock import lock_corpus
from store.derived_edges import remove_passage_edges
from store.engine import transaction
from store.graph_writes import change_degrees
from store.postings import remove_postings

PASSAGES_TITLED = text("SELECT id FROM passages WHERE corpus_id = :corpus AND title = :title")
PASSAGE_WITH_ID = text("SELECT id FROM passages WHERE corpus_id = :corpus AND id = :id")

# The source lets go of its passages other than `keep`; the ones no source holds any more go.
# An anti-join on the unnested ids (a hash, not a scan of the array per row): a re-index of a
# 100k-passage file keeps 100k ids.
UNLINK_SOURCE = text("""
DELETE FROM passage_sources s
WHERE s.corpus_id = :corpus AND s.source = :source
  AND NOT EXISTS (
      SELECT 1 FROM unnest(CAST(:keep AS bigint[])) AS k(id) WHERE k.id = s.passage_id
  )
RETURNING s.passage_id
""")
WITHOUT_SOURCE = text("""
SELECT p.id FROM passages p
WHERE p.corpus_id = :corpus AND p.id = ANY(:ids)
  AND NOT EXISTS (SELECT 1 FROM passage_sources s WHERE s.passage_id = p.id)
""")

REMOVED_PASSAGES = text("""
SELECT title, n_lexemes FROM passages WHERE corpus_id = :corpus AND id = ANY(:ids)
""")
UNIT_TOTALS = text("""
SELECT count(*), coalesce(sum(n_lexemes), 0) FROM propositions
WHERE corpus_id = :corpus AND passage_id = ANY(:ids)
""")
# The edges the cascade will remove, per entity, counted before it does: the entities they link
# are the only candidates for removal, and the survivors' degrees lose exactly these counts.
REMOVED_EDGES = text("""
SELECT ep.entity_id, count(*)
FROM propositions p JOIN entity_propositions ep ON ep.proposition_id = p.id
WHERE p.corpus_id = :corpus AND p.passage_id = ANY(:ids)
GROUP BY ep.entity_id
""")
# Cascades to units, failures, sources and the vector (the derived edges are already gone).
DELETE_PASSAGES = text("DELETE FROM passages WHERE corpus_id = :corpus AND id = ANY(:ids)")
# Only entities the removed units linked are candidates, so the check never scans the corpus.
DELETE_UNREFERENCED_ENTITIES = text("""
DELETE FROM entities e
WHERE e.corpus_id = :corpus AND e.id = ANY(:entities)
  AND NOT EXISTS (SELECT 1 FROM entity_propositions ep WHERE ep.entity_id = e.id)
RETURNING e.id
""")
SUBTRACT_COUNTERS = text("""
UPDATE corpora
SET n_passages = n_passages - :passages,
    n_passage_lexemes = n_passage_lexemes - :passage_lexemes,
    n_propositions = n_propositions - :units,
    n_proposition_lexemes = n_proposition_lexemes - :unit_lexemes,
    graph_version = graph_version + 1
WHERE id = :corpus
""")


@dataclass(frozen=True)
class DeletionReport:
    """What one deletion removed.

    `released` counts passages a source let go of that stay because another source holds them;
    `titles` are the removed passages' titles, sorted.
    """

    passages: int = 0
    propositions: int = 0
    entities: int = 0
    released: int = 0
    titles: tuple[str, ...] = ()

    @property
    def matched(self) -> bool:
        """Whether the deletion found anything to act on."""
        return bool(self.passages or self.released)


def _ids(values: Iterable[Any]) -> list[int]:
    return sorted({int(value) for value in values})


def _delete_passages(session: Session, corpus: int, ids: Sequence[int]) -> DeletionReport:
    """Remove the passages and all that derives from them, in the caller's transaction."""
    if not ids:
        return DeletionReport()
    given = {"corpus": corpus, "ids": list(ids)}
    removed_passages = session.execute(REMOVED_PASSAGES, given).all()
    units, unit_lexemes = session.execute(UNIT_TOTALS, given).one()
    edges = {int(row[0]): int(row[1]) for row in session.execute(REMOVED_EDGES, given)}
    remove_postings(session, corpus, ids)  # found from the rows' own lexemes, so before they go
    remove_passage_edges(session, corpus, ids)  # found from the units, so before they go too
    session.execute(DELETE_PASSAGES, given)
    unlinked = {"corpus": corpus, "entities": sorted(edges)}
    gone = {int(e) for e in session.execute(DELETE_UNREFERENCED_ENTITIES, unlinked).scalars()}
    change_degrees(session, corpus, {e: -n for e, n in edges.items() if e not in gone})
    session.execute(
        SUBTRACT_COUNTERS,
        {
            "corpus": corpus,
            "passages": len(removed_passages),
            "passage_lexemes": sum(int(row[1]) for row in removed_passages),
            "units": units,
            "unit_lexemes": unit_lexemes,
        },
    )
    return DeletionReport(
        passages=len(removed_passages),
        propositions=int(units),
        entities=len(gone),
        titles=tuple(sorted(str(row[0]) for row in removed_passages)),
    )


def delete_passages(engine: Engine, corpus: int, ids: Sequence[int]) -> DeletionReport:
    """Delete the given passages of the corpus (ids of other corpora are ignored)."""
    with transaction(engine) as session:
        lock_corpus(session, corpus)
        return _delete_passages(session, corpus, _ids(ids))


def delete_titled(engine: Engine, corpus: int, title: str) -> DeletionReport:
    """Delete every passage of the corpus with exactly this title."""
    with transaction(engine) as session:
        lock_corpus(session, corpus)
        found = session.execute(PASSAGES_TITLED, {"corpus": corpus, "title": title}).scalars()
        return _delete_passages(session, corpus, _ids(found))


def delete_passage_id(engine: Engine, corpus: int, passage_id: int) -> DeletionReport:
    """Delete the passage with this id if it belongs to the corpus."""
    with transaction(engine) as session:
        lock_corpus(session, corpus)
        found = session.execute(PASSAGE_WITH_ID, {"corpus": corpus, "id": passage_id}).scalars()
        return _delete_passages(session, corpus, _ids(found))


def prune_source(
    engine: Engine, corpus: int, source: str, keep: Sequence[int] = ()
) -> DeletionReport:
    """Make the source hold only `keep`: its other passages go unless another source holds them.

    With no `keep` this deletes the source from the corpus (`grasp delete --source`); the
    indexer passes the passages a re-read file still has, so the corpus mirrors the file.
    Passages of other sources, or of none, are never touched.
    """
    with transaction(engine) as session:
        lock_corpus(session, corpus)
        return prune_source_in(session, corpus, source, keep)


def prune_source_in(
    session: Session, corpus: int, source: str, keep: Sequence[int] = ()
) -> DeletionReport:
    """`prune_source` in the caller's transaction, which holds the corpus's lock."""
    params = {"corpus": corpus, "source": source, "keep": _ids(keep)}
    released = _ids(session.execute(UNLINK_SOURCE, params).scalars())
    if not released:
        return DeletionReport()
    orphaned = _ids(session.execute(WITHOUT_SOURCE, {"corpus": corpus, "ids": released}).scalars())
    report = _delete_passages(session, corpus, orphaned)
    return replace(report, released=len(released) - len(orphaned))
