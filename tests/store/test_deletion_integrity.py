"""Deletion never leaves a late write, an empty entity or a dangling derived edge behind."""

from __future__ import annotations

import numpy as np
from sqlalchemy import Engine, select, text

from store.corpora import corpus_id, delete_corpus
from store.deletion import delete_passages, delete_titled
from store.engine import transaction
from store.failures import record_failure
from store.graph_writes import (
    ExtractedEntity,
    ExtractedPassage,
    set_passage_embeddings,
    write_extracted,
)
from store.models import ExtractionFailure, Proposition
from store.passage_writes import add_passages
from tests.store.corpus_snapshot import (
    ALPHA,
    BETA,
    GAMMA,
    assert_consistent,
    index,
    passage_ids,
    snapshot,
)


async def test_an_indexer_never_writes_a_passage_deleted_while_it_worked(
    engine: Engine, database_url: str
) -> None:
    await index(engine, database_url, "c", [ALPHA])
    cid = corpus_id(engine, "c")
    (alpha,) = passage_ids(engine, "c", "Alpha")
    (beta,) = add_passages(engine, cid, [BETA])
    delete_passages(engine, cid, [alpha])
    set_passage_embeddings(engine, [alpha, beta.id], np.ones((2, 384), np.float32) / np.sqrt(384))
    assert snapshot(engine, "c")["passages"] == [(*BETA, "pending", True, 5)]
    delete_passages(engine, cid, [beta.id])
    late = ExtractedPassage(
        alpha,
        ["Paris lies on the Seine."],
        np.ones((1, 384), np.float32) / np.sqrt(384),
        [ExtractedEntity("Paris", "thing", (0,))],
    )
    assert write_extracted(engine, cid, [late]).passages == 0
    record_failure(engine, cid, alpha, "too late", None)
    with transaction(engine) as session:
        assert session.execute(select(ExtractionFailure)).first() is None
        assert session.execute(select(Proposition)).first() is None
    assert snapshot(engine, "c")["bm25_counters"] == (0, 0, 0, 0)
    assert_consistent(engine, "c")


async def test_an_entity_without_units_is_never_created(engine: Engine, database_url: str) -> None:
    await index(engine, database_url, "c", [GAMMA])
    cid = corpus_id(engine, "c")
    (row,) = add_passages(engine, cid, [("Zeta", "Nothing here.")])
    item = ExtractedPassage(
        row.id,
        ["Nothing here."],
        np.ones((1, 384), np.float32) / np.sqrt(384),
        [ExtractedEntity("Ghost", "thing", (7,))],  # points past the passage's one unit
    )
    assert write_extracted(engine, cid, [item]).entities_new == 0
    assert "ghost" not in {e[1] for e in snapshot(engine, "c")["entities"]}
    assert_consistent(engine, "c")


# Derived edges whose entity, unit or passage no longer exists (no foreign key forbids them).
DANGLING_EDGES = {
    "entity–unit": """
        SELECT count(*) FROM entity_propositions ep
        LEFT JOIN entities e ON e.id = ep.entity_id
        LEFT JOIN propositions u ON u.id = ep.proposition_id
        WHERE e.id IS NULL OR u.id IS NULL
    """,
    "co-occurrence": """
        SELECT count(*) FROM entity_cooccurrences c
        LEFT JOIN entities a ON a.id = c.entity_a
        LEFT JOIN entities b ON b.id = c.entity_b
        LEFT JOIN propositions u ON u.id = c.proposition_id
        WHERE a.id IS NULL OR b.id IS NULL OR u.id IS NULL
    """,
    "containment": """
        SELECT count(*) FROM entity_passages c
        LEFT JOIN entities e ON e.id = c.entity_id
        LEFT JOIN passages p ON p.id = c.passage_id
        WHERE e.id IS NULL OR p.id IS NULL
    """,
}


def dangling_edges(engine: Engine) -> dict[str, int]:
    with transaction(engine) as session:
        return {
            name: session.execute(text(sql)).scalar_one() for name, sql in DANGLING_EDGES.items()
        }


async def test_deletions_leave_no_derived_edge_behind(engine: Engine, database_url: str) -> None:
    await index(engine, database_url, "gone", [ALPHA, BETA, GAMMA])
    await index(engine, database_url, "kept", [ALPHA, BETA, GAMMA])
    kept = snapshot(engine, "kept")
    assert kept["unit_edges"] and kept["cooccurrence"] and kept["containment"]  # all to lose
    gone = corpus_id(engine, "gone")

    assert delete_titled(engine, gone, "Alpha").passages == 1
    assert dangling_edges(engine) == dict.fromkeys(DANGLING_EDGES, 0)
    assert delete_corpus(engine, "gone")
    assert dangling_edges(engine) == dict.fromkeys(DANGLING_EDGES, 0)
    with transaction(engine) as session:
        for table in ("entity_cooccurrences", "entity_passages"):
            left = text(f"SELECT count(*) FROM {table} WHERE corpus_id = :c")
            assert session.execute(left, {"c": gone}).scalar_one() == 0
    assert snapshot(engine, "kept") == kept  # the other corpus keeps every edge
    assert_consistent(engine, "kept")
