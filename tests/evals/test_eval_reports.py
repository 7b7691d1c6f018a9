import json
import math
from pathlib import Path
from typing import Any

import pytest

from evals.reports import report_payload, write_report
from evals.results import read_jsonl, write_jsonl
from evals.summary import format_number, summarise


def record(
    qid: str, hops: int, em: float, f1: float, strict: bool, lenient: bool, **cost: Any
) -> dict[str, Any]:
    return {
        "id": qid,
        "hops": hops,
        "prediction": "x",
        "em": em,
        "f1": f1,
        "judge_strict": strict,
        "judge_lenient": lenient,
        **cost,
    }


GRASP = [
    record(
        "2hop__a",
        2,
        1.0,
        1.0,
        True,
        True,
        tokens=1000,
        indexing_tokens=500,
        total_tokens=1500,
        calls=10,
        wall_s=2.0,
    ),
    record(
        "3hop__b",
        3,
        0.0,
        0.5,
        False,
        True,
        tokens=3000,
        indexing_tokens=500,
        total_tokens=3500,
        calls=20,
        wall_s=4.0,
    ),
]
DENSE = [
    record(
        "2hop__a",
        2,
        0.0,
        0.25,
        False,
        False,
        tokens=400,
        indexing_tokens=0,
        total_tokens=400,
        calls=1,
        wall_s=1.0,
    ),
    record(
        "3hop__b",
        3,
        1.0,
        1.0,
        True,
        True,
        tokens=600,
        indexing_tokens=0,
        total_tokens=600,
        calls=1,
        wall_s=1.0,
    ),
]
CLOSED_BOOK = [
    {"model": "m", "question_id": "2hop__a", "samples": 5, "correct": 0, "p": 1 / 7},
    {"model": "m", "question_id": "3hop__b", "samples": 5, "correct": 1, "p": 2 / 7},
]
RECALL = [
    {"id": "2hop__a", "hops": 2, "recall": {"2": 0.5, "5": 1.0, "10": 1.0}},
    {"id": "3hop__b", "hops": 3, "recall": {"2": 0.0, "5": 0.5, "10": 1.0}},
]


@pytest.fixture
def results(tmp_path: Path) -> Path:
    write_jsonl(tmp_path / "grasp.jsonl", GRASP)
    write_jsonl(tmp_path / "dense.jsonl", DENSE)
    write_jsonl(tmp_path / "cache" / "closed_book.jsonl", CLOSED_BOOK)
    write_jsonl(tmp_path / "retrieval" / "grasp-single.jsonl", RECALL)
    (tmp_path / "grasp.summary.json").write_text("{}")
    return tmp_path


def test_summary_overall_and_by_hops() -> None:
    overall, two, three = summarise(GRASP, {"2hop__a": 1 / 7, "3hop__b": 2 / 7})
    assert (overall.group, overall.n, overall.em, overall.f1) == ("all", 2, 0.5, 0.75)
    assert (overall.judge, overall.judge_lenient) == (0.5, 1.0)
    assert (overall.tokens, overall.tokens_per_question, overall.total_per_question) == (
        4000,
        2000.0,
        2500.0,
    )
    # SE = ΣT / Σ correct·(−log2 p): only 2hop__a is correct (judge), with p = 1/7.
    assert overall.success_economy == pytest.approx(4000 / math.log2(7))
    assert (two.group, two.success_economy) == ("2hop", pytest.approx(1000 / math.log2(7)))
    assert (three.group, three.success_economy) == ("3hop", math.inf)


def test_without_estimates_or_judge_the_metrics_are_na() -> None:
    unjudged = [{**r, "judge_strict": None, "judge_lenient": None} for r in GRASP]
    overall = summarise(unjudged, None)[0]
    assert (overall.judge, overall.judge_lenient, overall.success_economy) == (None, None, None)
    assert format_number(overall.judge) == "n/a"
    # Without a judge, EM decides correct_i.
    se = summarise(unjudged, {"2hop__a": 0.5, "3hop__b": 0.5})[0].success_economy
    assert se == 4000.0


