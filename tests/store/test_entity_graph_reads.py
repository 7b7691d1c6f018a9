"""Entity graph reads by hand (units, passages, entity and relation cosines) and HNSW plans."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine, text

from store.engine import transaction
from store.entity_graph import (
    TOP_PROPOSITIONS,
    entity_unit_cosines,
    passage_cosines,
    passage_propositions,
    proposition_details,
    relation_cosines,
    top_propositions,
)
from store.entity_graph_links import LINK_SYNONYMS, use_hnsw_for_synonyms
from tests.store.entity_graph_corpus import PASSAGE_COS, UNITS, Built, Q, build, vector


@pytest.fixture
def built(engine: Engine) -> Built:
    return build(engine, "a")


def test_reads_by_hand(engine: Engine, built: Built) -> None:
    u, e, p = built.unit, built.entity, built.passage
    top = top_propositions(engine, built.corpus, Q, 3)
    assert [(i, pid) for i, pid, _ in top] == [(u[1], p[1]), (u[2], p[1]), (u[5], p[3])]
    assert [c for _, _, c in top] == pytest.approx([0.9, 0.8, 0.6], abs=1e-6)

    details = proposition_details(engine, [u[5], u[7], 10_000])
    assert set(details) == {u[5], u[7]}
    five = details[u[5]]
    assert (five.passage_id, five.text) == (p[3], UNITS[5][0])
    assert five.entity_ids == tuple(sorted((e["Miravel"], e["Copper"], e["Zorvik"])))
    assert five.embedding.dtype == np.float32
    assert np.array_equal(five.embedding, vector(0.6, 5))

    assert passage_propositions(engine, [p[3], p[1]]) == [u[1], u[2], u[5], u[6]]
    assert passage_cosines(engine, built.corpus, Q) == pytest.approx(
        {p[n]: c for n, c in PASSAGE_COS.items()}, abs=1e-6
    )
    expected = {"Zorvik": 0.9, "Talmora": 0.9, "Quenlar": 0.5, "Copper": 0.6, "Miravel": 0.6}
    expected |= {"Zorvick": 0.2, "Talmorra": 0.2}
    assert entity_unit_cosines(engine, built.corpus, Q) == pytest.approx(
        {e[n]: c for n, c in expected.items()}, abs=1e-6
    )
    some = entity_unit_cosines(engine, built.corpus, Q, [e["Quenlar"], e["Copper"]])
    assert some == pytest.approx({e["Quenlar"]: 0.5, e["Copper"]: 0.6}, abs=1e-6)
    assert entity_unit_cosines(engine, built.corpus, Q, []) == {}

    pairs = [
        (e["Talmora"], e["Zorvik"]),
        (e["Talmora"], e["Miravel"]),
        (e["Quenlar"], e["Miravel"]),
    ]
    relations = relation_cosines(engine, built.corpus, Q, pairs)
    key = lambda a, b: (min(e[a], e[b]), max(e[a], e[b]))  # noqa: E731
    assert set(relations) == {key("Talmora", "Zorvik"), key("Talmora", "Miravel")}
    assert relations[key("Talmora", "Zorvik")] == (pytest.approx(0.9, abs=1e-6), u[1])
    assert relations[key("Talmora", "Miravel")] == (pytest.approx(0.1, abs=1e-6), u[6])
    assert relation_cosines(engine, built.corpus, Q, []) == {}


def test_neighbour_searches_use_the_hnsw_indexes(engine: Engine, built: Built) -> None:
    with transaction(engine) as session:
        # Seven-row tables would be scanned and sorted; forbid that so the HNSW path is tested.
        for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
            session.execute(text(f"SET LOCAL {setting} = off"))

        def plan(statement: Any, params: dict[str, Any]) -> str:
            explain = text("EXPLAIN " + str(statement)).bindparams(*statement._bindparams.values())
            return "\n".join(session.execute(explain, params).scalars())

        top = plan(TOP_PROPOSITIONS, {"q": Q, "corpus": built.corpus, "k": 3})
        assert "ix_propositions_embedding_hnsw" in top
        params = {"corpus": built.corpus, "ids": [1], "neighbours": 20, "threshold": 0.8}
        assert "ix_entities_name_embedding_hnsw" in plan(LINK_SYNONYMS, params)


def test_the_synonym_search_takes_the_hnsw_index_without_statistics(
    engine: Engine, built: Built
) -> None:
    # Right after a load the planner has no statistics of the new names (they are stored by the
    # linking transaction itself) and would sort every entity per search; the linker's own
    # settings, and nothing else, must keep it on the index.
    with transaction(engine) as session:
        use_hnsw_for_synonyms(session)
        params = {"corpus": built.corpus, "ids": [1], "neighbours": 20, "threshold": 0.8}
        explain = text("EXPLAIN " + str(LINK_SYNONYMS)).bindparams(
            *LINK_SYNONYMS._bindparams.values()
        )
        plan = "\n".join(session.execute(explain, params).scalars())
    assert "ix_entities_name_embedding_hnsw" in plan
