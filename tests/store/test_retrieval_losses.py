"""The loss trace of evals/retrieval_losses.py on the hand graph of test_retrieval.py.

With keywords "painted Talmora" the entities rank Zorvik, Talmora, Quenlar, Copper, Miravel
(test_retrieval's hand values); P3 "Miravel" holds Miravel, Copper and Talmora.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from evals.results import write_jsonl
from evals.retrieval_losses import Loss, LossReport, recorded_runs, report_lines, trace_loss
from store.grasp_retrieval import RetrievalParams
from tests.store.test_retrieval import Graph, Q, build


@pytest.fixture
def graph(engine: Engine) -> Graph:
    return build(engine, "losses")


def test_a_passage_whose_entities_rank_below_the_traversed_ones_is_ranked_out(
    engine: Engine, graph: Graph
) -> None:
    # One entity traversed (Zorvik): P3's best entity, Talmora, ranks 2nd; the vote never
    # reaches P3, and its only score is its hits' (p5 0.6, p6 0.234990 → 0.6), 3rd.
    params = RetrievalParams(k_entities=1, prior_weight=0.0, bridge_weight=0.0, hit_entities=0)
    cause = trace_loss(engine, graph.corpus, "painted Talmora", Q, params, graph.passage[3])
    assert cause == ("ranked out", 2, None, 3)


def test_a_traversed_passage_outranked_in_the_vote_is_out_voted(
    engine: Engine, graph: Graph
) -> None:
    # Zorvik and Talmora traversed: the vote ranks p1 (P1), p2 (P1), p3 (P2), p6 (P3), so P3
    # is 3rd by RankVote alone; lost at top 2, it was out-voted.
    params = RetrievalParams(k_entities=2, prior_weight=0.0, bridge_weight=0.0, hit_entities=0)
    cause = trace_loss(engine, graph.corpus, "painted Talmora", Q, params, graph.passage[3], top=2)
    assert cause == ("out-voted", 2, 3, 3)


def test_the_report_counts_losses_by_cause() -> None:
    losses = [
        Loss("q1", 10, ("ppr",), "ranked out", 20, None, None),
        Loss("q2", 11, ("ppr", "proprag"), "out-voted", 3, 8, 9),
        Loss("q2", 12, ("proprag",), "out-voted", 1, 6, 7),
    ]
    recall = {"grasp": 0.5, "dense": 0.25, "bm25": 0.0, "ppr": 0.75, "proprag": 1.0}
    lines = report_lines("set", LossReport(2, recall, losses), details=True)
    assert "| 0.500 | 0.250 | 0.000 | 0.750 | 1.000 |" in lines
    assert "| 3 | 0 | 1 | 2 | 0 |" in lines
    assert "| q1 | 10 | ppr | ranked out | 20 | — | — |" in lines
    assert "| q2 | 11 | ppr+proprag | out-voted | 3 | 8 | 9 |" in lines


def test_recorded_peer_runs_are_replayed_by_question(tmp_path: Path) -> None:
    write_jsonl(
        tmp_path / "ppr-single.jsonl",
        [
            {"queries": ["q one"], "retrieved": [[7, 3, 9]]},
            {"queries": ["q two"], "retrieved": [[1]]},
        ],
    )
    runs = recorded_runs(tmp_path)
    assert set(runs) == {"ppr"}  # no proprag, dense or bm25 file: those are run afresh
    assert runs["ppr"]("q one", Q, 2) == [7, 3]
    assert runs["ppr"]("q two", Q, 5) == [1]
    assert recorded_runs(None) == {}
