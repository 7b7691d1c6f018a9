import json
import re
from collections import defaultdict
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import Engine, select

from graphs.api import answer
from graphs.context import GraspContext
from graphs.grasp_graph import build_grasp_graph
from graphs.scripted_model import ScriptedChatModel, ScriptedReply
from graphs.services import Services
from graphs.settings import Settings
from nodes.embedding import HashingEmbedder
from nodes.llm_client import LlmCallError, LlmClient
from store.corpora import add_passages, ensure_corpus
from store.engine import transaction
from store.graph_writes import (
    ExtractedEntity,
    ExtractedPassage,
    set_passage_embeddings,
    write_extracted,
)
from store.models import Entity, LlmCall

EMBEDDER = HashingEmbedder()

# title, propositions, entities (name, type, indices of the propositions they occur in)
CORPUS: list[tuple[str, list[str], list[tuple[str, str, tuple[int, ...]]]]] = [
    (
        "Blue Harbor",
        [
            "Blue Harbor is a 1998 drama film starring Mara Quell.",
            "Blue Harbor was directed by Tomas Reyd.",
        ],
        [
            ("Blue Harbor", "Film", (0, 1)),
            ("Mara Quell", "Person", (0,)),
            ("Tomas Reyd", "Person", (1,)),
        ],
    ),
    (
        "Tomas Reyd",
        ["Tomas Reyd is a film director.", "Tomas Reyd was born in Lisbon in 1950."],
        [("Tomas Reyd", "Person", (0, 1)), ("Lisbon", "City", (1,))],
    ),
    (
        "Ivo Strand",
        ["Ivo Strand is a painter.", "Ivo Strand was born in 1962 in Oslo."],
        [("Ivo Strand", "Person", (0, 1)), ("Oslo", "City", (1,))],
    ),
    (
        "Lena Marsh",
        ["Lena Marsh is a sculptor.", "Lena Marsh was born in 1958 in Riga."],
        [("Lena Marsh", "Person", (0, 1)), ("Riga", "City", (1,))],
    ),
]

# Each prompt's distinctive opening, so rules can say which node they answer.
PLAN = "You split a question"
REWRITE = "You prepare a search"
SELECT = "You steer a search"
EVALUATE = "You answer one sub-question"
SYNTHESIZE = "You give the final answer"
TOKENS = {
    PLAN: (300, 40),
    REWRITE: (120, 15),
    SELECT: (150, 8),
    EVALUATE: (200, 25),
    SYNTHESIZE: (180, 12),
}


def rule(node: str, *texts: str, reply: dict[str, Any], times: int | None = None) -> ScriptedReply:
    tokens_in, tokens_out = TOKENS[node]
    return ScriptedReply(
        when=[re.escape(node), *(re.escape(t) for t in texts)],
        reply=json.dumps(reply),
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        times=times,
    )


def build_corpus(engine: Engine) -> dict[str, int]:
    corpus = ensure_corpus(engine, "films", EMBEDDER.name)
    rows = add_passages(engine, corpus, [(title, " ".join(props)) for title, props, _ in CORPUS])
    write_extracted(
        engine,
        corpus,
        [
            ExtractedPassage(
                row.id,
                props,
                EMBEDDER.embed(props),
                [ExtractedEntity(n, t, ix, EMBEDDER.embed([t])[0]) for n, t, ix in entities],
            )
            for row, (_, props, entities) in zip(rows, CORPUS, strict=True)
        ],
    )
    set_passage_embeddings(engine, [r.id for r in rows], EMBEDDER.embed([r.text for r in rows]))
    with transaction(engine) as session:
        return {name: eid for name, eid in session.execute(select(Entity.name, Entity.id))}


def services(engine: Engine, url: str, rules: list[ScriptedReply]) -> Services:
    client = LlmClient(
        model=ScriptedChatModel(rules=rules), model_name="scripted", engine=engine, use_cache=False
    )
    return Services(
        engine=engine,
        database_url=url,
        settings=Settings(),
        llm=client,
        extractor_llm=client,
        embedder=EMBEDDER,
    )


