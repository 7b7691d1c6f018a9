"""BM25 on the hand graph of retrieval_corpus.py: lexemes, hand-computed scores, caps, growth."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select, text

from store.bm25 import bm25_propositions
from store.engine import transaction
from store.graph_writes import ExtractedPassage, write_extracted
from store.models import Corpus, Proposition
from store.passage_writes import add_passages
from tests.store.retrieval_corpus import LEXEMES, Graph, Q, bm25, build


@pytest.fixture
def graph(engine: Engine) -> Graph:
    return build(engine, "a")


def test_lexemes_and_counters_are_the_hand_counted_ones(engine: Engine, graph: Graph) -> None:
    with transaction(engine) as session:
        rows = session.execute(
            select(Proposition.id, text("tsvector_to_array(tsv)"), Proposition.n_lexemes)
        ).all()
        counters = session.execute(
            select(Corpus.n_propositions, Corpus.n_proposition_lexemes).where(
                Corpus.id == graph.corpus
            )
        ).one()
    stored = {pid: (sorted(lexemes), n) for pid, lexemes, n in rows}
    assert graph.props(stored) == {p: (sorted(set(lx)), len(set(lx))) for p, lx in LEXEMES.items()}
    # N = 6, Σ dl = 3 + 3 + 3 + 4 + 3 + 3 = 19 → avgdl = 19/6
    assert tuple(counters) == (6, 19)
    assert len(graph.entity) == 5


def test_bm25_ranks_the_rarer_keyword_first(engine: Engine, graph: Graph) -> None:
    with transaction(engine) as session:
        scores = bm25_propositions(session, graph.corpus, "painted Talmora", 10)
        copper = bm25_propositions(session, graph.corpus, "copper", 10)
    # N = 6, avgdl = 19/6; every matching doc has tf = 1, dl = 3:
    #   tf part = 2.2 / (1 + 1.2·(0.25 + 0.75·3/(19/6))) = 2.2 / 2.152632 = 1.022005
    #   paint:   df 1 → idf ln(1 + 5.5/1.5) = 1.540445 → p2 = 1.574342
    #   talmora: df 3 → idf ln(1 + 3.5/3.5) = 0.693147 → p1 = p3 = p6 = 0.708400
    assert list(graph.props(scores)) == [2, 1, 3, 6]
    assert graph.props(scores) == pytest.approx({2: 1.574342, 1: 0.708400, 3: 0.708400, 6: 0.7084})
    assert graph.props(scores) == pytest.approx(bm25(LEXEMES, ["paint", "talmora"]))
    # copper: df 2 → idf ln(1 + 4.5/2.5) = 1.029619; p4 has tf 2, dl 4: 2·2.2/(2 + 1.2·(0.25 +
    # 0.75·4/(19/6))) = 1.280243 → 1.318165; p5 tf 1, dl 3 → 1.029619 · 1.022005 = 1.052276
    assert graph.props(copper) == pytest.approx({4: 1.318165, 5: 1.052276})
    with transaction(engine) as session:
        assert bm25_propositions(session, graph.corpus, "the and of", 10) == {}
        assert bm25_propositions(session, graph.corpus, "   ", 10) == {}
        # compound lexemes and quotes are matched literally, never turned into phrases or errors
        assert bm25_propositions(session, graph.corpus, "state-of-the-art O'Brien a\\b", 10) == {}


def test_bm25_reads_each_words_best_postings_up_to_the_cap(engine: Engine, graph: Graph) -> None:
    with transaction(engine) as session:
        copper = bm25_propositions(session, graph.corpus, "copper", 10, cap=1)
        talmora = bm25_propositions(session, graph.corpus, "Talmora", 10, cap=2)
        both = bm25_propositions(session, graph.corpus, "copper Talmora", 10, cap=1)
    # copper: p4 (tf 2) weighs more than p5 (tf 1), so the one posting read is p4's, scored exactly
    # (df still counts both postings)
    assert graph.props(copper) == pytest.approx({4: 1.318165})
    # Talmora: p1, p3 and p6 weigh the same (tf 1, dl 3), so the lower ids come first
    assert graph.props(talmora) == pytest.approx({1: 0.708400, 3: 0.708400})
    # the cap is per word: copper's best posting and Talmora's
    assert graph.props(both) == pytest.approx({4: 1.318165, 1: 0.708400})
    # visited units do not use up the cap: the next best postings take their place
    with transaction(engine) as session:
        unvisited = bm25_propositions(
            session, graph.corpus, "Talmora", 10, exclude=[graph.prop[1]], cap=2
        )
    assert graph.props(unvisited) == pytest.approx({3: 0.708400, 6: 0.708400})


def test_bm25_exclusion_keeps_document_frequencies(engine: Engine, graph: Graph) -> None:
    with transaction(engine) as session:
        scores = bm25_propositions(session, graph.corpus, "Talmora", 10, exclude=[graph.prop[1]])
    # p1 is visited, but talmora still occurs in 3 of 6 propositions: idf stays ln 2
    assert graph.props(scores) == pytest.approx({3: 0.708400, 6: 0.708400})


def test_bm25_follows_the_corpus_as_it_grows(engine: Engine, graph: Graph) -> None:
    (row,) = add_passages(engine, graph.corpus, [("Ships", "Quenlar painted ships.")])
    write_extracted(
        engine, graph.corpus, [ExtractedPassage(row.id, ["Quenlar painted ships."], Q[None, :])]
    )
    with transaction(engine) as session:
        scores = bm25_propositions(session, graph.corpus, "painted Talmora", 10)
        p7 = session.execute(select(Proposition.id).where(Proposition.passage_id == row.id))
        graph.prop[7] = p7.scalar_one()
    # N = 7, Σ dl = 19 + 3 = 22 → avgdl 22/7; tf part = 2.2/(1 + 1.2·(0.25 + 0.75·3/(22/7)))
    # = 2.2/2.159091 = 1.018947; paint df 2 → idf ln(1 + 5.5/2.5) = 1.163151 → p2 = p7 =
    # 1.185189; talmora df 3 → idf ln(1 + 4.5/3.5) = 0.826679 → p1 = p3 = p6 = 0.842342
    grown = {**LEXEMES, 7: ["quenlar", "paint", "ship"]}
    assert graph.props(scores) == pytest.approx(
        {2: 1.185189, 7: 1.185189, 1: 0.842342, 3: 0.842342, 6: 0.842342}
    )
    assert graph.props(scores) == pytest.approx(bm25(grown, ["paint", "talmora"]))
