from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import Engine, select

from graphs.agent.context import GraspContext
from graphs.agent.graph import build_grasp_graph
from graphs.api import answer
from graphs.models.scripted_model import ScriptedChatModel
from nodes.llm.client import LlmCallError, LlmClient
from store.engine import transaction
from store.ledger_models import LlmCall
from tests.fixtures.films import (
    EVALUATE,
    PAPER_VOTE,
    PLAN,
    REWRITE,
    SUB_AGENT_ROUND,
    SYNTHESIZE,
    build_corpus,
    chain_rules,
    comparison_rules,
    rule,
    run,
    services,
)


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
        ["rewrite", "gather_evidence", "evaluate"]
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
    context = GraspContext(corpus="films", **PAPER_VOTE)
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
