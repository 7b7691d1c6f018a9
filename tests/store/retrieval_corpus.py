"""The hand graph the retrieval tests search in a real PostgreSQL (dense, BM25, entity scores,
RankVote), and plain BM25 computed by hand.

The graph (corpus "a"); q = e0 and every proposition vector is c·e0 + √(1−c²)·e_i with its own
axis e_i, so its cosine to q is exactly c:

    passage P1 "Zorvik":   p1 "Zorvik founded Talmora."                  cos 0.9
                           p2 "Zorvik painted rivers."                   cos 0.8
    passage P2 "Quenlar":  p3 "Talmora borders Quenlar."                 cos 0.5
                           p4 "Quenlar exports copper and copper wire."  cos 0.3
    passage P3 "Miravel":  p5 "Miravel studied copper."                  cos 0.6
                           p6 "Miravel visited Talmora."                 cos 0.1

    entities (degree): Zorvik {p1,p2} (2), Talmora {p1,p3,p6} (3), Quenlar {p3,p4} (2),
                       Copper {p4,p5} (2), Miravel {p5,p6} (2)
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from sqlalchemy import Engine, select

from store.corpora import ensure_corpus
from store.engine import transaction
from store.graph_writes import ExtractedEntity, ExtractedPassage, write_extracted
from store.models import Entity, Proposition
from store.passage_writes import add_passages

DIM = 384
T = TypeVar("T")
Q = np.eye(DIM, dtype=np.float32)[0]
COSINES = {1: 0.9, 2: 0.8, 3: 0.5, 4: 0.3, 5: 0.6, 6: 0.1}
TEXTS = {
    1: "Zorvik founded Talmora.",
    2: "Zorvik painted rivers.",
    3: "Talmora borders Quenlar.",
    4: "Quenlar exports copper and copper wire.",
    5: "Miravel studied copper.",
    6: "Miravel visited Talmora.",
}
# English lexemes by hand ("and" is a stop word; "copper" occurs twice in p4).
LEXEMES = {
    1: ["zorvik", "found", "talmora"],
    2: ["zorvik", "paint", "river"],
    3: ["talmora", "border", "quenlar"],
    4: ["quenlar", "export", "copper", "copper", "wire"],
    5: ["miravel", "studi", "copper"],
    6: ["miravel", "visit", "talmora"],
}
# passage → (title, its propositions, entities as (name, proposition indices in the passage))
PASSAGES = {
    1: ("Zorvik", [1, 2], [("Zorvik", (0, 1)), ("Talmora", (0,))]),
    2: ("Quenlar", [3, 4], [("Talmora", (0,)), ("Quenlar", (0, 1)), ("Copper", (1,))]),
    3: ("Miravel", [5, 6], [("Miravel", (0, 1)), ("Copper", (0,)), ("Talmora", (1,))]),
}


def vector(cosine: float, axis: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[0], v[axis] = cosine, math.sqrt(1 - cosine**2)
    return v


def bm25(docs: dict[int, list[str]], query: list[str]) -> dict[int, float]:
    """Plain BM25: k1 1.2, b 0.75, dl = distinct lexemes, idf = ln(1 + (N − df + .5)/(df + .5))."""
    n = len(docs)
    avgdl = sum(len(set(d)) for d in docs.values()) / n
    scores: dict[int, float] = {}
    for pid, doc in docs.items():
        tf = Counter(doc)
        for term in set(query):
            if tf[term]:
                df = sum(term in d for d in docs.values())
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                norm = 1.2 * (1 - 0.75 + 0.75 * len(set(doc)) / avgdl)
                scores[pid] = scores.get(pid, 0.0) + idf * tf[term] * 2.2 / (tf[term] + norm)
    return scores


@dataclass
class Graph:
    corpus: int
    passage: dict[int, int]  # P-number → row id
    prop: dict[int, int]  # p-number → row id
    entity: dict[str, int]  # name → row id

    def props(self, scores: dict[int, T]) -> dict[int, T]:
        """Translate row ids back to the p-numbers of the docstring."""
        back = {v: k for k, v in self.prop.items()}
        return {back[i]: s for i, s in scores.items()}


def build(engine: Engine, name: str, cosines: dict[int, float] = COSINES) -> Graph:
    corpus = ensure_corpus(engine, name, "test")
    rows = add_passages(
        engine,
        corpus,
        [(title, " ".join(TEXTS[p] for p in ps)) for title, ps, _ in PASSAGES.values()],
    )
    items = [
        ExtractedPassage(
            row.id,
            [TEXTS[p] for p in ps],
            np.stack([vector(cosines[p], p) for p in ps]),
            [ExtractedEntity(n, "Thing", idx) for n, idx in entities],
        )
        for row, (_, ps, entities) in zip(rows, PASSAGES.values(), strict=True)
    ]
    write_extracted(engine, corpus, items)
    with transaction(engine) as session:
        by_text = dict(
            session.execute(
                select(Proposition.text, Proposition.id).where(Proposition.corpus_id == corpus)
            ).all()
        )
        entities = dict(
            session.execute(select(Entity.name, Entity.id).where(Entity.corpus_id == corpus)).all()
        )
    return Graph(
        corpus,
        {n: row.id for n, row in zip(PASSAGES, rows, strict=True)},
        {p: by_text[t] for p, t in TEXTS.items()},
        entities,
    )
