"""`grasp eval-retrieval` end to end on the films corpus: recall per method and mode, no LLM."""

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine

from evals.provenance import run_command, source_commit
from evals.retrieval_command import run_retrieval
from tests.fixtures.eval_films import args, make_services, prompts
from tests.fixtures.films import build_corpus

ALL_FOUND = {"n": 2.0, "2": 1.0, "5": 1.0, "10": 1.0}


@pytest.mark.parametrize(
    ("method", "mode", "retrieved", "overall"),
    [
        # Single pass: the 2-hop question's top 2 are passages 1 and 4, so R@2 = 1/2 there.
        (
            "dense",
            "single",
            [[[1, 4, 2, 3]], [[4, 3, 2, 1]]],
            {"n": 2.0, "2": 0.75, "5": 1.0, "10": 1.0},
        ),
        # Agentic: one list per gold sub-question, with "#1" replaced by the gold answer.
        ("bm25", "agentic", [[[1], [2, 1, 3, 4]], [[3, 4, 2], [4, 3, 2], [3, 4]]], ALL_FOUND),
        (
            "grasp",
            "agentic",
            [[[1, 2, 3, 4], [2, 1, 3, 4]], [[3, 2, 4, 1], [4, 2, 3, 1], [3, 4, 2, 1]]],
            ALL_FOUND,
        ),
    ],
)
async def test_retrieval_eval_on_the_store(
    engine: Engine,
    database_url: str,
    questions: Path,
    tmp_path: Path,
    method: str,
    mode: str,
    retrieved: list[list[list[int]]],
    overall: dict[str, float],
) -> None:
    build_corpus(engine)
    svc, _, _ = make_services(engine, database_url, [])
    cli = args(
        "eval-retrieval",
        str(questions),
        "--corpus",
        "films",
        "--method",
        method,
        "--mode",
        mode,
        "--out",
        str(tmp_path),
    )
    path, result = run_retrieval(cli, svc)
    assert path == tmp_path / "films" / "retrieval" / f"{method}-{mode}.jsonl"
    records = [json.loads(x) for x in path.read_text().splitlines()]
    assert [r["gold"] for r in records] == [[1, 2], [3, 4]]
    assert [r["retrieved"] for r in records] == retrieved
    assert result["recall"]["all"] == overall
    assert prompts(svc.llm) == []  # no LLM at query time
    summary = json.loads(path.with_suffix(".summary.json").read_text())
    assert (summary["kind"], summary["method"], summary["mode"]) == ("retrieval", method, mode)
    assert (summary["corpus"], summary["embedder"]) == ("films", svc.embedder.name)
    assert summary["groups"][0] == {"group": "all", **overall}
    assert (summary["command"], summary["commit"]) == (run_command(), source_commit())
