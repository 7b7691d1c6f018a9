"""The guessing evaluator: an answer always; DONE when the evidence states it, a guess kept last."""

import json
import re
from typing import Any

from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply
from nodes.agent.evaluate import UNKNOWN
from store.grasp_retrieval import Evidence
from tests.fixtures.evaluator import evaluate_once

SUB_QUESTION = "Who directed Jump for Glory?"
EVIDENCE = [
    Evidence(
        id=7,
        title="Jump for Glory",
        text="Jump for Glory is a 1937 British romantic drama film directed by Raoul Walsh.",
        score=1.0,
    )
]


def client(*, last_round: bool, **body: Any) -> ScriptedChatModel:
    # The rule matches only the prompt of the round it is written for, so a wrong prompt fails.
    marker = "give your best guess" if last_round else r"Sub-question: .*\n(?![\s\S]*last search)"
    rule = ScriptedReply(
        when=[re.escape(f"Sub-question: {SUB_QUESTION}"), marker], reply=json.dumps(body)
    )
    return ScriptedChatModel(rules=[rule])


async def judge(model: ScriptedChatModel, *, last_round: bool = False) -> Any:
    reply, results = await evaluate_once(
        model,
        question="Who is the spouse of the director of Jump for Glory?",
        sub_question=SUB_QUESTION,
        evidence=EVIDENCE,
        style="guess",
        last_round=last_round,
    )
    assert len(results) == 1
    return reply


async def test_a_stated_answer_is_final() -> None:
    reply = await judge(client(last_round=False, answer="Raoul Walsh", stated=True))
    assert (reply.action, reply.answer, reply.observations) == ("DONE", "Raoul Walsh", [])


async def test_a_guess_searches_again_on_the_same_statement() -> None:
    reply = await judge(client(last_round=False, answer="John Ford", stated=False))
    # No new statement: the sub-agent searches its last one again, visited rows excluded.
    assert (reply.action, reply.search_statement, reply.keywords) == ("QUERY_AGAIN", "", [])


async def test_in_the_last_round_the_guess_is_the_answer() -> None:
    reply = await judge(client(last_round=True, answer="John Ford", stated=False), last_round=True)
    assert (reply.action, reply.answer) == ("DONE", "John Ford")


async def test_an_empty_reply_in_the_last_round_is_unknown() -> None:
    reply = await judge(client(last_round=True, answer=" ", stated=True), last_round=True)
    assert (reply.action, reply.answer) == ("DONE", UNKNOWN)
