"""The synthetic corpus `grasp bench retrieve` times: generated, written and queried."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine

from nodes.embedding import Embedder, normalise_rows
from store.corpus_reads import (
    entity_mentions,
    proposition_counter,
    proposition_ids,
    stored_propositions,
)
from store.graph_writes import (
    ExtractedEntity,
    ExtractedPassage,
    passages_without_embedding,
    set_passage_embeddings,
    write_extracted,
)
from store.models import EMBEDDING_DIM
from store.passage_writes import add_passages

Vectors = npt.NDArray[np.float32]
RANDOM_EMBEDDER = "bench:random-clustered"
PER_PASSAGE = 5  # propositions per passage
PASSAGES_PER_BATCH = 200
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]  # 70 syllables


def _word(index: int, syllables: int) -> str:
    """A made-up word, distinct for every index below 70**syllables (and never a stop word)."""
    parts = []
    for _ in range(syllables):
        index, digit = divmod(index, len(_SYLLABLES))
        parts.append(_SYLLABLES[digit])
    return "".join(parts) + "n"


def _zipf(rng: np.random.Generator, size: int, shape: int | tuple[int, int]) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1)
    return rng.choice(size, shape, p=weights / weights.sum())


def _unit(rng: np.random.Generator, rows: int) -> Vectors:
    return normalise_rows(rng.standard_normal((rows, EMBEDDING_DIM)).astype(np.float32))


@dataclass(frozen=True)
class Synthetic:
    """A generated corpus: passages, their propositions, one entity mention each, and vectors."""

    passages: list[tuple[str, str]]
    propositions: list[list[str]]
    mentions: list[list[int]]
    names: list[str]
    vectors: Vectors | None


def generate(n_propositions: int, seed: int, with_vectors: bool) -> Synthetic:
    """Deterministic for (n, seed), so an interrupted build resumes on the same passages."""
    rng = np.random.default_rng(seed)
    n_passages = max(1, n_propositions // PER_PASSAGE)
    names = [_word(i, 3).capitalize() for i in range(max(1, n_propositions // 4))]
    fillers = [_word(i, 2) for i in range(3000)]
    entity = _zipf(rng, len(names), n_passages * PER_PASSAGE)
    filler = _zipf(rng, len(fillers), (n_passages * PER_PASSAGE, 6))
    statements = [
        f"{names[e]} {' '.join(fillers[f] for f in words)}."
        for e, words in zip(entity, filler, strict=True)
    ]
    propositions = [statements[p : p + PER_PASSAGE] for p in range(0, len(statements), PER_PASSAGE)]
    mentions = [entity[p : p + PER_PASSAGE].tolist() for p in range(0, len(entity), PER_PASSAGE)]
    passages = [(f"Passage {p}", " ".join(props)) for p, props in enumerate(propositions)]
    vectors = None
    if with_vectors:
        # Topic + entity + noise: a passage's propositions share a topic (cosine ≈ 0.5), those of
        # one entity lean together (≈ 0.25), so a query near one proposition has real neighbours.
        topics = _unit(rng, max(1, n_passages // 5))
        entity_dirs = _unit(rng, len(names))
        topic_of = np.repeat(rng.integers(0, len(topics), n_passages), PER_PASSAGE)
        noise = _unit(rng, len(entity))
        vectors = normalise_rows(topics[topic_of] + 0.7 * entity_dirs[entity] + 0.7 * noise)
    return Synthetic(passages, propositions, mentions, names, vectors)


def build(engine: Engine, corpus: int, data: Synthetic, embedder: Embedder | None) -> None:
    """Write passages and their extraction through the normal write path, batch by batch."""
    for start in range(0, len(data.passages), PASSAGES_PER_BATCH):
        rows = add_passages(engine, corpus, data.passages[start : start + PASSAGES_PER_BATCH])
        todo = [(start + i, row.id) for i, row in enumerate(rows) if row.status != "done"]
        if not todo:
            continue
        if embedder is not None:
            flat = embedder.embed([s for index, _ in todo for s in data.propositions[index]])
        else:
            assert data.vectors is not None
            flat = np.concatenate(
                [data.vectors[i * PER_PASSAGE : (i + 1) * PER_PASSAGE] for i, _ in todo]
            )
        items = []
        for n, (index, passage_id) in enumerate(todo):
            positions: dict[int, list[int]] = defaultdict(list)
            for position, entity in enumerate(data.mentions[index]):
                positions[entity].append(position)
            entities = [
                ExtractedEntity(data.names[e], "Thing", tuple(ps)) for e, ps in positions.items()
            ]
            vectors = flat[n * PER_PASSAGE : (n + 1) * PER_PASSAGE]
            items.append(ExtractedPassage(passage_id, data.propositions[index], vectors, entities))
        write_extracted(engine, corpus, items)


def embed_passages(engine: Engine, corpus: int, seed: int, embedder: Embedder | None) -> bool:
    """Give every passage its own embedding, as `grasp index` does; False when all had one.

    GRASP's vote adds a dense prior over passages, so a corpus without passage vectors would time
    a scan that finds nothing instead of the HNSW search a real corpus runs. With random vectors a
    passage's is the mean of its propositions' (the bench's titles are "Passage <index>").
    """
    todo = passages_without_embedding(engine, corpus)
    if not todo:
        return False
    ids = [pid for pid, _ in todo]
    if embedder is not None:
        set_passage_embeddings(engine, ids, embedder.embed([label for _, label in todo]))
        return True
    # The build's own vectors, regenerated from its size and seed (generation is deterministic).
    vectors = generate(proposition_counter(engine, corpus), seed, with_vectors=True).vectors
    assert vectors is not None
    rows = [int(label.split(":", 1)[0].removeprefix("Passage ")) for _, label in todo]
    means = vectors.reshape(-1, PER_PASSAGE, EMBEDDING_DIM)[rows].mean(axis=1)
    set_passage_embeddings(engine, ids, normalise_rows(means.astype(np.float32)))
    return True


def queries_near_propositions(
    engine: Engine, corpus: int, count: int, seed: int, embedder: Embedder | None
) -> list[tuple[Vectors, str]]:
    """Query vectors near sampled propositions, each with three keywords.

    The keywords are the proposition's own entity and two entities drawn per edge, so a popular
    entity comes up as often as it occurs in the corpus (the hard case for BM25).
    """
    rng = np.random.default_rng(seed + 1)
    ids = np.array(proposition_ids(engine, corpus), dtype=np.int64)
    chosen = rng.choice(ids, count, replace=False).tolist()
    ordered = stored_propositions(engine, chosen)
    edge_names = entity_mentions(engine, corpus)
    own = dict(edge_names)
    if embedder is not None:
        vectors = embedder.embed([" ".join(p.text.split()[:4]) for p in ordered])
    else:
        base = np.stack([p.embedding for p in ordered])
        vectors = normalise_rows(base + 0.5 * _unit(rng, len(ordered)))
    picks = rng.integers(0, len(edge_names), (len(ordered), 2))
    return [
        (vectors[i], " ".join([own.get(p.id, ""), *(edge_names[j][1] for j in picks[i])]))
        for i, p in enumerate(ordered)
    ]
