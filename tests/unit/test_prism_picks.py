"""PRISM's Selector and Adder replies are bounded: at most `max_picks` of the offered numbers."""

import json
import re
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply
from graphs.peers.prism import PrismContext
from nodes.llm.client import CallTag, LlmClient
from nodes.peers.prism import Agent, chosen, numbers_schema, pick_evidence
from store.retrieval import PassageText

CANDIDATES = [PassageText(n, f"Title {n}", f"Text of passage {n}.") for n in range(1, 7)]


def client(reply: dict[str, Any], schemas: list[dict[str, Any]]) -> LlmClient:
    def record(model: BaseChatModel, schema: dict[str, Any]) -> Runnable[Any, Any]:
        schemas.append(schema)
        return model

    rule = ScriptedReply(when=[re.escape("Candidates:")], reply=json.dumps(reply))
    return LlmClient(
        model=ScriptedChatModel(rules=[rule]),
        model_name="scripted",
        use_cache=False,
        schema_binder=record,
    )


@pytest.mark.parametrize(("agent", "key"), [("select", "keep"), ("add", "add")])
async def test_a_reply_naming_too_many_keeps_the_first_named_and_the_call_carries_the_bound(
    agent: Agent, key: str
) -> None:
    schemas: list[dict[str, Any]] = []
    llm = client({key: [6, 2, 2, 9, 4, 1, 3]}, schemas)
    picked, results = await pick_evidence(
        llm,
        agent,
        question="Q?",
        sub_questions=["S?"],
        candidates=CANDIDATES,
        kept=[5],
        offered=[1, 2, 3, 4, 6],
        max_chars=0,
        most=3,
        tag=CallTag(node="select"),
    )
    # 9 was never offered and 2 counts once: the first three named are 6, 2 and 4.
    assert picked == [2, 4, 6]
    assert len(results) == 1
    assert schemas == [numbers_schema(key, [1, 2, 3, 4, 6], 3)]
    assert schemas[0]["properties"][key] == {
        "type": "array",
        "items": {"type": "integer", "enum": [1, 2, 3, 4, 6]},
        "maxItems": 3,
    }


def test_the_bound_is_a_grammar_llama_cpp_accepts_with_a_bounded_list() -> None:
    grammar = json_schema_to_gbnf(json.dumps(numbers_schema("keep", [3, 7, 12], 2)))
    LlamaGrammar.from_string(grammar, verbose=False)
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines() if " ::= " in line)
    assert rules["keep-item"] == '"3" | "7" | "12"'
    # At most two items: one, then an optional second, never a repetition (`*`) of it.
    assert rules["keep"] == '"[" space (keep-item ("," space keep-item)?)? "]" space'


def test_chosen_counts_each_offered_number_once_up_to_the_bound() -> None:
    assert chosen([4, 4, 3, 7, 1], offered=[1, 2, 4], most=10) == [1, 4]
    assert chosen([4, 4, 3, 7, 1], offered=[1, 2, 4], most=1) == [4]
    assert chosen([], offered=[1, 2], most=3) == []


def test_max_picks_is_at_least_one() -> None:
    assert PrismContext(corpus="films").max_picks == 10
    with pytest.raises(ValueError, match="max_picks"):
        PrismContext(corpus="films", max_picks=0)