def test_report_tables_and_plots(results: Path) -> None:
    report = write_report(results)
    names = [p.name for p in report.files]
    assert names == [
        "report.md",
        "accuracy_vs_tokens.png",
        "success_economy_by_hops.png",
        "recall.png",
    ]
    for path in report.files[1:]:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = (results / "report.md").read_text().splitlines()
    assert lines[:22] == [
        f"# Evaluation report: {results.name}",
        "",
        "## QA",
        "",
        "| method | n | EM | F1 | Judge | Judge (lenient) | tokens/q | indexing/q | total/q | calls/q | s/q | SE |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        "| dense | 2 | 0.500 | 0.625 | 0.500 | 0.500 | 500 | 0 | 500 | 1.0 | 1.0 | 553.3 |",
        "| grasp | 2 | 0.500 | 0.750 | 0.500 | 1.000 | 2,000 | 500 | 2,500 | 15.0 | 3.0 | 1424.8 |",
        "",
        "## QA by hop count",
        "",
        "| method | hops | n | EM | F1 | Judge | total/q | SE |",
        "|---|---|---|---|---|---|---|---|",
        "| dense | 2hop | 1 | 0.000 | 0.250 | 0.000 | 400 | ∞ |",
        "| dense | 3hop | 1 | 1.000 | 1.000 | 1.000 | 600 | 332.0 |",
        "| grasp | 2hop | 1 | 1.000 | 1.000 | 1.000 | 1,500 | 356.2 |",
        "| grasp | 3hop | 1 | 0.000 | 0.500 | 0.000 | 3,500 | ∞ |",
        "",
        lines[18],  # the note on what tokens and SE mean
        "",
        "## Retrieval recall",
        "",
    ]
    assert lines[22:28] == [
        "| method / mode | group | n | R@2 | R@5 | R@10 |",
        "|---|---|---|---|---|---|",
        "| grasp-single | all | 2 | 0.250 | 0.750 | 1.000 |",
        "| grasp-single | 2hop | 1 | 0.500 | 1.000 | 1.000 |",
        "| grasp-single | 3hop | 1 | 0.000 | 0.500 | 1.000 |",
        "",
    ]
    assert lines[28:] == [
        "![accuracy_vs_tokens](accuracy_vs_tokens.png)",
        "![success_economy_by_hops](success_economy_by_hops.png)",
        "![recall](recall.png)",
    ]


def test_a_line_cut_short_is_dropped_and_the_file_repaired(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"id": "a"}) + "\n" + '{"id": "b", "pred')
    assert read_jsonl(path) == [{"id": "a"}]
    assert path.read_text() == '{"id": "a"}\n'


def attributed(line: dict[str, Any], cause: str | None, recall: float | None) -> dict[str, Any]:
    return {**line, "attribution": {"cause": cause, "evidence_recall": recall}}


def test_cause_table_counts_and_shares_per_method(tmp_path: Path) -> None:
    causes = [("correct", 1.0), ("plan", 0.5), ("retrieval", 0.0), ("plan", 0.5), (None, None)]
    grasp = [attributed({**GRASP[0], "id": f"q{i}"}, c, r) for i, (c, r) in enumerate(causes)]
    dense = [attributed(DENSE[0], "retrieval", 0.5), attributed(DENSE[1], "correct", 1.0)]
    write_jsonl(tmp_path / "grasp.jsonl", grasp)
    write_jsonl(tmp_path / "dense.jsonl", dense)
    write_jsonl(tmp_path / "none.jsonl", [{**DENSE[0], "attribution": None}])

    report = write_report(tmp_path, plots=False)

    lines = (tmp_path / "report.md").read_text().splitlines()
    start = lines.index("## Failure causes")
    assert lines[start + 2 : start + 6] == [
        "| method | n | correct | plan | retrieval | reading | synthesis | n/a | evidence recall |",
        "|---|---|---|---|---|---|---|---|---|",
        "| dense | 2 | 1 (50%) | 0 (0%) | 1 (50%) | 0 (0%) | 0 (0%) | 0 (0%) | 0.750 |",
        # The unlabelled line counts as n/a; its missing recall is left out of the mean.
        "| grasp | 5 | 1 (20%) | 2 (40%) | 1 (20%) | 0 (0%) | 0 (0%) | 1 (20%) | 0.500 |",
    ]
    # Methods whose lines carry no attribution (closed-book) get no row.
    assert list(report.causes) == ["dense", "grasp"]
    payload = report_payload(report)["causes"]["grasp"]
    assert (payload["counts"]["plan"], payload["shares"]["plan"]) == (2, 0.4)
