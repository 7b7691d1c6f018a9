"""Span arithmetic behind `grasp bench concurrency`: unions, intersections, per-hop overlap."""

import pytest

from evals.bench.concurrency_spans import (
    HopSpans,
    difference,
    intersection,
    length,
    merged,
    overlap,
)


def test_merged_joins_touching_and_overlapping_spans() -> None:
    assert merged([(5.0, 6.0), (0.0, 2.0), (1.0, 3.0), (3.0, 4.0)]) == [(0.0, 4.0), (5.0, 6.0)]
    assert length([(0.0, 2.0), (1.0, 3.0), (10.0, 10.5)]) == 3.5


def test_intersection_and_difference() -> None:
    a = [(0.0, 4.0), (6.0, 8.0)]
    b = [(3.0, 7.0)]
    assert intersection(a, b) == [(3.0, 4.0), (6.0, 7.0)]
    assert difference(a, b) == [(0.0, 3.0), (7.0, 8.0)]
    assert difference([(0.0, 1.0)], [(0.0, 1.0)]) == []


def test_a_hops_other_work_is_its_node_time_outside_llm_waits() -> None:
    hop = HopSpans(nodes=[(0.0, 2.0), (2.0, 3.0)], llm=[(0.5, 1.5)])
    assert hop.other_work() == [(0.0, 0.5), (1.5, 3.0)]
    assert hop.window() == (0.0, 3.0)
    assert HopSpans().window() is None


def test_overlap_of_hops_run_side_by_side_and_one_after_the_other() -> None:
    first = HopSpans(nodes=[(0.0, 4.0)], llm=[(0.0, 3.0)])  # 1 s of other work, 3–4
    second = HopSpans(nodes=[(1.0, 5.0)], llm=[(2.0, 5.0)])  # 1 s of other work, 1–2
    side_by_side = overlap([first, second])
    assert (side_by_side.windows_sum, side_by_side.windows_overlap) == (8.0, 3.0)
    assert (side_by_side.other_work, side_by_side.other_work_beside) == (2.0, 2.0)

    later = HopSpans(nodes=[(4.0, 6.0)], llm=[(4.0, 5.0)])
    in_series = overlap([first, later, HopSpans()])
    assert (in_series.windows_sum, in_series.windows_overlap) == (6.0, 0.0)
    assert (in_series.other_work, in_series.other_work_beside) == (2.0, 0.0)


def test_llm_free_nodes_are_those_without_an_llm_call() -> None:
    # rewrite (LLM 0–1), search (1–1.2, none), evaluate (1.2–3, LLM 2–3: 0.8 s of slot wait)
    hop = HopSpans(nodes=[(0.0, 1.0), (1.0, 1.2), (1.2, 3.0)], llm=[(0.0, 1.0), (2.0, 3.0)])
    assert hop.llm_free_work() == [(1.0, 1.2)]
    other = HopSpans(nodes=[(1.1, 4.0)], llm=[(1.1, 4.0)])  # its window: 1.1–4
    side_by_side = overlap([hop, other])
    assert side_by_side.llm_free_work == pytest.approx(0.2)
    assert side_by_side.llm_free_beside == pytest.approx(0.1)  # 1.1–1.2 beside the other hop
    assert side_by_side.other_work == pytest.approx(1.0)  # search 0.2 + the 0.8 s wait
