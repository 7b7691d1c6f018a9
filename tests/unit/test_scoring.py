"""The scoring formulas of spec §2.2 on hand-built inputs; every expected value is worked out by hand."""

import math

import pytest

from store.scoring import (
    EntityLink,
    entity_scores,
    fuse_passage_scores,
    hit_passages,
    hybrid_scores,
    rank_vote,
    top_k,
    traversed_entities,
)


def test_hybrid_adds_max_normalised_bm25_to_the_cosine() -> None:
    cosine = {1: 0.8, 2: 0.5, 3: 0.2}
    bm25 = {2: 4.0, 3: 2.0}
    # max bm25 = 4.0, λ = 0.3
    # p1: 0.8 + 0.3 · 0/4   = 0.8   (no lexical match)
    # p2: 0.5 + 0.3 · 4/4   = 0.8
    # p3: 0.2 + 0.3 · 2/4   = 0.35
    assert hybrid_scores(cosine, bm25, 0.3) == pytest.approx({1: 0.8, 2: 0.8, 3: 0.35})


def test_hybrid_with_all_zero_or_no_bm25_is_the_cosine() -> None:
    cosine = {1: 0.8, 2: -0.1}
    # max bm25 = 0 → the lexical term is 0 for everyone (no division by zero)
    assert hybrid_scores(cosine, {1: 0.0, 2: 0.0}, 0.3) == pytest.approx(cosine)
    assert hybrid_scores(cosine, {}, 0.3) == pytest.approx(cosine)


def test_hybrid_with_zero_weight_ignores_bm25() -> None:
    # λ = 0: 0.4 + 0 · 7/7 = 0.4
    assert hybrid_scores({1: 0.4}, {1: 7.0}, 0.0) == pytest.approx({1: 0.4})


def link(entity: int, degree: int, *propositions: int) -> EntityLink:
    return EntityLink(entity, f"E{entity}", "Thing", degree, propositions)


def test_entity_score_is_damped_by_the_degree() -> None:
    scores = {1: 0.9, 2: 0.5, 3: 0.6}
    links = [link(10, 4, 1, 2), link(11, 1, 3), link(12, 9, 3)]
    # e10: (0.9 + 0.5) / 4^0.5 = 1.4 / 2 = 0.7
    # e11: 0.6 / 1^0.5 = 0.6
    # e12: 0.6 / 9^0.5 = 0.6 / 3 = 0.2   (a hub linked to the same proposition counts less)
    assert entity_scores(links, scores, 0.5) == pytest.approx({10: 0.7, 11: 0.6, 12: 0.2})


def test_entity_score_damping_exponents_and_edge_cases() -> None:
    scores = {1: 0.9, 2: 0.5}
    # α = 0: plain sum 1.4; α = 1: 1.4 / 4 = 0.35
    assert entity_scores([link(10, 4, 1, 2)], scores, 0.0) == pytest.approx({10: 1.4})
    assert entity_scores([link(10, 4, 1, 2)], scores, 1.0) == pytest.approx({10: 0.35})
    # degree 0 is treated as 1 (0.9 / 1); an unscored proposition adds 0 (0.5 + 0 over √1)
    assert entity_scores([link(10, 0, 1)], scores, 0.5) == pytest.approx({10: 0.9})
    assert entity_scores([link(11, 1, 2, 99)], scores, 0.5) == pytest.approx({11: 0.5})


def test_rank_vote_sums_reciprocal_ranks_per_passage() -> None:
    # (proposition, passage), best first: ranks 1, 2, 3, 4
    ranked = [(10, 1), (11, 2), (12, 1), (13, 3)]
    # w = 1, c = 0: d1 = 1/1 + 1/3 = 4/3 (two propositions of the same passage); d2 = 1/2; d3 = 1/4
    assert rank_vote(ranked) == pytest.approx({1: 4 / 3, 2: 0.5, 3: 0.25})
    # c = 1: d1 = 1/2 + 1/4 = 0.75; d2 = 1/3; d3 = 1/5
    assert rank_vote(ranked, weight=1.0, offset=1.0) == pytest.approx({1: 0.75, 2: 1 / 3, 3: 0.2})
    # w = 2 doubles every vote
    assert rank_vote(ranked, weight=2.0) == pytest.approx({1: 8 / 3, 2: 1.0, 3: 0.5})


