import json
from pathlib import Path
from typing import Any

import pytest

from evals.pooled import main
from evals.results import write_jsonl


def _line(qid: str, hops: int, em: float, tokens: int, wall_s: float) -> dict[str, Any]:
    return {
        "id": qid,
        "hops": hops,
        "prediction": "x",
        "em": em,
        "f1": em,
        "judge_strict": None,
        "tokens": tokens,
        "total_tokens": tokens,
        "calls": 2,
        "wall_s": wall_s,
    }


def _run(root: Path, question_set: str, lines: list[dict[str, Any]], p: dict[str, float]) -> Path:
    """One set's run: its answer lines, its summary and its closed-book estimates."""
    folder = root / question_set
    (folder / "cache").mkdir(parents=True)
    path = folder / "grasp.jsonl"
    write_jsonl(path, lines)
    summary = {"method": "grasp", "settings": {"model": "local:m"}, "p_samples": 5, "failed": []}
    summary |= {"command": f"grasp eval {question_set}", "commit": "abc123"}
    (folder / "grasp.summary.json").write_text(json.dumps(summary), encoding="utf-8")
    write_jsonl(
        folder / "cache" / "closed_book.jsonl",
        [{"model": "m.gguf", "question_id": q, "samples": 5, "p": v} for q, v in p.items()],
    )
    return path


def test_two_sets_pool_into_one_summary_with_se_over_all_questions(tmp_path: Path) -> None:
    musique = _run(
        tmp_path,
        "musique",
        [_line("m1", 2, 1.0, 1000, 10.0), _line("m2", 3, 0.0, 3000, 30.0)],
        {"m1": 0.25, "m2": 0.5},
    )
    hotpot = _run(tmp_path, "hotpot", [_line("h1", 2, 1.0, 2000, 20.0)], {"h1": 0.5})
    out = tmp_path / "pooled" / "grasp.summary.json"

    assert main([str(musique), str(hotpot), "--out", str(out)]) == 0

    summary = json.loads(out.read_text(encoding="utf-8"))
    overall, two, three = summary["groups"]
    assert (overall["group"], overall["n"], overall["em"]) == ("all", 3, 2 / 3)
    assert overall["tokens_per_question"] == 2000.0
    assert overall["wall_s_per_question"] == 20.0
    # 6,000 tokens for the bits of m1 (-log2 0.25 = 2) and h1 (-log2 0.5 = 1).
    assert overall["success_economy"] == 2000.0
    assert (two["group"], two["n"], two["success_economy"]) == ("2hop", 2, 1000.0)
    assert three["success_economy"] == "inf"
    assert summary["commit"] == "abc123"
    assert summary["command"].startswith("python -m evals.pooled ")


def test_a_question_in_two_runs_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _run(tmp_path, "a", [_line("q1", 2, 1.0, 100, 1.0)], {"q1": 0.5})
    second = _run(tmp_path, "b", [_line("q1", 2, 1.0, 100, 1.0)], {"q1": 0.5})
    out = tmp_path / "pooled.summary.json"

    assert main([str(first), str(second), "--out", str(out)]) == 2

    assert "share question ids" in capsys.readouterr().err
    assert not out.exists()


def test_a_set_without_estimates_leaves_se_unmeasured(tmp_path: Path) -> None:
    musique = _run(tmp_path, "musique", [_line("m1", 2, 1.0, 1000, 10.0)], {"m1": 0.25})
    hotpot = _run(tmp_path, "hotpot", [_line("h1", 2, 1.0, 2000, 20.0)], {})
    out = tmp_path / "pooled.summary.json"

    assert main([str(musique), str(hotpot), "--out", str(out)]) == 0

    assert json.loads(out.read_text(encoding="utf-8"))["groups"][0]["success_economy"] is None


def test_the_pool_averages_citations_over_every_question_that_has_them(tmp_path: Path) -> None:
    def cited(precision: float | None, recall: float, supported: bool | None) -> dict[str, Any]:
        facts = {"cited": [1, 2], "gold": [1, 3], "verified": 2, "precision": precision}
        return facts | {"recall": recall, "answer_supported": supported}

    m1 = _line("m1", 2, 1.0, 1000, 10.0) | {"citation": cited(1.0, 1.0, True)}
    m2 = _line("m2", 2, 0.0, 1000, 10.0) | {"citation": cited(0.5, 0.5, None)}
    h1 = _line("h1", 2, 1.0, 1000, 10.0) | {"citation": cited(None, 0.0, False)}
    musique = _run(tmp_path, "musique", [m1, m2], {})
    hotpot = _run(tmp_path, "hotpot", [h1], {})
    out = tmp_path / "pooled.summary.json"

    assert main([str(musique), str(hotpot), "--out", str(out)]) == 0

    # Precision over the two questions that define it, recall over all three, support over two.
    assert json.loads(out.read_text(encoding="utf-8"))["citations"] == {
        "n": 3,
        "precision": 0.75,
        "recall": 0.5,
        "answer_support": 0.5,
        "supported_n": 2,
        "cited_per_question": 2.0,
        "uncited": 0,
    }


def test_first_keeps_each_runs_first_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    musique = _run(
        tmp_path,
        "musique",
        [_line("m1", 2, 1.0, 1000, 10.0), _line("m2", 3, 0.0, 3000, 30.0)],
        {"m1": 0.25, "m2": 0.5},
    )
    out = tmp_path / "first" / "grasp.summary.json"

    assert main([str(musique), "--first", "1", "--out", str(out)]) == 0

    summary = json.loads(out.read_text(encoding="utf-8"))
    overall = summary["groups"][0]
    assert (overall["n"], overall["em"], overall["tokens_per_question"]) == (1, 1.0, 1000.0)
    assert "--first 1" in summary["command"]
    assert main([str(musique), "--first", "0", "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().endswith("error: --first must be at least 1")
