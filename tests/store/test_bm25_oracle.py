"""The SQL BM25 against rank_bm25's BM25Okapi, on a small corpus tokenised by PostgreSQL itself.

Both sides use k1 = 1.2, b = 0.75 and the `english` lexemes of `ts_debug` (the stream that
`to_tsvector` builds the stored vectors from). The store makes two choices that BM25Okapi does
not, and the oracle adopts exactly these two, one overridden method each:

- idf = ln(1 + (N − df + 0.5)/(df + 0.5)), never negative, instead of ln((N − df + 0.5)/(df + 0.5))
  with an epsilon floor for words in more than half the documents;
- a document's length is its number of distinct lexemes (`length(tsv)`, the `n_lexemes` column;
  avgdl is their mean, from the corpus counters), while tf still counts every occurrence.

Everything else (tf per document, df over the whole corpus, the k1/b saturation, the sum over the
query's distinct lexemes) is rank_bm25's own code. The corpus exercises both choices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from rank_bm25 import BM25Okapi
from sqlalchemy import Engine, text

from store.bm25 import BM25_B, BM25_K1, bm25_passages, bm25_propositions
from store.corpora import ensure_corpus
from store.engine import transaction
from store.graph_writes import ExtractedPassage, write_extracted
from store.passage_writes import add_passages

PASSAGES = [
    (
        "Zorvik",
        [
            "Zorvik founded Talmora.",
            "Zorvik painted rivers and painted bridges.",
            "The painters of Talmora admired Zorvik's rivers.",
        ],
    ),
    (
        "Quenlar",
        [
            "Talmora borders Quenlar.",
            "Quenlar exports copper and copper wire.",
            "Quenlar's state-of-the-art mines run day and night.",
        ],
    ),
    (
        "Miravel",
        [
            "Miravel studied copper in Talmora.",
            "Miravel visited Talmora twice.",
            "A painting of Miravel hangs in Talmora.",
        ],
    ),
    ("Copper wire", ["Copper wire carries current.", "Wire made from copper is cheap."]),
]
PROPOSITION_QUERIES = [
    "painted Talmora",
    "copper wire",
    "Zorvik's painting of rivers",
    "state-of-the-art copper mines",
    "Talmora",
    "twice day night",
]
PASSAGE_QUERIES = [
    "copper",
    "painted rivers Talmora",
    "Quenlar exports",
    "wire current cheap",
    "state-of-the-art",
]
TOKENS = text("SELECT unnest(lexemes) FROM ts_debug('english', :text)")


class StoreBM25(BM25Okapi):
    """BM25Okapi with the store's idf and its distinct-lexeme document length."""

    def _initialize(self, corpus: list[list[str]]) -> dict[str, int]:
        df: dict[str, int] = super()._initialize(corpus)
        self.doc_len = [len(frequencies) for frequencies in self.doc_freqs]
        self.avgdl = sum(self.doc_len) / self.corpus_size
        return df

    def _calc_idf(self, nd: dict[str, int]) -> None:
        n = self.corpus_size
        self.idf = {word: math.log(1 + (n - df + 0.5) / (df + 0.5)) for word, df in nd.items()}


def tokens(engine: Engine, texts: Sequence[str]) -> list[list[str]]:
    """Each text's lexemes, one per occurrence, as PostgreSQL's english parser yields them."""
    with transaction(engine) as session:
        return [list(session.execute(TOKENS, {"text": t}).scalars()) for t in texts]


def oracle(documents: list[list[str]], ids: list[int], query: list[str]) -> dict[int, float]:
    """id → StoreBM25 score of every document holding a query lexeme, best first, ties by id."""
    scores = StoreBM25(documents, k1=BM25_K1, b=BM25_B).get_scores(list(dict.fromkeys(query)))
    matching = [
        (pid, float(score))
        for pid, score, doc in zip(ids, scores, documents, strict=True)
        if set(doc) & set(query)
    ]
    return dict(sorted(matching, key=lambda pair: (-round(pair[1], 9), pair[0])))