async def run(
    svc: Services, question: str, thread: str = "t1", **context: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the graph; return the final state and a trace of which node ran in which superstep."""
    graph = build_grasp_graph(svc, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": thread}}
    steps: dict[int, list[str]] = defaultdict(list)
    agents: dict[int, list[str]] = defaultdict(list)  # sub-question index → its node sequence
    namespaces: dict[str, int] = {}
    async for namespace, mode, chunk in graph.astream(
        {"question": question},
        config,
        context=GraspContext(corpus="films", **context),
        stream_mode=["debug", "updates"],
        subgraphs=True,
    ):
        if mode == "debug" and chunk["type"] == "task":
            if not namespace:
                steps[chunk["step"]].append(chunk["payload"]["name"])
                if chunk["payload"]["name"] == "sub_agent":
                    task = chunk["payload"]["id"]
                    namespaces[task] = chunk["payload"]["input"]["index"]
            else:
                agents[namespaces[namespace[0].split(":")[1]]].append(chunk["payload"]["name"])
    state = (await graph.aget_state(config)).values
    trace = {"steps": [sorted(steps[s]) for s in sorted(steps)], "agents": dict(agents)}
    return state, trace


def chain_rules(ids: dict[str, int]) -> list[ScriptedReply]:
    return [
        rule(
            PLAN,
            "Question: Where was the director of Blue Harbor born?",
            reply={
                "plan": "Find who directed Blue Harbor, then where that person was born.",
                "sub_questions": ["Who directed Blue Harbor?", "Where was #1 born?"],
            },
        ),
        rule(
            REWRITE,
            "Sub-question: Who directed Blue Harbor?",
            reply={
                "search_statement": "Blue Harbor was directed by a director.",
                "keywords": ["Blue Harbor", "directed"],
            },
        ),
        rule(
            SELECT,
            "Looking for: Blue Harbor was directed by a director.",
            f"[{ids['Blue Harbor']}] Blue Harbor (Film)",
            reply={"entity_ids": [ids["Blue Harbor"], 999]},
        ),
        rule(
            EVALUATE,
            "Sub-question: Who directed Blue Harbor?",
            "Blue Harbor: Blue Harbor is a 1998 drama film",
            reply={
                "observations": ["Blue Harbor was directed by Tomas Reyd."],
                "action": "DONE",
                "answer": "Tomas Reyd",
            },
        ),
        # The second hop: the placeholder is resolved and the first answer is shown.
        rule(
            REWRITE,
            "Answers found so far:\n- Who directed Blue Harbor? → Tomas Reyd\nSub-question: Where was Tomas Reyd born?",
            reply={
                "search_statement": "Tomas Reyd was born somewhere.",
                "keywords": ["Tomas Reyd", "born"],
            },
        ),
        rule(SELECT, "Looking for: Tomas Reyd was born somewhere.", reply={"entity_ids": []}),
        rule(
            EVALUATE,
            "Sub-question: Where was Tomas Reyd born?",
            "(nothing new was found)",
            reply={
                "observations": [],
                "action": "query again",
                "search_statement": "Tomas Reyd was born in a city.",
                "keywords": ["Tomas Reyd", "birthplace"],
            },
        ),
        rule(
            SELECT,
            "Looking for: Tomas Reyd was born in a city.",
            f"[{ids['Tomas Reyd']}] Tomas Reyd (Person)",
            reply={"entity_ids": [ids["Tomas Reyd"]]},
        ),
        rule(
            EVALUATE,
            "Sub-question: Where was Tomas Reyd born?",
            "Tomas Reyd was born in Lisbon in 1950.",
            reply={
                "observations": ["Tomas Reyd was born in Lisbon."],
                "action": "DONE",
                "answer": "Lisbon",
            },
        ),
        rule(
            SYNTHESIZE,
            "1. Who directed Blue Harbor? → Tomas Reyd\n2. Where was Tomas Reyd born? → Lisbon",
            reply={
                "answer": "Lisbon",
                "justification": "Tomas Reyd directed Blue Harbor and was born in Lisbon.",
            },
        ),
    ]


SUB_AGENT_ROUND = ["search", "select_entities", "rank_vote", "evaluate"]


async def test_a_chain_runs_hop_after_hop(engine: Engine, database_url: str) -> None:
    ids = build_corpus(engine)
    svc = services(engine, database_url, chain_rules(ids))
    state, trace = await run(svc, "Where was the director of Blue Harbor born?", thread="chain-1")

    assert trace["steps"] == [
        ["plan"],
        ["schedule"],
        ["sub_agent"],
        ["schedule"],
        ["sub_agent"],
        ["schedule"],
        ["synthesize"],
    ]
    assert trace["agents"] == {
        1: ["rewrite", *SUB_AGENT_ROUND],
        2: ["rewrite", *SUB_AGENT_ROUND, *SUB_AGENT_ROUND],
    }
    assert state["final_answer"] == "Lisbon"
    assert state["answers"] == {1: "Tomas Reyd", 2: "Lisbon"}
    assert state["sub_questions"] == [
        {"index": 1, "text": "Who directed Blue Harbor?", "depends_on": []},
        {"index": 2, "text": "Where was #1 born?", "depends_on": [1]},
    ]
    assert state["error"] is None
    tokens = state["tokens"]
    # plan + sq1 (rewrite, select, evaluate) + sq2 (rewrite, 2 × select, 2 × evaluate) + synthesis
    assert (tokens["input_tokens"], tokens["output_tokens"], tokens["calls"]) == (1770, 181, 10)
    assert tokens["by_node"] == {
        "evaluate": {"input": 600, "output": 75, "calls": 3},
        "plan": {"input": 300, "output": 40, "calls": 1},
        "rewrite": {"input": 240, "output": 30, "calls": 2},
        "select_entities": {"input": 450, "output": 24, "calls": 3},
        "synthesize": {"input": 180, "output": 12, "calls": 1},
    }
    calls = sorted((r["node"], r["agent"], r["iteration"]) for r in tokens["records"])
    with transaction(engine) as session:
        ledger = session.execute(
            select(LlmCall.node, LlmCall.agent_id, LlmCall.iteration, LlmCall.run_id)
        ).all()
    assert sorted((n, a, i) for n, a, i, _ in ledger) == calls
    assert {run for *_, run in ledger} == {"chain-1"}
    assert ("evaluate", "sq2", 2) in calls and ("select_entities", "sq2", 1) in calls


def comparison_rules(ids: dict[str, int]) -> list[ScriptedReply]:
    rules = [
        rule(
            PLAN,
            "Question: Who was born first, Ivo Strand or Lena Marsh?",
            reply={
                "plan": "Find both birth years and compare them.",
                "sub_questions": ["When was Ivo Strand born?", "When was Lena Marsh born?"],
            },
        ),
        rule(
            SYNTHESIZE,
            "1. When was Ivo Strand born? → 1962\n2. When was Lena Marsh born? → 1958",
            reply={"answer": "Lena Marsh", "justification": "1958 is before 1962."},
        ),
    ]
    for name, year in (("Ivo Strand", "1962"), ("Lena Marsh", "1958")):
        rules += [
            rule(
                REWRITE,
                f"Sub-question: When was {name} born?",
                reply={
                    "search_statement": f"{name} was born in a year.",
                    "keywords": [name, "born"],
                },
            ),
            rule(
                SELECT,
                f"Looking for: {name} was born in a year.",
                reply={"entity_ids": [ids[name]]},
            ),
            rule(
                EVALUATE,
                f"Sub-question: When was {name} born?",
                f"{name} was born in {year}",
                reply={
                    "observations": [f"{name} was born in {year}."],
                    "action": "DONE",
                    "answer": year,
                },
            ),
        ]
    return rules


async def test_a_comparison_runs_its_hops_in_the_same_superstep(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    svc = services(engine, database_url, comparison_rules(ids))
    state, trace = await run(svc, "Who was born first, Ivo Strand or Lena Marsh?")

    assert trace["steps"] == [
        ["plan"],
        ["schedule"],
        ["sub_agent", "sub_agent"],
        ["schedule"],
        ["synthesize"],
    ]
    assert trace["agents"] == {1: ["rewrite", *SUB_AGENT_ROUND], 2: ["rewrite", *SUB_AGENT_ROUND]}
    assert (state["final_answer"], state["justification"]) == ("Lena Marsh", "1958 is before 1962.")
    assert state["answers"] == {1: "1962", 2: "1958"}
    tokens = state["tokens"]
    assert (tokens["input_tokens"], tokens["output_tokens"], tokens["calls"]) == (
        300 + 2 * 470 + 180,
        40 + 2 * 48 + 12,
        8,
    )
    assert sorted({r["agent"] for r in tokens["records"] if r["agent"]}) == ["sq1", "sq2"]


async def test_a_broken_plan_is_rejected_and_the_question_answered_as_one_hop(
    engine: Engine, database_url: str
) -> None:
    build_corpus(engine)
    question = "Where was the director of Blue Harbor born?"
    rules = [
        rule(
            PLAN, reply={"plan": "Loop.", "sub_questions": ["Who married #2?", "Who directed #1?"]}
        ),
        rule(REWRITE, f"Sub-question: {question}", reply={"search_statement": "x", "keywords": []}),
        rule(
            EVALUATE, reply={"observations": [], "action": "QUERY_AGAIN", "search_statement": "y"}
        ),
        rule(SYNTHESIZE, f"1. {question} → unknown", reply={"answer": "unknown"}),
    ]
    svc = services(engine, database_url, rules)
    state, trace = await run(svc, question, max_iterations=2, entity_selection="off")

    assert state["error"] == (
        "plan rejected (sub-questions depend on each other in a cycle: #1 → #2 → #1); "
        "the question is answered as a single hop"
    )
    assert state["sub_questions"] == [{"index": 1, "text": question, "depends_on": []}]
    # No selection call with entity selection off; the last round is forced to an answer.
    assert trace["agents"] == {1: ["rewrite", *SUB_AGENT_ROUND, *SUB_AGENT_ROUND]}
    assert state["final_answer"] == "unknown"
    assert state["tokens"]["by_node"]["plan"]["calls"] == 2  # the re-ask with the reason shown


@pytest.mark.parametrize(
    "ablation", [{"retrieval": "dense"}, {"evidence": "propositions", "entity_selection": "off"}]
)
async def test_ablations_without_the_planner(
    engine: Engine, database_url: str, ablation: dict[str, str]
) -> None:
    build_corpus(engine)
    question = "Where was Tomas Reyd born?"
    rules = [
        rule(
            REWRITE,
            f"Sub-question: {question}",
            reply={
                "search_statement": "Tomas Reyd was born in a city.",
                "keywords": ["Tomas Reyd"],
            },
        ),
        rule(
            EVALUATE,
            "Tomas Reyd was born in Lisbon in 1950.",
            reply={"observations": [], "action": "DONE", "answer": "Lisbon"},
        ),
        rule(
            SYNTHESIZE,
            f"Plan: (none)\nFindings:\n1. {question} → Lisbon",
            reply={"answer": "Lisbon"},
        ),
    ]
    svc = services(engine, database_url, rules)
    state, trace = await run(svc, question, planner="off", **ablation)

    expected = (
        ["rewrite", "rank_vote", "evaluate"]
        if "retrieval" in ablation
        else ["rewrite", *SUB_AGENT_ROUND]
    )
    assert trace["agents"] == {1: expected}
    assert state["final_answer"] == "Lisbon"
    assert sorted(state["tokens"]["by_node"]) == ["evaluate", "rewrite", "synthesize"]


async def test_a_failed_run_resumes_where_it_stopped(engine: Engine, database_url: str) -> None:
    ids = build_corpus(engine)
    rules = chain_rules(ids)
    last_evaluate = rules.pop(-2)  # sq2's second evaluation: the model "fails" there
    model = ScriptedChatModel(rules=rules)
    svc = services(engine, database_url, [])
    svc.llm = LlmClient(model=model, model_name="scripted", engine=engine, use_cache=False)
    graph = build_grasp_graph(svc, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "resume-1"}}
    context = GraspContext(corpus="films")
    question = "Where was the director of Blue Harbor born?"

    with pytest.raises(LlmCallError, match="no scripted reply matches"):
        await graph.ainvoke({"question": question}, config, context=context)
    asked_before = len(model.prompts)
    model.rules.insert(-1, last_evaluate)
    state = await graph.ainvoke(None, config, context=context)

    # Only the failed evaluation and the synthesis are asked again; nothing before is repeated.
    again = model.prompts[asked_before:]
    assert len(again) == 2
    assert again[0].startswith(EVALUATE) and again[1].startswith(SYNTHESIZE)
    assert state["final_answer"] == "Lisbon"
    assert (state["tokens"]["input_tokens"], state["tokens"]["output_tokens"]) == (1770, 181)


async def test_the_python_api_answers_and_refuses_unknown_settings(
    engine: Engine, database_url: str
) -> None:
    build_corpus(engine)
    question = "Where was Tomas Reyd born?"
    rules = [
        rule(REWRITE, reply={"search_statement": "Tomas Reyd was born in a city.", "keywords": []}),
        rule(EVALUATE, "born in Lisbon", reply={"action": "DONE", "answer": "Lisbon"}),
        rule(SYNTHESIZE, reply={"answer": "Lisbon"}),
    ]
    svc = services(engine, database_url, rules)
    result = await answer(question, "films", services=svc, planner="off", retrieval="dense")
    assert (result["final_answer"], result["tokens"]["calls"]) == ("Lisbon", 3)
    with pytest.raises(TypeError, match=r"unknown GRASP settings \['max_iteration'\]"):
        await answer(question, "films", services=svc, max_iteration=2)
