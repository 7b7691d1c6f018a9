"""`evaluator_prompt=answer`: the brief evaluator without notes, its reply starting at its action."""

import json
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply
from nodes.agent.evaluate import ANSWER_SYSTEM, BRIEF_SYSTEM, reply_schema
from nodes.llm.bounded import without_field
from store.grasp_retrieval import Evidence
from tests.fixtures.evaluator import evaluate_once

EVIDENCE = [Evidence(id=1, title="Marie Duval", text="Marie Duval was born in Lyon.", score=1.0)]


def test_without_field_drops_the_property_and_its_requirement() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "required": ["a", "b"],
    }
    assert without_field(schema, "a") == {
        "type": "object",
        "properties": {"b": {"type": "string"}},
        "required": ["b"],
    }
    assert schema["required"] == ["a", "b"]  # the original is left as it was


def test_each_branch_is_the_noted_branch_without_its_notes() -> None:
    for last_round in (False, True):
        noted, plain = reply_schema(last_round), reply_schema(last_round, notes=False)
        noted_branches = noted.get("anyOf", [noted])
        plain_branches = plain.get("anyOf", [plain])
        assert len(plain_branches) == len(noted_branches) == (1 if last_round else 2)
        for with_notes, without in zip(noted_branches, plain_branches, strict=True):
            expected = dict(with_notes["properties"])
            del expected["observations"]
            assert without["properties"] == expected
            assert without["required"] == ["action", "answer", "search_statement", "keywords"]


def test_llama_cpp_grammar_starts_the_reply_at_its_action() -> None:
    grammar = json_schema_to_gbnf(json.dumps(reply_schema(last_round=False, notes=False)))
    LlamaGrammar.from_string(grammar, verbose=False)
    assert "observations" not in grammar
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines() if " ::= " in line)
    assert rules["alternative-0"].startswith('"{" space alternative-0-action-kv')


def test_the_instructions_name_no_notes_and_keep_the_other_duties() -> None:
    assert "observations" not in ANSWER_SYSTEM and "observations" in BRIEF_SYSTEM
    for field in ('"action"', '"answer"', '"search_statement"', '"keywords"'):
        assert field in ANSWER_SYSTEM
    assert len(ANSWER_SYSTEM) < len(BRIEF_SYSTEM)


async def test_the_answer_choice_sends_its_prompt_and_schema_and_reads_the_reply() -> None:
    schemas: list[Any] = []

    def record(model: BaseChatModel, schema: dict[str, Any]) -> Runnable[Any, Any]:
        schemas.append(schema)
        return model

    reply = {"action": "DONE", "answer": "Lyon", "search_statement": "", "keywords": []}
    model = ScriptedChatModel(
        rules=[ScriptedReply(when=["Sub-question:"], reply=json.dumps(reply))]
    )
    judged, results = await evaluate_once(
        model,
        question="Where was Marie Duval born?",
        sub_question="Where was Marie Duval born?",
        evidence=EVIDENCE,
        bounded=True,
        schema_binder=record,
        instructions="answer",
    )
    assert (judged.action, judged.answer, judged.observations) == ("DONE", "Lyon", [])
    assert len(results) == 1
    assert schemas == [reply_schema(last_round=False, notes=False)]
    assert ANSWER_SYSTEM.splitlines()[0] in model.prompts[0]
    assert "observations" not in model.prompts[0]