@dataclass(frozen=True)
class Indexed:
    """The corpus as stored, with each passage's and proposition's PostgreSQL tokens."""

    corpus: int
    passage_ids: list[int]
    passage_tokens: list[list[str]]
    proposition_ids: list[int]
    proposition_tokens: list[list[str]]


@pytest.fixture
def indexed(engine: Engine) -> Indexed:
    """Index PASSAGES through the write path (passages, then their propositions)."""
    corpus = ensure_corpus(engine, "oracle", "test")
    rows = add_passages(engine, corpus, [(title, " ".join(ps)) for title, ps in PASSAGES])
    axes = iter(np.eye(384, dtype=np.float32))
    write_extracted(
        engine,
        corpus,
        [
            ExtractedPassage(row.id, ps, np.stack([next(axes) for _ in ps]))
            for row, (_, ps) in zip(rows, PASSAGES, strict=True)
        ],
    )
    with transaction(engine) as session:
        propositions = session.execute(
            text("SELECT id, text FROM propositions WHERE corpus_id = :c ORDER BY id"),
            {"c": corpus},
        ).all()
    # A passage's stored vector is built from its title and text: tokenise the same string.
    passage_texts = [f"{title} {' '.join(ps)}" for title, ps in PASSAGES]
    return Indexed(
        corpus,
        [row.id for row in rows],
        tokens(engine, passage_texts),
        [int(pid) for pid, _ in propositions],
        tokens(engine, [statement for _, statement in propositions]),
    )


def test_the_corpus_exercises_both_departures_from_okapi(indexed: Indexed) -> None:
    documents = indexed.proposition_tokens
    # tf > 1 somewhere, so the distinct-lexeme length differs from the token count ...
    assert any(len(doc) != len(set(doc)) for doc in documents)
    # ... and "talmora" is in more than half the propositions, so Okapi's own idf would be negative
    assert sum("talmora" in doc for doc in documents) > len(documents) / 2


def test_bm25_propositions_equals_rank_bm25(engine: Engine, indexed: Indexed) -> None:
    for keywords in PROPOSITION_QUERIES:
        (query,) = tokens(engine, [keywords])
        expected = oracle(indexed.proposition_tokens, indexed.proposition_ids, query)
        assert expected, keywords
        with transaction(engine) as session:
            found = bm25_propositions(session, indexed.corpus, keywords, 100)
            top2 = bm25_propositions(session, indexed.corpus, keywords, 2)
        assert found == pytest.approx(expected, rel=0, abs=1e-6), keywords
        assert list(found) == list(expected), keywords
        assert list(top2) == list(expected)[:2], keywords


def test_visited_propositions_keep_the_oracles_document_frequencies(
    engine: Engine, indexed: Indexed
) -> None:
    (query,) = tokens(engine, ["painted Talmora"])
    expected = oracle(indexed.proposition_tokens, indexed.proposition_ids, query)
    visited = list(expected)[:2]
    with transaction(engine) as session:
        found = bm25_propositions(session, indexed.corpus, "painted Talmora", 100, exclude=visited)
    rest = {pid: score for pid, score in expected.items() if pid not in visited}
    assert found == pytest.approx(rest, rel=0, abs=1e-6)


def test_bm25_passages_equals_rank_bm25(engine: Engine, indexed: Indexed) -> None:
    for keywords in PASSAGE_QUERIES:
        (query,) = tokens(engine, [keywords])
        expected = oracle(indexed.passage_tokens, indexed.passage_ids, query)
        assert expected, keywords
        with transaction(engine) as session:
            found = bm25_passages(session, indexed.corpus, keywords, 100)
        assert found == pytest.approx(expected, rel=0, abs=1e-6), keywords
        assert list(found) == list(expected), keywords


def test_stop_words_only_match_nothing_on_either_side(engine: Engine, indexed: Indexed) -> None:
    (query,) = tokens(engine, ["the and of"])
    assert query == []
    assert oracle(indexed.proposition_tokens, indexed.proposition_ids, query) == {}
    with transaction(engine) as session:
        assert bm25_propositions(session, indexed.corpus, "the and of", 100) == {}
        assert bm25_passages(session, indexed.corpus, "the and of", 100) == {}
