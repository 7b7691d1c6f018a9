"""PropRAG on a hand-built corpus: the beam search finds the bridge, the final PPR ranks it up."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from nodes.retrieval.beam import BeamSettings, ScoredPath, beam_search, path_entity_scores
from nodes.retrieval.entity_graph import EntityGraph, build_entity_graph
from nodes.retrieval.proprag import PropositionDetail, PropRagParams, proprag_retrieve

# A two-hop question: "In which city is the basilica named after the saint Mantua Cathedral is
# dedicated to?" Vectors live in a small space of named aspects; the query covers the first four.
ASPECTS = ["mantua", "saint", "basilica", "city", "vatican", "rome", "milan", "bishop"]


def _vec(**weights: float) -> np.ndarray:
    vector = np.zeros(len(ASPECTS))
    for name, weight in weights.items():
        vector[ASPECTS.index(name)] = weight
    return vector


# id: (passage, text, entities, raw aspect vector). Entities: 1 Mantua Cathedral, 2 Saint Peter,
# 3 Bishop of Mantua, 4 Vatican City, 11 St. Peter's Basilica, 5 Milan Cathedral, 6 Saint Ambrose,
# 7 Milan, 8 Rome, 9 Saint John Lateran. Passage 20 (the bridge) is dense-retrieval's last.
PROPS: dict[int, tuple[int, str, tuple[int, ...], np.ndarray]] = {
    100: (10, "Mantua Cathedral is dedicated to Saint Peter.", (1, 2), _vec(mantua=1, saint=1)),
    101: (
        10,
        "Mantua Cathedral is the seat of the Bishop of Mantua.",
        (1, 3),
        _vec(mantua=1, bishop=1),
    ),
    200: (
        20,
        "St. Peter's Basilica stands in Vatican City.",
        (2, 4, 11),
        _vec(basilica=1, city=1, vatican=2),
    ),
    400: (
        40,
        "Milan Cathedral is dedicated to Saint Ambrose.",
        (5, 6),
        _vec(mantua=1, saint=1, milan=1.2),
    ),
    401: (40, "Milan Cathedral is in Milan.", (5, 7), _vec(mantua=1, milan=0.8)),
    402: (40, "Saint Ambrose was bishop of Milan.", (7,), _vec(mantua=1, saint=1, milan=1.5)),
    500: (
        50,
        "Rome's cathedral is dedicated to Saint John.",
        (8, 9),
        _vec(mantua=1, saint=1, rome=1.4),
    ),
    501: (50, "Saint John Lateran is in Rome.", (9, 8), _vec(saint=1, rome=0.8)),
}
QUERY = _vec(mantua=1, saint=1, basilica=1, city=1) / 2.0


def _unit(vector: np.ndarray) -> np.ndarray:
    unit: np.ndarray = vector / np.linalg.norm(vector)
    return unit


class PathEmbedder:
    """Embeds a text as the normalised sum of the aspect vectors of the propositions it contains."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        rows = [
            sum((raw for _, t, _, raw in PROPS.values() if t in text), np.zeros(len(ASPECTS)))
            for text in texts
        ]
        return np.array([_unit(r) for r in rows], dtype=np.float32)


DETAILS = {
    pid: PropositionDetail(pid, passage, text, _unit(raw).astype(np.float32), entities)
    for pid, (passage, text, entities, raw) in PROPS.items()
}


def _graph() -> EntityGraph:
    cooccurrence = sorted(
        {(a, b, 1) for _, _, ents, _ in PROPS.values() for a in ents for b in ents if a < b}
    )
    containment = sorted({(e, passage, 1) for passage, _, ents, _ in PROPS.values() for e in ents})
    return build_entity_graph(list(range(1, 12)), [10, 20, 40, 50], cooccurrence, [], containment)


def _cosines() -> list[tuple[int, float]]:
    scores = [(pid, float(d.embedding @ QUERY)) for pid, d in DETAILS.items()]
    return sorted(scores, key=lambda item: (-item[1], item[0]))


def _fetch(passages: Sequence[int]) -> dict[int, PropositionDetail]:
    return {pid: d for pid, d in DETAILS.items() if d.passage_id in passages}


