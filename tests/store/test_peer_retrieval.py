"""The peer retrieval methods end to end on the films corpus, and the per-corpus graph cache."""

from sqlalchemy import Engine

from evals.bench.methods import link_graph_layer
from nodes.retrieval.corpus_graph import clear_graph_cache, corpus_graph
from nodes.retrieval.methods import PprParams, ppr_passages, proprag_passages, sa_rag_passages
from nodes.retrieval.spreading_activation import SpreadingParams
from store.corpora import corpus_id, ensure_corpus
from store.corpus_reads import corpus_passages
from store.graph_writes import ExtractedEntity, ExtractedPassage, write_extracted
from store.passage_writes import add_passages
from tests.fixtures.films import EMBEDDER, build_corpus

QUESTION = "Where was the director of Blue Harbor born?"


def passage_ids(engine: Engine) -> dict[str, int]:
    return {p.title: p.id for p in corpus_passages(engine, corpus_id(engine, "films"))}


def films(engine: Engine) -> int:
    build_corpus(engine)
    corpus = corpus_id(engine, "films")
    link_graph_layer(engine, corpus, EMBEDDER)
    clear_graph_cache()
    return corpus


def test_the_methods_find_both_hops_of_the_chain(engine: Engine) -> None:
    corpus = films(engine)
    ids = passage_ids(engine)
    wanted = {ids["Blue Harbor"], ids["Tomas Reyd"]}
    statement = EMBEDDER.embed(["Blue Harbor was directed by Tomas Reyd."])[0]
    assert set(ppr_passages(engine, corpus, statement, 2)) == wanted
    assert set(proprag_passages(engine, corpus, statement, 2, EMBEDDER.embed)) == wanted
    # SA-RAG keeps only passages near the query (τ_d); lowered for hashed bag-of-words vectors.
    loose = SpreadingParams(tau_d=0.0, tau_a=0.1)
    assert set(sa_rag_passages(engine, corpus, statement, 2, loose)) == wanted
    # From the question, the best unit's entities (Blue Harbor, Tomas Reyd) carry PPR to the
    # director's passage ahead of Lena Marsh's, which the question's words favour ("born").
    question = EMBEDDER.embed([QUESTION])[0]
    assert ppr_passages(engine, corpus, question, 4, PprParams(top_units=1))[:2] == [
        ids["Blue Harbor"],
        ids["Tomas Reyd"],
    ]
    assert ppr_passages(engine, corpus, question, 4)[:2] == [ids["Blue Harbor"], ids["Lena Marsh"]]


def test_the_graph_cache_follows_the_corpus_and_never_crosses_corpora(engine: Engine) -> None:
    corpus = films(engine)
    first = corpus_graph(engine, corpus)
    assert corpus_graph(engine, corpus) is first  # unchanged corpus: the cached graph
    # Another corpus gets its own graph, with none of the films passages.
    other = ensure_corpus(engine, "other", EMBEDDER.name)
    [row] = add_passages(engine, other, [("Lone", "Lone Star is a film.")])
    write_extracted(
        engine,
        other,
        [
            ExtractedPassage(
                row.id,
                ["Lone Star is a film."],
                EMBEDDER.embed(["Lone Star is a film."]),
                [ExtractedEntity("Lone Star", "Film", (0,), EMBEDDER.embed(["Film"])[0])],
            )
        ],
    )
    link_graph_layer(engine, other, EMBEDDER)
    theirs = corpus_graph(engine, other)
    assert theirs.graph.passage_ids.tolist() == [row.id]
    assert row.id not in first.graph.passage_ids.tolist()
    # Adding a passage to films moves its graph version: the next read rebuilds the graph.
    [new] = add_passages(engine, corpus, [("Mara Quell", "Mara Quell is an actress.")])
    write_extracted(
        engine,
        corpus,
        [
            ExtractedPassage(
                new.id,
                ["Mara Quell is an actress."],
                EMBEDDER.embed(["Mara Quell is an actress."]),
                [ExtractedEntity("Mara Quell", "Person", (0,), EMBEDDER.embed(["Person"])[0])],
            )
        ],
    )
    rebuilt = corpus_graph(engine, corpus)
    assert rebuilt is not first and rebuilt.version > first.version
    assert new.id in rebuilt.graph.passage_ids.tolist()
