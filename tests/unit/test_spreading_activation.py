"""SA-RAG's spreading activation on hand-built graphs, with activations worked out by hand."""

from __future__ import annotations

import pytest

from nodes.retrieval.spreading_activation import (
    SpreadingParams,
    entity_neighbourhood,
    neighbour_map,
    rescale,
    spread_activation,
    spreading_activation_retrieve,
)

# Seeds 1 and 7 (top-2 description cosines). Co-occurrence: 1–2–3 and 7–4–5–6.
SIMILARITY = {1: 0.9, 7: 0.8, 2: 0.5, 3: 0.4, 4: 0.3, 5: 0.2, 6: 0.1}
COOCCURRENCE = {1: [2], 2: [1, 3], 3: [2], 7: [4], 4: [7, 5], 5: [4, 6], 6: [5]}
# (a, b) → (cosine of the query to the shared unit, unit id)
RELATIONS = {
    (1, 2): (0.85, 12),  # w' = 0.75
    (3, 2): (0.784, 23),  # w' = 0.64 (given in the other order on purpose)
    (7, 4): (0.7, 74),  # w' = 0.5
    (4, 5): (0.7, 45),  # w' = 0.5
    (5, 6): (0.99, 56),  # 6 is 3 hops from 7: outside the neighbourhood, never used
}
CONTAINMENT = {1: [10], 2: [10, 20], 3: [30], 4: [40, 41], 5: [50], 7: []}
PASSAGES = {10: 0.7, 20: 0.45, 30: 0.9, 40: 0.44, 41: 0.6, 50: 0.8}
PARAMS = SpreadingParams(seed_k=2, hops=2)


def w(cosine: float) -> float:
    return (cosine - 0.4) / (1 - 0.4)


def test_activations_passages_and_relations_by_hand() -> None:
    result = spreading_activation_retrieve(
        SIMILARITY, COOCCURRENCE, RELATIONS, PASSAGES, CONTAINMENT, PARAMS
    )
    assert result.seeds == (1, 7)
    assert result.neighbourhood_size == 6  # {1, 2, 3, 7, 4, 5}

    # Seed 1's pass: pop 1 → a2 = w12; pop 2 → a1 stays 1 (cap), a3 = w23·a2;
    # pop 3 → a2 = min(1, a2 + w23·a3) = 1. Seed 7's pass: pop 7 → a4 = w74;
    # pop 4 → a5 = w45·a4, a7 stays 1; pop 5 → a4 = a4 + w45·a5. The two parts never touch.
    a2_first = w(0.85)
    a3 = w(0.784) * a2_first
    a4_first = w(0.7)
    a5 = w(0.7) * a4_first
    a4 = a4_first + w(0.7) * a5
    assert a3 == pytest.approx(0.48, abs=1e-12)  # just below τ_a = 0.5: not activated
    assert a4 == pytest.approx(0.625, abs=1e-12)
    assert set(result.activated) == {1, 2, 4, 7}
    assert result.activated[1] == 1.0 and result.activated[2] == 1.0 and result.activated[7] == 1.0
    assert result.activated[4] == pytest.approx(a4, abs=1e-12)
    assert 3 not in result.activated and 5 not in result.activated and a5 == pytest.approx(0.25)

    # Passages of activated entities with cosine ≥ τ_d = 0.45: 40 (0.44) is dropped; 20 sits on
    # the threshold and stays; 30 and 50 belong only to inactive entities.
    assert result.passages == ((10, 0.7), (41, 0.6), (20, 0.45))
    # Relations between activated entities with w' > τ_r = 0.5: 7–4 (exactly 0.5) is not kept.
    assert len(result.relations) == 1
    unit, weight = result.relations[0]
    assert unit == 12 and weight == pytest.approx(w(0.85), abs=1e-12)


def test_callbacks_receive_only_what_they_must_compute() -> None:
    asked: dict[str, frozenset[int]] = {}

    def relations(region: frozenset[int]) -> dict[tuple[int, int], tuple[float, int]]:
        asked["region"] = region
        return RELATIONS

    def containment(entities: frozenset[int]) -> dict[int, list[int]]:
        asked["entities"] = entities
        return {e: CONTAINMENT[e] for e in entities}

    def cosines(passages: frozenset[int]) -> dict[int, float]:
        asked["passages"] = passages
        return {p: PASSAGES[p] for p in passages}

    result = spreading_activation_retrieve(
        SIMILARITY, COOCCURRENCE, relations, cosines, containment, PARAMS
    )
    assert asked == {
        "region": frozenset({1, 2, 3, 4, 5, 7}),
        "entities": frozenset({1, 2, 4, 7}),
        "passages": frozenset({10, 20, 40, 41}),
    }
    assert [p for p, _ in result.passages] == [10, 41, 20]


def test_algorithm_one_accumulates_across_seed_passes() -> None:
    arcs = {1: [(3, 0.5)], 2: [(3, 0.25)], 3: [(1, 0.5), (2, 0.25)]}
    # One seed: pop 1 → a3 = ½; pop 3 → a1 capped at 1, a2 = ¼·½; pop 2 → a3 = ½ + ¼·⅛.
    assert spread_activation(arcs, [1]) == {1: 1.0, 2: 0.125, 3: 0.53125}
    # Seed 2's pass starts from those values: a3 = 0.53125 + ¼ = 0.78125, then seed 1's arc
    # fires again from 3's side (a1 stays capped) and pushes a3 to min(1, 0.78125 + ½) = 1.
    assert spread_activation(arcs, [1, 2]) == {1: 1.0, 2: 1.0, 3: 1.0}


def test_weights_below_c_are_clipped_not_negative() -> None:
    assert rescale(0.1, 0.4) == 0.0
    assert rescale(1.0, 0.4) == 1.0
    result = spreading_activation_retrieve(
        {1: 1.0}, {1: [2]}, {(1, 2): (0.1, 5)}, {}, {}, SpreadingParams(seed_k=1, hops=1)
    )
    assert result.activated == {1: 1.0} and result.relations == ()
    assert spread_activation({1: [(2, rescale(0.1, 0.4))], 2: [(1, 0.0)]}, [1])[2] == 0.0


def test_neighbourhood_counts_hops_from_every_seed() -> None:
    assert entity_neighbourhood(COOCCURRENCE, [1], 0) == {1}
    assert entity_neighbourhood(COOCCURRENCE, [1, 7], 1) == {1, 2, 7, 4}
    assert entity_neighbourhood(COOCCURRENCE, [7], 3) == {7, 4, 5, 6}
    assert entity_neighbourhood(COOCCURRENCE, [99], 4) == {99}  # an isolated seed stays


def test_neighbour_map_is_symmetric() -> None:
    assert neighbour_map([(1, 2, 3), (2, 3, 1), (4, 4, 1)]) == {
        1: frozenset({2}),
        2: frozenset({1, 3}),
        3: frozenset({2}),
    }
