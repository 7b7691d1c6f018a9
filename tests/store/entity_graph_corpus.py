"""The corpus the entity graph layer's tests build by hand, and how they link and read it.

The corpus; q = e0 and every unit vector is c·e0 + √(1−c²)·e_i with its own axis e_i, so its
cosine to q is exactly c (passage vectors likewise, on axes 20+):

    P1 "Zorvik":   u1 "Zorvik founded Talmora."               {Zorvik, Talmora}          cos 0.9
                   u2 "Zorvik painted Talmora's rivers."      {Zorvik, Talmora}          cos 0.8
    P2 "Quenlar":  u3 "Talmora borders Quenlar."              {Talmora, Quenlar}         cos 0.5
                   u4 "Quenlar exports copper."               {Quenlar, Copper}          cos 0.3
    P3 "Miravel":  u5 "Miravel studied copper with Zorvik."   {Miravel, Copper, Zorvik}  cos 0.6
                   u6 "Miravel visited Talmora."              {Miravel, Talmora}         cos 0.1
    P4 "Notes":    u7 "Zorvick met Talmorra."                 {Zorvick, Talmorra}        cos 0.2

Name vectors are orthogonal axes (from 100 on) except Zorvick = 0.81·Zorvik + … (a synonym at the
0.8 threshold) and Talmorra = 0.79·Talmora + … (not one).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
from sqlalchemy import Engine, select

from nodes.indexing.link_entities import LinkReport, link_entities
from store.corpora import ensure_corpus
from store.engine import transaction
from store.entity_graph import GraphEdges
from store.graph_writes import (
    ExtractedEntity,
    ExtractedPassage,
    set_passage_embeddings,
    write_extracted,
)
from store.models import Entity, Passage, Proposition
from store.passage_writes import add_passages

DIM = 384
Q = np.eye(DIM, dtype=np.float32)[0]
UNITS = {
    1: ("Zorvik founded Talmora.", 0.9, ("Zorvik", "Talmora")),
    2: ("Zorvik painted Talmora's rivers.", 0.8, ("Zorvik", "Talmora")),
    3: ("Talmora borders Quenlar.", 0.5, ("Talmora", "Quenlar")),
    4: ("Quenlar exports copper.", 0.3, ("Quenlar", "Copper")),
    5: ("Miravel studied copper with Zorvik.", 0.6, ("Miravel", "Copper", "Zorvik")),
    6: ("Miravel visited Talmora.", 0.1, ("Miravel", "Talmora")),
    7: ("Zorvick met Talmorra.", 0.2, ("Zorvick", "Talmorra")),
}
PASSAGES = {
    1: ("Zorvik", (1, 2)),
    2: ("Quenlar", (3, 4)),
    3: ("Miravel", (5, 6)),
    4: ("Notes", (7,)),
}
PASSAGE_COS = {1: 0.7, 2: 0.4, 3: 0.55, 4: 0.05}
NAMES = ("Zorvik", "Talmora", "Quenlar", "Copper", "Miravel", "Zorvick", "Talmorra")


def vector(cosine: float, axis: int, base: int = 0) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[base], v[axis] = cosine, math.sqrt(1 - cosine**2)
    return v


def axis(i: int) -> np.ndarray:
    return np.eye(DIM, dtype=np.float32)[i]


NAME_VECTORS = {name: axis(100 + i) for i, name in enumerate(NAMES)}
NAME_VECTORS["Zorvick"] = vector(0.81, 150, base=100)
NAME_VECTORS["Talmorra"] = vector(0.79, 151, base=101)


class NameEmbedder:
    """The hand-made name vectors; fails on call number `fail_on` (an interrupted index)."""

    name, dim, cpu_bound = "names", DIM, False

    def __init__(self, fail_on: int = 0) -> None:
        self.calls, self.fail_on = 0, fail_on

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("embedder down")
        return np.stack([NAME_VECTORS[t] for t in texts])


def link(engine: Engine, corpus: int, chunk: int = 512, fail_on: int = 0, **kw: Any) -> LinkReport:
    services = SimpleNamespace(engine=engine, embedder=NameEmbedder(fail_on))
    return asyncio.run(link_entities(services, corpus, chunk=chunk, **kw))  # type: ignore[arg-type]


@dataclass
class Built:
    corpus: int
    passage: dict[int, int]  # P-number → row id
    unit: dict[int, int]  # u-number → row id
    entity: dict[str, int]  # name → row id


def write(engine: Engine, corpus: int, passages: Sequence[int]) -> None:
    rows = add_passages(
        engine,
        corpus,
        [(PASSAGES[n][0], " ".join(UNITS[u][0] for u in PASSAGES[n][1])) for n in passages],
    )
    items = []
    for n, row in zip(passages, rows, strict=True):
        units = PASSAGES[n][1]
        names = sorted({name for u in units for name in UNITS[u][2]}, key=NAMES.index)
        entities = [
            ExtractedEntity(
                name, "Thing", tuple(i for i, u in enumerate(units) if name in UNITS[u][2])
            )
            for name in names
        ]
        items.append(
            ExtractedPassage(
                row.id,
                [UNITS[u][0] for u in units],
                np.stack([vector(UNITS[u][1], u) for u in units]),
                entities,
            )
        )
    write_extracted(engine, corpus, items)
    set_passage_embeddings(
        engine, [r.id for r in rows], np.stack([vector(PASSAGE_COS[n], 20 + n) for n in passages])
    )


def ids(engine: Engine, corpus: int) -> Built:
    with transaction(engine) as session:
        passages = dict(
            session.execute(
                select(Passage.title, Passage.id).where(Passage.corpus_id == corpus)
            ).all()
        )
        units = dict(
            session.execute(
                select(Proposition.text, Proposition.id).where(Proposition.corpus_id == corpus)
            ).all()
        )
        entities = dict(
            session.execute(select(Entity.name, Entity.id).where(Entity.corpus_id == corpus)).all()
        )
    return Built(
        corpus,
        {n: passages[title] for n, (title, _) in PASSAGES.items() if title in passages},
        {u: units[t] for u, (t, _, _) in UNITS.items() if t in units},
        entities,
    )


def build(engine: Engine, name: str) -> Built:
    corpus = ensure_corpus(engine, name, "test")
    write(engine, corpus, [1, 2, 3, 4])
    link(engine, corpus)
    return ids(engine, corpus)


def by_name(edges: GraphEdges, built: Built) -> dict[str, Any]:
    """The layer with row ids replaced by names, P-numbers and u-numbers (version left out)."""
    entity = {v: k for k, v in built.entity.items()}
    passage = {v: k for k, v in built.passage.items()}
    return {
        "entities": sorted(entity[e] for e in edges.entity_ids),
        "passages": sorted(passage[p] for p in edges.passage_ids),
        "cooccurrence": sorted(
            (*sorted((entity[a], entity[b])), n) for a, b, n in edges.cooccurrence
        ),
        "synonyms": sorted(
            (*sorted((entity[a], entity[b])), round(s, 6)) for a, b, s in edges.synonyms
        ),
        "containment": sorted((entity[e], passage[p], n) for e, p, n in edges.containment),
    }
