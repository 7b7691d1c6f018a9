"""The extended-context setting on the three real LongBench 2wikimqa records (48-hex `_id`s)."""

import json
from pathlib import Path

from sqlalchemy import Engine, select

from store.engine import transaction
from store.ledger_models import LlmCall
from tests.fixtures.data import SHARED_DATA
from tests.fixtures.eval_films import args, evaluate, make_services
from tests.fixtures.films import EVALUATE, PLAN, REWRITE, SYNTHESIZE, rule

RECORDS = SHARED_DATA / "longbench_2wikimqa_sample.jsonl"

# One reply per step, whatever the question: this test is about ids and bookkeeping, not answers.
RULES = [
    rule(PLAN, reply={"plan": "Look it up.", "sub_questions": ["What does the question ask?"]}),
    rule(REWRITE, reply={"search_statement": "The answer is stated.", "keywords": ["answer"]}),
    rule(
        EVALUATE,
        reply={"observations": ["Nothing decisive."], "action": "DONE", "answer": "unknown"},
    ),
    rule(SYNTHESIZE, reply={"answer": "unknown", "justification": "No evidence."}),
]


async def test_real_records_with_long_ids_are_answered_and_billed(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    ids = [json.loads(line)["_id"] for line in RECORDS.read_text().splitlines()]
    assert len(ids) == 3 and all(len(i) == 48 for i in ids)
    svc, _, _ = make_services(engine, database_url, RULES)
    cli = args(
        "eval",
        str(RECORDS),
        "--setting",
        "long",
        "--method",
        "grasp",
        "--extractor",
        "spacy",
        "--set",
        "entity_selection=off",
        "--no-judge",
        "--p-samples",
        "0",
        "--out",
        str(tmp_path / "runs"),
    )

    run, outcome, _ = await evaluate(cli, svc, None)

    assert (outcome.answered, outcome.failed) == (3, [])
    lines = [json.loads(x) for x in run.results.read_text().splitlines()]
    assert sorted(r["id"] for r in lines) == sorted(ids)
    # plan + rewrite + evaluate + synthesis per record, every call in the ledger under its run id
    assert [r["calls"] for r in lines] == [4, 4, 4]
    with transaction(engine) as session:
        run_ids = list(session.execute(select(LlmCall.run_id)).scalars())
    assert len(run_ids) == 12
    assert all(run_id and any(i in run_id for i in ids) for run_id in run_ids)
    assert max(len(run_id or "") for run_id in run_ids) > 100  # over the old varchar(100) cap
