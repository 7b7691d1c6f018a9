"""An eval line counts the calls it replayed from the LLM cache, and a summary averages them:
their tokens count, their seconds are missing from the wall time, so s/q is read beside them."""

import json
from dataclasses import replace
from pathlib import Path

from sqlalchemy import Engine

from nodes.llm.client import LlmClient
from tests.fixtures.eval_films import CLOSED, QUESTIONS, answer, args, evaluate, make_services
from tests.fixtures.films import build_corpus


async def test_replayed_calls_are_counted_per_line_and_per_question(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    build_corpus(engine)
    questions = tmp_path / "musique_toy.json"
    questions.write_text(json.dumps(QUESTIONS))
    svc, _, _ = make_services(engine, database_url, [answer(CLOSED, text="Porto", tokens=(50, 3))])
    caching = LlmClient(model=svc.llm.model, model_name="cached-scripted", engine=engine)
    svc = replace(svc, llm=caching)
    out = str(tmp_path / "runs")

    def closed_book(name: str) -> list[str]:
        return ["eval", str(questions), "--corpus", "films", "--method", "none", "--no-judge"] + [
            "--p-samples", "0", "--out", out, "--name", name,
        ]  # fmt: skip

    first, _, first_summary = await evaluate(args(*closed_book("first")), svc, None)
    again, _, again_summary = await evaluate(args(*closed_book("again")), svc, None)

    def lines(path: Path) -> list[tuple[int, int, int]]:
        rows = [json.loads(x) for x in path.read_text().splitlines()]
        return [(r["calls"], r["cached_calls"], r["tokens"]) for r in rows]

    # The first run asks the model; the second replays each question's call, at the same tokens.
    assert lines(first.results) == [(1, 0, 53), (1, 0, 53)]
    assert lines(again.results) == [(1, 1, 53), (1, 1, 53)]
    assert first_summary[0].cached_calls_per_question == 0.0
    assert again_summary[0].cached_calls_per_question == 1.0
