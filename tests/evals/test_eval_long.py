"""The extended-context setting: one graph per LongBench sample, its indexing billed to it."""

import json
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

from evals.long_context import sample_corpus_name
from graphs.models.scripted_model import ScriptedReply
from store.engine import transaction
from store.models import Corpus
from tests.fixtures.eval_films import args, evaluate, make_services, prompts
from tests.fixtures.films import CORPUS
from tests.fixtures.peers import ANSWER

PASSAGES = {title: (props, entities) for title, props, entities in CORPUS}


def context(*titles: str) -> str:
    return "\n".join(
        f"Passage {n}:\n{title}\n{' '.join(PASSAGES[title][0])}"
        for n, title in enumerate(titles, start=1)
    )


def extraction(tokens: tuple[int, int], *titles: str) -> ScriptedReply:
    passages = [
        {
            "id": n,
            "propositions": PASSAGES[title][0],
            "entities": [[name, kind, list(ix)] for name, kind, ix in PASSAGES[title][1]],
        }
        for n, title in enumerate(titles, start=1)
    ]
    return ScriptedReply(
        when=["You build a search index", *(f"Title: {t}" for t in titles)],
        reply=json.dumps({"passages": passages}),
        input_tokens=tokens[0],
        output_tokens=tokens[1],
    )


def reply(when: list[str], value: dict[str, Any], tokens: tuple[int, int]) -> ScriptedReply:
    return ScriptedReply(
        when=when, reply=json.dumps(value), input_tokens=tokens[0], output_tokens=tokens[1]
    )


RULES = [
    extraction((700, 250), "Blue Harbor", "Tomas Reyd"),
    extraction((600, 200), "Ivo Strand", "Lena Marsh"),
    reply(
        ["You prepare a search"],
        {"search_statement": "Someone was born somewhere.", "keywords": ["born"]},
        (120, 15),
    ),
    reply(
        ["You answer one sub-question", "born in Lisbon"],
        {"observations": ["Tomas Reyd was born in Lisbon."], "action": "DONE", "answer": "Lisbon"},
        (200, 25),
    ),
    reply(
        ["You answer one sub-question", "Ivo Strand was born in 1962"],
        {"observations": ["Ivo Strand was born in 1962."], "action": "DONE", "answer": "1962"},
        (200, 25),
    ),
    reply(["You give the final answer", "→ Lisbon"], {"answer": "Lisbon"}, (180, 12)),
    reply(["You give the final answer", "→ 1962"], {"answer": "1962"}, (180, 12)),
    reply([ANSWER, "born in Lisbon"], {"answer": "Lisbon"}, (400, 5)),
    reply([ANSWER, "born in 1962"], {"answer": "1961"}, (300, 5)),
]

SAMPLES = [
    {
        "_id": "hotpot/0001 a",
        "input": "Where was the director of Blue Harbor born?",
        "context": context("Blue Harbor", "Tomas Reyd"),
        "answers": ["Lisbon"],
        "length": 30,
    },
    {
        "_id": "hotpot/0002",
        "input": "When was Ivo Strand born?",
        "context": context("Ivo Strand", "Lena Marsh"),
        "answers": ["1962"],
        "length": 25,
    },
]


async def test_long_setting_indexes_each_sample_and_bills_it(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "lb_toy.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in SAMPLES))
    svc, _, _ = make_services(engine, database_url, RULES)
    out = str(tmp_path / "runs")
    # The passage baseline first: it stores and embeds the passages, with no extraction.
    dense = args(
        "eval",
        str(path),
        "--setting",
        "long",
        "--method",
        "dense",
        "--no-judge",
        "--p-samples",
        "0",
        "--out",
        out,
    )
    run, _, _ = await evaluate(dense, svc, None)
    lines = [json.loads(x) for x in run.results.read_text().splitlines()]
    assert sorted(
        (r["prediction"], r["em"], r["tokens"], r["indexing_tokens"], len(r["passages"]))
        for r in lines
    ) == [
        ("1961", 0.0, 305, 0.0, 2),
        ("Lisbon", 1.0, 405, 0.0, 2),
    ]
    assert not [p for p in prompts(svc.llm) if "You build a search index" in p]

    cli = args(
        "eval",
        str(path),
        "--setting",
        "long",
        "--method",
        "grasp",
        "--set",
        "planner=off",
        "--set",
        "entity_selection=off",
        "--no-judge",
        "--p-samples",
        "0",
        "--out",
        out,
    )

    run, outcome, summaries = await evaluate(cli, svc, None)

    assert run.results == tmp_path / "runs" / "longbench-lb_toy" / "grasp.jsonl"
    assert (outcome.answered, outcome.failed) == (2, [])
    lines = [json.loads(x) for x in run.results.read_text().splitlines()]
    by_id = {r["id"]: r for r in lines}
    first, second = by_id["hotpot/0001 a"], by_id["hotpot/0002"]
    assert sample_corpus_name("hotpot/0001 a") == "lb-hotpot-0001-a-" + first["corpus"][-8:]
    with transaction(engine) as session:
        names = set(session.execute(select(Corpus.name)).scalars())
    assert names == {first["corpus"], second["corpus"]}
    # rewrite + evaluate + synthesis = 500 in, 52 out; each sample pays its own extraction call.
    assert [
        (r["prediction"], r["em"], r["tokens"], r["indexing_tokens"], r["total_tokens"])
        for r in (first, second)
    ] == [
        ("Lisbon", 1.0, 552, 950.0, 1502.0),
        ("1962", 1.0, 552, 800.0, 1352.0),
    ]
    assert (first["hops"], summaries[0].total_per_question, len(summaries)) == (None, 1427.0, 1)

    # Re-running finds both samples done: nothing is indexed or asked again.
    seen = len(prompts(svc.llm))
    _, again, _ = await evaluate(cli, svc, None)
    assert (again.answered, again.skipped, len(prompts(svc.llm))) == (0, 2, seen)
