"""The planner's two reply formats with a scripted model: parsing, repair, re-ask, the schema."""

import json
import re
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableBinding
from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

from graphs.models.providers import bind_grammar
from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply
from nodes.agent.plan import (
    MAX_STEPS,
    LinkedPlanReply,
    PlanRejected,
    linked_schema,
    make_plan,
)
from nodes.llm.client import CallTag, LlmClient

QUESTION = "Where was the director of Blue Harbor born?"
TAG = CallTag(node="plan")


def reply(**body: Any) -> ScriptedReply:
    return ScriptedReply(when=[re.escape(f"Question: {QUESTION}")], reply=json.dumps(body), times=1)


def client(*replies: ScriptedReply, schemas: list[dict[str, Any]] | None = None) -> LlmClient:
    """A client over scripted replies; `schemas` records every schema handed to the binder."""

    def record(model: BaseChatModel, schema: dict[str, Any]) -> Runnable[Any, Any]:
        assert schemas is not None
        schemas.append(schema)
        return model

    return LlmClient(
        model=ScriptedChatModel(rules=list(replies)),
        model_name="scripted",
        use_cache=False,
        schema_binder=record if schemas is not None else None,
    )


def prompts(llm: LlmClient) -> list[str]:
    assert isinstance(llm.model, ScriptedChatModel)
    return llm.model.prompts


async def test_a_linked_plan_is_repaired_and_constrained_by_the_linked_schema() -> None:
    schemas: list[dict[str, Any]] = []
    llm = client(
        reply(
            plan="Director, then birthplace.",
            sub_questions=[
                {"needs": [], "question": "Who directed Blue Harbor?"},
                {"needs": [1], "question": "Where was he born?"},
            ],
        ),
        schemas=schemas,
    )
    plan = await make_plan(llm, question=QUESTION, tag=TAG)

    assert plan.text == "Director, then birthplace."
    assert plan.sub_questions == [
        {"index": 1, "text": "Who directed Blue Harbor?", "depends_on": []},
        {"index": 2, "text": "Where was #1 born?", "depends_on": [1]},
    ]
    assert [str(r) for r in plan.repairs] == ["sub-question 2: pronoun (#1 written in)"]
    assert len(plan.calls) == 1
    assert schemas == [linked_schema()]
    assert '"needs"' in prompts(llm)[0]


async def test_linked_replies_from_models_without_a_grammar_are_read_leniently() -> None:
    llm = client(
        reply(
            sub_questions=[
                "Who directed Blue Harbor?",
                {"needs": ["#1"], "text": "Where was the director born?"},
            ]
        )
    )
    plan = await make_plan(llm, question=QUESTION, tag=TAG)
    assert plan.text == ""
    assert [(s["text"], s["depends_on"]) for s in plan.sub_questions] == [
        ("Who directed Blue Harbor?", []),
        ("Where was #1 born?", [1]),
    ]


async def test_an_unrepairable_linked_plan_is_asked_again_with_the_problem() -> None:
    broken = [{"needs": [], "question": "Who is #1?"}]
    fixed = [{"needs": [], "question": "Who directed Blue Harbor?"}]
    llm = client(reply(plan="a", sub_questions=broken), reply(plan="b", sub_questions=fixed))
    plan = await make_plan(llm, question=QUESTION, tag=TAG)
    assert (plan.text, len(plan.calls)) == ("b", 2)
    assert (
        "That plan cannot be run: sub-question 1 refers to its own answer (#1)" in (prompts(llm)[1])
    )

    llm = client(reply(plan="a", sub_questions=broken), reply(plan="a", sub_questions=broken))
    with pytest.raises(PlanRejected, match="refers to its own answer") as rejected:
        await make_plan(llm, question=QUESTION, tag=TAG)
    assert len(rejected.value.results) == 2


def test_the_linked_schema_lets_each_step_need_only_earlier_steps() -> None:
    grammar = json_schema_to_gbnf(json.dumps(linked_schema()))
    LlamaGrammar.from_string(grammar, verbose=False)  # llama.cpp accepts it
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines() if " ::= " in line)
    assert rules["sub-questions-2-tuple-0-needs"] == '"[]"'
    assert rules["sub-questions-2-tuple-1-needs-item"] == '"1"'
    assert rules["sub-questions-2-tuple-2-needs-item"] == '"1" | "2"'
    # One alternative per plan length, 1 … MAX_STEPS; needs come before the question.
    assert rules["sub-questions"].count("|") == MAX_STEPS - 1
    step = rules["sub-questions-0-tuple-0"]
    assert step.index("needs-kv") < step.index("question-kv")


def test_the_local_binder_hands_the_linked_schema_to_llama_cpp() -> None:
    bound = bind_grammar(ScriptedChatModel(rules=[]), linked_schema())
    assert isinstance(bound, RunnableBinding)
    assert bound.kwargs["response_format"] == {"type": "json_object", "schema": linked_schema()}


def test_the_reply_model_takes_numbers_in_the_forms_models_write() -> None:
    parsed = LinkedPlanReply.model_validate(
        {"sub_questions": [{"question": "q", "needs": ["#2", "3", 1, "x"]}, {"question": "r"}]}
    )
    assert [d.needs for d in parsed.drafts()] == [(2, 3, 1), ()]
