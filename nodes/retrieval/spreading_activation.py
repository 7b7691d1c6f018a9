"""SA-RAG's spreading activation (paper 003 §5.4–5.5, Algorithm 1) over our entities and units.

Mapping onto our store: SA-RAG's entities are our entities; an entity's "description" score is
the best cosine between the query and the retrieval units (propositions) that mention it; a
``related_to`` relation is a co-occurrence edge (two entities sharing a unit) whose text is that
unit, weighted by the query's cosine to it (the caller picks the most query-similar unit when a
pair shares several); "documents" are our passages, linked to the entities
they contain.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

RelationWeights = Mapping[tuple[int, int], tuple[float, int]]


@dataclass(frozen=True)
class SpreadingParams:
    """SA-RAG's knobs; defaults are the paper's MuSiQue values (2Wiki: seed_k=10, hops=3)."""

    seed_k: int = 3  # k: seed entities, by description cosine
    hops: int = 4  # n: neighbourhood radius around the seeds
    c: float = 0.4  # edge-weight rescaling w' = (w − c) / (1 − c), against over-activation
    tau_a: float = 0.5  # an entity is activated when its activation exceeds this
    tau_d: float = 0.45  # a passage is kept when its cosine to the query reaches this
    tau_r: float = 0.5  # a relation is kept when its rescaled weight exceeds this

    def __post_init__(self) -> None:
        if self.seed_k < 1 or self.hops < 0:
            raise ValueError("seed_k must be ≥ 1 and hops ≥ 0")
        if not 0.0 <= self.c < 1.0:
            raise ValueError("c must be in [0, 1)")


@dataclass(frozen=True)
class SpreadingResult:
    """What one spreading-activation retrieval found."""

    seeds: tuple[int, ...]  # seed entity ids, best first
    activated: Mapping[int, float]  # entity id → activation, only those above tau_a
    passages: tuple[tuple[int, float], ...]  # (passage id, cosine) best first, all ≥ tau_d
    relations: tuple[tuple[int, float], ...]  # (unit id, rescaled weight) best first, all > tau_r
    neighbourhood_size: int  # entities the activation could reach (for traces)


def neighbour_map(pairs: Iterable[tuple[int, int, float]]) -> dict[int, frozenset[int]]:
    """Entity → co-occurring entities from (a, b, shared units) rows; built once per corpus."""
    neighbours: dict[int, set[int]] = {}
    for a, b, _count in pairs:
        if a != b:
            neighbours.setdefault(a, set()).add(b)
            neighbours.setdefault(b, set()).add(a)
    return {entity: frozenset(others) for entity, others in neighbours.items()}


def select_seeds(entity_similarity: Mapping[int, float], k: int) -> list[int]:
    """The k entities most similar to the query, ties by the smaller id."""
    ranked = sorted(entity_similarity.items(), key=lambda item: (-item[1], item[0]))
    return [entity for entity, _ in ranked[:k]]


def entity_neighbourhood(
    adjacency: Mapping[int, Collection[int]], seeds: Iterable[int], hops: int
) -> set[int]:
    """Entities within ``hops`` co-occurrence steps of any seed (the seeds included)."""
    reached = set(seeds)
    frontier = list(reached)
    for _ in range(hops):
        layer = {n for node in frontier for n in adjacency.get(node, ()) if n not in reached}
        if not layer:
            break
        reached |= layer
        frontier = list(layer)
    return reached


def rescale(weight: float, c: float) -> float:
    """SA-RAG's w' = (w − c)/(1 − c), clipped at 0.

    The paper states no clip; without it a relation less similar than ``c`` would subtract
    activation, and the authors' code clips at 0 too.
    """
    return max(0.0, (weight - c) / (1.0 - c))


def spread_activation(
    arcs: Mapping[int, Sequence[tuple[int, float]]], seeds: Sequence[int]
) -> dict[int, float]:
    """Activation of every node after SA-RAG's Algorithm 1, run literally.

    Every node starts at 0. Seeds are processed in order; each seed's pass sets it to 1 and runs
    its own breadth-first traversal (its own visited set) over the whole arc set. When a node is
    taken from the queue for the first time in that pass, every arc out of it, to a visited node
    or not, adds ``weight × activation(node)`` to the target, capped at 1, and unvisited targets
    are queued. So each directed arc fires at most once per seed pass (an undirected edge at most
    twice, once each way), activations accumulate across passes, and a later seed can already be
    partly active during an earlier seed's pass, as in the pseudo-code.
    """
    activation: dict[int, float] = dict.fromkeys(arcs, 0.0)
    for seed in seeds:
        activation[seed] = 1.0
        visited: set[int] = set()
        queue = deque([seed])
        while queue:
            node = queue.popleft()
            if node in visited:
                continue
            visited.add(node)
            source = activation.get(node, 0.0)
            for target, weight in arcs.get(node, ()):
                activation[target] = min(1.0, activation.get(target, 0.0) + weight * source)
                if target not in visited:
                    queue.append(target)
    return activation


def _pair_weights(weights: RelationWeights) -> dict[tuple[int, int], tuple[float, int]]:
    """Relation weights keyed by (smaller id, larger id), the more query-similar unit winning."""
    pairs: dict[tuple[int, int], tuple[float, int]] = {}
    for (a, b), (cosine, unit) in weights.items():
        key = (min(a, b), max(a, b))
        if key not in pairs or (cosine, -unit) > (pairs[key][0], -pairs[key][1]):
            pairs[key] = (cosine, unit)
    return pairs


def spreading_activation_retrieve(
    entity_similarity: Mapping[int, float],
    cooccurrence: Mapping[int, Collection[int]],
    relation_weights: RelationWeights | Callable[[frozenset[int]], RelationWeights],
    passage_similarity: Mapping[int, float] | Callable[[frozenset[int]], Mapping[int, float]],
    entity_passages: Mapping[int, Collection[int]]
    | Callable[[frozenset[int]], Mapping[int, Collection[int]]],
    params: SpreadingParams | None = None,
) -> SpreadingResult:
    """Seeds → n-hop neighbourhood → spreading activation → passages and relations to read.

    ``entity_similarity``: entity → its description cosine to the query. ``cooccurrence``:
    entity → co-occurring entities (used to find the neighbourhood). ``relation_weights``: (a, b) →
    (query cosine of the shared unit, unit id), either order; the arcs activation spreads over
    are the weighted pairs with both ends in the neighbourhood (an unweighted pair has no arc). The last three inputs may
    instead be callbacks that compute only what is needed: relation weights for the
    neighbourhood's entities, containment for the activated entities, cosines for their passages.
    Seeds are the top ``seed_k`` entities (the paper takes the top-k descriptions, then their
    entities; ours has one description score per entity).
    """
    p = params or SpreadingParams()
    seeds = select_seeds(entity_similarity, p.seed_k)
    region = entity_neighbourhood(cooccurrence, seeds, p.hops)
    frozen_region = frozenset(region)
    raw = relation_weights(frozen_region) if callable(relation_weights) else relation_weights
    pairs = {k: v for k, v in _pair_weights(raw).items() if k[0] in region and k[1] in region}

    rescaled = {pair: (rescale(cosine, p.c), unit) for pair, (cosine, unit) in pairs.items()}
    arcs: dict[int, list[tuple[int, float]]] = {node: [] for node in region}
    for (a, b), (weight, _unit) in rescaled.items():
        if a != b:
            arcs[a].append((b, weight))
            arcs[b].append((a, weight))
    for targets in arcs.values():
        targets.sort()  # a fixed arc order makes the capped sums reproducible

    activation = spread_activation(arcs, seeds)
    activated = {e: a for e, a in sorted(activation.items()) if a > p.tau_a}
    chosen = frozenset(activated)

    containment = entity_passages(chosen) if callable(entity_passages) else entity_passages
    candidates = frozenset(pid for e in chosen for pid in containment.get(e, ()))
    cosines = passage_similarity(candidates) if callable(passage_similarity) else passage_similarity
    kept = [(pid, float(cosines[pid])) for pid in candidates if pid in cosines]
    passages = sorted(
        ((pid, s) for pid, s in kept if s >= p.tau_d), key=lambda item: (-item[1], item[0])
    )

    best_by_unit: dict[int, float] = {}
    for (a, b), (weight, unit) in rescaled.items():
        if a in chosen and b in chosen and weight > p.tau_r:
            best_by_unit[unit] = max(weight, best_by_unit.get(unit, 0.0))
    relations = sorted(best_by_unit.items(), key=lambda item: (-item[1], item[0]))

    return SpreadingResult(
        seeds=tuple(seeds),
        activated=activated,
        passages=tuple(passages),
        relations=tuple(relations),
        neighbourhood_size=len(region),
    )
