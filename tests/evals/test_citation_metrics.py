"""Citation precision, recall and answer support: per question, then per method, exactly."""

import json
from pathlib import Path
from typing import Any

import pytest

from evals.citation_metrics import citation_facts, summarise_citations
from evals.reports import markdown, report_payload, write_report


def cite(pid: int, text: str, verified: bool = True) -> dict[str, Any]:
    return {"passage_id": pid, "text": text, "verified": verified}


BORN = cite(2, "Tomas Reyd was born in Lisbon in 1950.")
DIRECTED = cite(1, "Blue Harbor was directed by Tomas Reyd.")
PAINTER = cite(3, "Ivo Strand is a painter.", verified=False)


def test_one_question_scores_its_cited_passages_against_the_gold_ones() -> None:
    facts = citation_facts("Lisbon", True, [DIRECTED, BORN, PAINTER, BORN], [1, 2, 9])
    assert facts == {
        "cited": [1, 2, 3],  # each passage once, in citation order
        "gold": [1, 2, 9],
        "verified": 3,
        "precision": pytest.approx(2 / 3),
        "recall": pytest.approx(2 / 3),
        "answer_supported": True,
        "answer_in_sentence": True,
    }


def test_answer_support_reads_the_cited_passage_not_only_its_sentence() -> None:
    hall = cite(4, "Hall was the first president of the American Psychological Association.")
    texts = {4: "G. Stanley Hall. Granville Stanley Hall (G. Stanley Hall) was a psychologist."}
    facts = citation_facts("G. Stanley Hall", True, [hall], [4], texts)
    assert (facts["answer_supported"], facts["answer_in_sentence"]) == (True, False)
    # Without the passage's text only the sentence is read; another passage's text never counts.
    assert citation_facts("G. Stanley Hall", True, [hall], [4])["answer_supported"] is False
    elsewhere = {5: texts[4]}
    assert (
        citation_facts("G. Stanley Hall", True, [hall], [4], elsewhere)["answer_supported"] is False
    )


def test_undefined_metrics_are_none_not_zero() -> None:
    # No citation: no precision; no gold passages: neither precision nor recall.
    assert citation_facts("Lisbon", True, [], [1])["precision"] is None
    assert citation_facts("Lisbon", True, [], [1])["recall"] == 0.0
    no_gold = citation_facts("Lisbon", True, [BORN], [])
    assert (no_gold["precision"], no_gold["recall"]) == (None, None)
    # Support is asked of correct answers only, and never of yes/no.
    assert citation_facts("Lisbon", False, [BORN], [2])["answer_supported"] is None
    assert citation_facts("yes", True, [BORN], [2])["answer_supported"] is None
    assert citation_facts("Porto", True, [BORN], [2])["answer_supported"] is False


def line(n: int, facts: dict[str, Any] | None) -> dict[str, Any]:
    record = {"id": str(n), "prediction": "x", "em": 1.0, "f1": 1.0, "tokens": 10}
    record |= {"total_tokens": 10, "hops": 2}
    return record if facts is None else {**record, "citation": facts}


def test_a_method_averages_each_metric_where_it_is_defined(tmp_path: Path) -> None:
    lines = [
        line(1, citation_facts("Lisbon", True, [DIRECTED, BORN], [1, 2])),  # 1, 1, supported
        line(2, citation_facts("Porto", True, [PAINTER], [1, 2])),  # 0, 0, unsupported
        line(3, citation_facts("yes", True, [], [1, 2])),  # -, 0, -
        line(4, None),  # a line from before citations: left out
    ]
    summary = summarise_citations(lines)
    assert summary is not None
    assert summary.as_json() == {
        "n": 3,
        "precision": 0.5,
        "recall": pytest.approx(1 / 3),
        "answer_support": 0.5,
        "supported_n": 2,
        "cited_per_question": 1.0,
        "uncited": 1,
    }
    assert summarise_citations([line(5, None)]) is None

    results = tmp_path / "results"
    results.mkdir()
    (results / "grasp.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    report = write_report(results, plots=False)
    assert report_payload(report)["citations"]["grasp"]["precision"] == 0.5
    table = markdown(report, "t")
    assert "## Citations" in table
    assert "| grasp | 3 | 0.500 | 0.333 | 0.500 (2) | 1.0 | 1 |" in table