def test_uniform_vote_counts_propositions() -> None:
    ranked = [(10, 1), (11, 2), (12, 1), (13, 3)]
    # every proposition votes w = 1 whatever its rank: d1 = 2, d2 = 1, d3 = 1
    assert rank_vote(ranked, uniform=True) == {1: 2.0, 2: 1.0, 3: 1.0}
    assert rank_vote([]) == {}


def test_rank_vote_over_ranks_one_to_n_is_the_harmonic_number() -> None:
    n = 7
    # one passage holding all n propositions: Σ_{r=1..n} 1/r = H_7 = 363/140
    assert rank_vote([(p, 1) for p in range(n)]) == pytest.approx({1: 363 / 140})
    assert math.isclose(sum(1 / r for r in range(1, n + 1)), 363 / 140)


def test_top_k_breaks_ties_by_smaller_id() -> None:
    scores = {5: 1.0, 3: 1.0, 9: 2.0, 1: 0.5}
    # 9 (2.0) first; 3 and 5 tie at 1.0 → 3 before 5; 1 (0.5) is cut at k = 3
    assert top_k(scores, 3) == [(9, 2.0), (3, 1.0), (5, 1.0)]
    assert top_k(scores, 10) == [(9, 2.0), (3, 1.0), (5, 1.0), (1, 0.5)]
    assert top_k(scores, 0) == []


def test_hit_passages_keep_each_passages_best_hit() -> None:
    assert hit_passages([(1, 0.9), (2, 1.2), (3, 0.4)], {1: 10, 2: 10, 3: 11}) == {10: 1.2, 11: 0.4}


def test_fused_scores_scale_the_vote_then_add_hits_and_prior() -> None:
    votes = {10: 2.0, 11: 1.0}
    fused = fuse_passage_scores(votes, [(1.0, {11: 0.8, 12: 0.6}), (0.5, {10: 0.5, 13: 0.3})])
    # 10: 2/2 + 0.5·0.5 = 1.25; 11: 1/2 + 0.8 = 1.3; 12: 0.6; 13: 0.5·0.3 = 0.15
    assert fused == pytest.approx({10: 1.25, 11: 1.3, 12: 0.6, 13: 0.15})
    assert fuse_passage_scores({}, [(1.0, {}), (1.0, {})]) == {}
    # a term of weight 0 adds nothing, not even its passages at 0
    assert fuse_passage_scores({10: 2.0}, [(0.0, {11: 5.0})]) == {10: 1.0}


def test_traversed_entities_add_the_best_hits_entities_after_the_top_k() -> None:
    # hits best first: u1, u2, u3; entity 7 (a hub named in u1) scores below the top 2
    links = [
        EntityLink(5, "A", "T", 1, (1,)),
        EntityLink(6, "B", "T", 1, (2,)),
        EntityLink(7, "Hub", "T", 40, (1,)),
        EntityLink(8, "C", "T", 2, (2, 3)),
        EntityLink(9, "D", "T", 3, (3,)),
    ]
    scores = {5: 1.0, 6: 0.9, 7: 0.16, 8: 0.7, 9: 0.3}
    hits = [(1, 1.0), (2, 0.9), (3, 0.5)]
    assert traversed_entities(scores, links, hits, k=2, hit_units=0) == [(5, 1.0), (6, 0.9)]
    # the best hit u1 adds the hub 7
    assert traversed_entities(scores, links, hits, k=2, hit_units=1) == [
        (5, 1.0),
        (6, 0.9),
        (7, 0.16),
    ]
    # u1 and u2 add 8 and 7, best score first; 9 (only in u3) stays out
    assert traversed_entities(scores, links, hits, k=2, hit_units=2) == [
        (5, 1.0),
        (6, 0.9),
        (8, 0.7),
        (7, 0.16),
    ]
    # an entity already in the top k is never listed twice
    assert traversed_entities(scores, links, hits, k=5, hit_units=3) == top_k(scores, 5)
