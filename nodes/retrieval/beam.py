"""PropRAG's beam search over proposition paths and the path-derived entity scores (paper §5.3, A.6)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
Embed = Callable[[list[str]], Vectors]


class PropositionLike(Protocol):
    """What the beam search needs of a proposition; the store's detail rows satisfy it."""

    @property
    def id(self) -> int:
        """Proposition id."""
        ...

    @property
    def passage_id(self) -> int:
        """The passage it was extracted from."""
        ...

    @property
    def text(self) -> str:
        """Its sentence, concatenated along a path for the re-rank embedding."""
        ...

    @property
    def embedding(self) -> Vectors:
        """Its unit vector (same embedder as the query)."""
        ...

    @property
    def entity_ids(self) -> Sequence[int]:
        """Entities it mentions; shared or synonym-linked ones connect it to other propositions."""
        ...


@dataclass(frozen=True)
class ScoredPath:
    """A chain of proposition ids and its relevance to the query (higher is better)."""

    propositions: tuple[int, ...]
    score: float


@dataclass(frozen=True)
class BeamResult:
    """The search's first round (single propositions by cosine) and its last round, best first."""

    initial: list[ScoredPath]
    final: list[ScoredPath]


@dataclass(frozen=True)
class BeamSettings:
    """The beam search's knobs (PropRagParams passes its own values)."""

    beam_width: int
    max_path_length: int
    rerank_top: int
    jump_points: int


def _unit(vector: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """L2-normalised float64 copy (zero stays zero)."""
    array = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


def _unit_rows(matrix: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Every row L2-normalised (zero rows stay zero)."""
    array = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    result: npt.NDArray[np.float64] = array / np.where(norms == 0, 1.0, norms)
    return result


class _Links:
    """Which subgraph propositions continue a path from a given one (shared or synonymous entity)."""

    def __init__(
        self, props: Sequence[PropositionLike], synonyms: Mapping[int, frozenset[int]]
    ) -> None:
        self._entities = [frozenset(p.entity_ids) for p in props]
        self._by_entity: dict[int, list[int]] = {}
        for index, entities in enumerate(self._entities):
            for entity in entities:
                self._by_entity.setdefault(entity, []).append(index)
        self._synonyms = synonyms
        self._cache: dict[int, list[int]] = {}

    def __call__(self, index: int) -> list[int]:
        """Indices linked to proposition ``index`` (itself excluded), in ascending order."""
        cached = self._cache.get(index)
        if cached is not None:
            return cached
        bridges = set(self._entities[index])
        for entity in self._entities[index]:
            bridges |= self._synonyms.get(entity, frozenset())
        linked: set[int] = set()
        for entity in bridges:
            linked.update(self._by_entity.get(entity, ()))
        linked.discard(index)
        result = sorted(linked)
        self._cache[index] = result
        return result


def beam_search(
    query: npt.ArrayLike,
    props: Sequence[PropositionLike],
    synonyms: Mapping[int, frozenset[int]],
    embed: Embed,
    settings: BeamSettings,
) -> BeamResult:
    """Find query-relevant proposition chains: the first round's and the last round's ranked paths.

    Round 1: every proposition is a one-step path scored by cosine to the query; the best
    ``beam_width`` form the beam and the best ``jump_points`` are the jump points. Each later
    round extends every beam path's last proposition with the propositions linked to it plus the
    jump points (never one already on the path), scores candidates by the cosine of the mean of
    their vectors, re-scores the best ``rerank_top`` by embedding the concatenated texts (one
    ``embed`` call per round), and keeps the best ``beam_width``. It stops at
    ``max_path_length`` or when no path can grow. Candidates made of the same propositions in
    another order are kept once (the first generated, from the better beam path), so orderings
    of one set cannot crowd the beam. Ties keep generation order.
    """
    if not props:
        return BeamResult(initial=[], final=[])
    q = _unit(query)
    vectors = _unit_rows(np.stack([np.asarray(p.embedding) for p in props]))
    similarity = vectors @ q
    ids = np.fromiter((p.id for p in props), dtype=np.int64, count=len(props))
    order = np.lexsort((ids, -similarity)).tolist()

    ranked: list[tuple[tuple[int, ...], float]] = [((i,), float(similarity[i])) for i in order]
    beam = ranked[: settings.beam_width]
    jumps = order[: settings.jump_points]
    links = _Links(props, synonyms)

    for _ in range(2, settings.max_path_length + 1):
        parents: list[int] = []
        paths: list[tuple[int, ...]] = []
        seen: set[frozenset[int]] = set()
        for parent, (path, _score) in enumerate(beam):
            on_path = set(path)
            for nxt in (*links(path[-1]), *jumps):
                key = frozenset((*path, nxt))
                if nxt in on_path or key in seen:
                    continue
                seen.add(key)
                parents.append(parent)
                paths.append((*path, nxt))
        if not paths:
            break

        # Cheap score for all candidates: cosine of the (re-normalised) mean proposition vector,
        # i.e. of the sum, built from each parent's sum plus the new proposition's vector.
        parent_sums = np.stack([vectors[list(path)].sum(axis=0) for path, _ in beam])
        sums = parent_sums[parents] + vectors[[p[-1] for p in paths]]
        norms = np.linalg.norm(sums, axis=1)
        cheap = (sums @ q) / np.where(norms == 0, 1.0, norms)
        shortlist = np.argsort(-cheap, kind="stable")[: settings.rerank_top].tolist()

        texts = [" ".join(props[i].text for i in paths[c]) for c in shortlist]
        exact = _unit_rows(embed(texts)) @ q
        rescored = np.argsort(-exact, kind="stable").tolist()
        ranked = [(paths[shortlist[r]], float(exact[r])) for r in rescored]
        beam = ranked[: settings.beam_width]

    initial = [ScoredPath((props[i].id,), float(similarity[i])) for i in order]
    final = [ScoredPath(tuple(props[i].id for i in path), score) for path, score in ranked]
    return BeamResult(initial=initial, final=final)


def path_entity_scores(
    paths: Sequence[ScoredPath],
    props: Mapping[int, PropositionLike],
    synonyms: Mapping[int, frozenset[int]],
    synonym_boost: float,
) -> dict[int, float]:
    """Entity relevance from the best paths (paper A.6).

    Every proposition on a path inherits the path's score; an entity sums the scores of the
    propositions it appears in (each path counted separately). Between consecutive propositions,
    an entity of the later one that the earlier one lacks but has a synonym of (the entity the
    synonym link reaches) gets ``synonym_boost`` × the path score on top; entities shared exactly
    are already counted in both propositions. Entities of a path's first proposition get no
    boost: the exploration seeds cover them.
    """
    scores: dict[int, float] = {}
    for path in paths:
        previous: frozenset[int] = frozenset()
        for step, prop_id in enumerate(path.propositions):
            entities = frozenset(props[prop_id].entity_ids)
            for entity in entities:
                scores[entity] = scores.get(entity, 0.0) + path.score
                if (
                    step > 0
                    and entity not in previous
                    and synonyms.get(entity, frozenset()) & previous
                ):
                    scores[entity] += synonym_boost * path.score
            previous = entities
    return scores
