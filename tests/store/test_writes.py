import numpy as np
from sqlalchemy import Engine, select

from store.corpora import corpus_stats, ensure_corpus
from store.engine import transaction
from store.failures import record_failure
from store.graph_writes import ExtractedEntity, ExtractedPassage, write_extracted
from store.models import Entity, EntityProposition, Proposition
from store.passage_writes import add_passages


def unit(*values: float) -> np.ndarray:
    vector = np.zeros(384, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


CITY = unit(1, 0)
CAPITAL = unit(0.9, 0.1)  # cosine with CITY ≈ 0.994
PERSON = unit(0, 1)  # cosine with CITY = 0


def extracted(passage_id: int, statements: list[str], entities: list[ExtractedEntity]):
    vectors = np.stack([unit(1, i + 1) for i in range(len(statements))])
    return ExtractedPassage(passage_id, statements, vectors, entities)


def test_passages_are_idempotent_by_content(engine: Engine) -> None:
    corpus = ensure_corpus(engine, "c1", "hash")
    first = add_passages(engine, corpus, [("A", "alpha"), ("B", "beta"), ("A", "alpha")])
    assert first[0].id == first[2].id
    again = add_passages(engine, corpus, [("B", "beta"), ("C", "gamma")])
    assert again[0].id == first[1].id
    stats = corpus_stats(engine, "c1")
    assert (stats.passages, stats.passages_pending) == (3, 3)


def test_entities_merge_by_name_and_type_similarity(engine: Engine) -> None:
    corpus = ensure_corpus(engine, "c1", "hash")
    p1, p2 = add_passages(
        engine, corpus, [("Paris", "Paris is a city."), ("Paris H", "Paris Hilton.")]
    )
    counts = write_extracted(
        engine,
        corpus,
        [
            extracted(
                p1.id,
                ["Paris is a city in France.", "Paris hosts the Louvre."],
                [
                    ExtractedEntity("Paris", "City", (0, 1), CITY),
                    ExtractedEntity("France", "Country", (0,), PERSON),
                ],
            ),
            extracted(
                p2.id,
                ["Paris Hilton is a celebrity."],
                [
                    ExtractedEntity("paris.", "Capital city", (0,), CAPITAL),
                    ExtractedEntity("PARIS", "Person", (0,), PERSON),
                ],
            ),
        ],
    )
    # "paris." merges into Paris|City (same canonical name, types 0.994 alike);
    # "PARIS"|Person does not (cosine 0 < 0.80) and becomes a second Paris.
    assert (counts.passages, counts.propositions) == (2, 3)
    assert (counts.entities_new, counts.entities_merged) == (3, 1)
    with transaction(engine) as session:
        names = sorted(session.execute(select(Entity.canonical_name, Entity.type)).all())
        degree = dict(
            session.execute(
                select(Entity.type, EntityProposition.proposition_id.label("p"))
                .join(EntityProposition, EntityProposition.entity_id == Entity.id)
                .where(Entity.type == "City")
            ).all()
        )
        positions = session.execute(select(Proposition.position).order_by(Proposition.id)).scalars()
        assert list(positions) == [0, 1, 0]
    assert names == [("france", "Country"), ("paris", "City"), ("paris", "Person")]
    assert len(degree) == 1
    stats = corpus_stats(engine, "c1")
    assert (stats.propositions, stats.entities, stats.edges, stats.passages_done) == (3, 3, 5, 2)

    # Writing the same passages again (a re-run after a crash) adds nothing.
    again = write_extracted(engine, corpus, [extracted(p1.id, ["dup"], [])])
    assert again.passages == 0
    assert corpus_stats(engine, "c1").propositions == 3


def test_two_corpora_never_share_rows(engine: Engine) -> None:
    a = ensure_corpus(engine, "a", "hash")
    b = ensure_corpus(engine, "b", "hash")
    (pa,) = add_passages(engine, a, [("T", "same text")])
    (pb,) = add_passages(engine, b, [("T", "same text")])
    assert pa.id != pb.id
    write_extracted(
        engine, a, [extracted(pa.id, ["x"], [ExtractedEntity("X", "Thing", (0,), CITY)])]
    )
    write_extracted(
        engine, b, [extracted(pb.id, ["x"], [ExtractedEntity("X", "Thing", (0,), CITY)])]
    )
    sa, sb = corpus_stats(engine, "a"), corpus_stats(engine, "b")
    assert (sa.entities, sb.entities, sa.propositions, sb.propositions) == (1, 1, 1, 1)


def test_failures_keep_the_raw_output(engine: Engine) -> None:
    corpus = ensure_corpus(engine, "c1", "hash")
    (p,) = add_passages(engine, corpus, [("T", "text")])
    record_failure(engine, corpus, p.id, "bad json", "{oops")
    stats = corpus_stats(engine, "c1")
    assert (stats.passages_failed, stats.failures) == (1, 1)


def test_a_large_corpus_is_added_in_statements_under_the_parameter_limit(engine: Engine) -> None:
    corpus = ensure_corpus(engine, "big", "hash")
    passages = [(f"T{i}", f"text {i}") for i in range(12_000)]  # 72k parameters in one INSERT
    rows = add_passages(engine, corpus, passages)
    assert len({row.id for row in rows}) == 12_000
    assert corpus_stats(engine, "big").passages == 12_000
    assert add_passages(engine, corpus, passages[:3])[0].id == rows[0].id