def test_bridge_is_found_through_the_shared_entity_and_ranked_up() -> None:
    ranked_props = _cosines()
    # The bridge proposition is neither in the initial beam (B = 4) nor a jump point (3).
    assert 200 not in [pid for pid, _ in ranked_props[:4]]
    prior = {
        passage: max(s for pid, s in ranked_props if DETAILS[pid].passage_id == passage)
        for passage in (10, 20, 40, 50)
    }
    assert min(prior, key=lambda p: prior[p]) == 20  # dense retrieval ranks the bridge last

    embed = PathEmbedder()
    result = proprag_retrieve(
        _graph(),
        QUERY.astype(np.float32),
        ranked_props,
        {pid: d.entity_ids for pid, d in DETAILS.items()},
        _fetch,
        embed,
        prior,
    )

    # Round 2 joins 100 → 200 through Saint Peter (entity 2); round 3 can only add a jump point
    # (nothing else links to 200), and the best one is Milan's cathedral, 400.
    best = result.paths[0]
    assert best.propositions == (100, 200, 400)
    expected = float(_unit(PROPS[100][3] + PROPS[200][3] + PROPS[400][3]) @ _unit(QUERY))
    assert best.score == pytest.approx(expected, abs=1e-6)
    assert expected == pytest.approx(6 / (2 * np.sqrt(15.44)), abs=1e-12)
    assert [s.score for s in result.paths] == sorted((s.score for s in result.paths), reverse=True)

    assert set(result.subgraph) == {10, 20, 40, 50}
    assert [pid for pid, _ in result.passages[:2]] == [10, 20]
    assert embed.calls and all(n <= PropRagParams().rerank_top for n in embed.calls)
    assert len(embed.calls) == 2  # one batched call per expansion round (L_max − 1)


def test_beam_search_rounds_and_limits() -> None:
    props = list(DETAILS.values())
    embed = PathEmbedder()
    q = QUERY.astype(np.float32)
    single = beam_search(q, props, {}, embed, BeamSettings(4, 1, 40, 3))
    assert embed.calls == [] and single.final == single.initial
    assert single.initial[0].propositions == (100,)
    assert single.initial[0].score == pytest.approx(float(DETAILS[100].embedding @ _unit(QUERY)))

    two = beam_search(q, props, {}, embed, BeamSettings(4, 2, 5, 3))
    assert embed.calls == [5]  # M caps the re-ranked candidates
    assert two.final[0].propositions == (100, 200)
    assert all(len(set(p.propositions)) == len(p.propositions) for p in two.final)


def test_synonym_link_lets_the_beam_cross_and_boosts_the_reached_entity() -> None:
    # 100 mentions entity 2 ("Saint Peter"); 200 mentions 12 ("St. Peter"), a synonym of 2.
    props = {
        100: PropositionDetail(100, 10, "a", _unit(_vec(mantua=1)).astype(np.float32), (1, 2)),
        200: PropositionDetail(200, 20, "b", _unit(_vec(basilica=1)).astype(np.float32), (12, 4)),
    }
    synonyms = {2: frozenset({12}), 12: frozenset({2})}

    def embed(texts: list[str]) -> np.ndarray:
        return np.array([_unit(_vec(mantua=1, basilica=1))] * len(texts), dtype=np.float32)

    linked = beam_search(
        _vec(mantua=1, basilica=0.5),
        list(props.values()),
        synonyms,
        embed,
        BeamSettings(1, 2, 40, 0),
    )
    assert linked.final[0].propositions == (100, 200)
    unlinked = beam_search(
        _vec(mantua=1, basilica=0.5), list(props.values()), {}, embed, BeamSettings(1, 2, 40, 0)
    )
    assert unlinked.final == unlinked.initial  # no link and no jump point: nothing expands

    scores = path_entity_scores([ScoredPath((100, 200), 0.5)], props, synonyms, synonym_boost=1.0)
    # Every entity gets the path score once; 12, reached through the synonym link, once more.
    assert scores == pytest.approx({1: 0.5, 2: 0.5, 12: 1.0, 4: 0.5})


def test_params_and_empty_inputs() -> None:
    assert PropRagParams().p_initial == 4
    assert PropRagParams(beam_width=2).p_initial == 2
    assert PropRagParams(initial_seed_propositions=7).p_initial == 7
    with pytest.raises(ValueError):
        PropRagParams(explore_damping=1.0)
    result = proprag_retrieve(
        _graph(), QUERY, [(999, 1.0)], {999: (77,)}, _fetch, PathEmbedder(), {}
    )
    assert result.passages == () and result.paths == ()
