"""`bounded_replies`: the evaluator's reply held to a schema whose strings and lists are bounded."""

import json
from dataclasses import replace
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf
from sqlalchemy import Engine

from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply
from nodes.agent.evaluate import EvaluationReply, reply_schema
from nodes.llm.bounded import bounded_schema
from nodes.llm.client import SchemaBinder
from store.grasp_retrieval import Evidence
from tests.fixtures.evaluator import evaluate_once
from tests.fixtures.films import EVALUATE, build_corpus, chain_rules, run, services

BOUNDED_STRING = {"type": "string", "maxLength": 300}
BOUNDED_LIST = {"type": "array", "items": BOUNDED_STRING, "maxItems": 5}
EVIDENCE = [Evidence(id=1, title="Marie Duval", text="Marie Duval was born in Lyon.", score=1.0)]


def test_every_string_and_list_is_bounded_and_every_field_required_in_order() -> None:
    assert bounded_schema(EvaluationReply) == {
        "type": "object",
        "properties": {
            "observations": BOUNDED_LIST,
            "action": {"enum": ["DONE", "QUERY_AGAIN"], "type": "string"},
            "answer": BOUNDED_STRING,
            "search_statement": BOUNDED_STRING,
            "keywords": BOUNDED_LIST,
        },
        "required": ["observations", "action", "answer", "search_statement", "keywords"],
    }


def test_llama_cpp_makes_the_bound_a_grammar_that_ends_every_string() -> None:
    grammar = json_schema_to_gbnf(json.dumps(bounded_schema(EvaluationReply)))
    LlamaGrammar.from_string(grammar, verbose=False)
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines() if " ::= " in line)
    # 300 nested optional characters between the quotes, never an open-ended repetition.
    assert rules["answer"].count("char") == 300
    assert "*" not in rules["answer"] and "+" not in rules["answer"]
    assert rules["action"] == '"\\"DONE\\"" | "\\"QUERY_AGAIN\\""'


def test_the_reply_leaves_empty_what_its_action_does_not_use() -> None:
    base = bounded_schema(EvaluationReply)["properties"]
    empty_list = {"type": "array", "items": {"type": "string"}, "maxItems": 0}
    done, again = reply_schema(last_round=False)["anyOf"]
    assert done["properties"] == base | {
        "action": {"enum": ["DONE"]},
        "search_statement": {"enum": [""]},
        "keywords": empty_list,
    }
    assert again["properties"] == base | {
        "action": {"enum": ["QUERY_AGAIN"]},
        "answer": {"enum": [""]},
    }
    assert done["required"] == again["required"] == list(base)
    # the last round can only answer
    assert reply_schema(last_round=True) == done


def test_llama_cpp_makes_the_two_branches_one_grammar() -> None:
    grammar = json_schema_to_gbnf(json.dumps(reply_schema(last_round=False)))
    LlamaGrammar.from_string(grammar, verbose=False)
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines() if " ::= " in line)
    assert rules["root"] == "alternative-0 | alternative-1"
    assert rules["alternative-0-action"] == '"\\"DONE\\""'
    assert rules["alternative-0-search-statement"] == '"\\"\\""'
    assert rules["alternative-0-keywords"].split() == ['"["', "space", '"]"', "space"]
    assert rules["alternative-1-answer"] == '"\\"\\""'
    assert rules["alternative-1-search-statement"].count("char") == 300


def recorder(schemas: list[Any]) -> SchemaBinder:
    """A schema binder that notes each schema it is given and leaves the model as it is."""

    def record(model: BaseChatModel, schema: dict[str, Any]) -> Runnable[Any, Any]:
        schemas.append(schema)
        return model

    return record


@pytest.mark.parametrize(
    ("bounded", "last_round"), [(True, False), (True, True), (False, False), (False, True)]
)
async def test_the_bounded_schema_is_sent_only_when_asked(bounded: bool, last_round: bool) -> None:
    schemas: list[Any] = []
    reply = {"action": "DONE", "answer": "Lyon"}
    model = ScriptedChatModel(
        rules=[ScriptedReply(when=["Sub-question:"], reply=json.dumps(reply))]
    )
    judged, results = await evaluate_once(
        model,
        question="Where was Marie Duval born?",
        sub_question="Where was Marie Duval born?",
        evidence=EVIDENCE,
        last_round=last_round,
        bounded=bounded,
        schema_binder=recorder(schemas),
    )
    assert (judged.action, judged.answer, len(results)) == ("DONE", "Lyon", 1)
    assert schemas == ([reply_schema(last_round)] if bounded else [])


async def test_the_run_setting_reaches_every_evaluator_call(
    engine: Engine, database_url: str
) -> None:
    svc = services(engine, database_url, chain_rules(build_corpus(engine)))
    schemas: list[Any] = []
    svc = replace(svc, llm=replace(svc.llm, schema_binder=recorder(schemas)))
    state, _ = await run(svc, "Where was the director of Blue Harbor born?", bounded_replies=True)

    assert isinstance(svc.llm.model, ScriptedChatModel)
    evaluations = [p for p in svc.llm.model.prompts if EVALUATE in p]
    assert state["final_answer"] == "Lisbon" and len(evaluations) == 3
    # none of the three is a last round: each may still search again (the planner's own
    # schema is among those recorded too)
    assert schemas.count(reply_schema(last_round=False)) == len(evaluations)
