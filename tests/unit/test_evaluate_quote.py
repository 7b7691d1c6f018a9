"""The quoting evaluator: DONE only with a quote grounded in the evidence or the notes."""

import json
import re
from typing import Any

from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply
from nodes.agent.evaluate import UNKNOWN, quote_is_grounded
from store.grasp_retrieval import Evidence
from tests.fixtures.evaluator import evaluate_once

SUB_QUESTION = "Who directed Jump for Glory?"
EVIDENCE = [
    Evidence(
        id=7,
        title="Jump for Glory",
        text="Jump for Glory is a 1937 British romantic drama film directed by Raoul Walsh and "
        "starring Douglas Fairbanks Jr.. The film's sets were designed by Edward Carrick.",
        score=1.0,
    )
]


def client(**body: Any) -> ScriptedChatModel:
    rule = ScriptedReply(when=[re.escape(f"Sub-question: {SUB_QUESTION}")], reply=json.dumps(body))
    return ScriptedChatModel(rules=[rule])


async def judge(
    model: ScriptedChatModel, *, last_round: bool = False, notes: list[str] | None = None
) -> Any:
    reply, results = await evaluate_once(
        model,
        question="Who is the spouse of the director of Jump for Glory?",
        sub_question=SUB_QUESTION,
        evidence=EVIDENCE,
        style="quote",
        last_round=last_round,
        notes=notes or [],
    )
    assert len(results) == 1
    return reply


async def test_a_grounded_quote_makes_the_answer_final_and_a_note() -> None:
    quote = "Jump for Glory is a 1937 British romantic drama film directed by Raoul Walsh"
    reply = await judge(client(quote=quote, answer="Raoul Walsh", observations=[]))
    assert (reply.action, reply.answer) == ("DONE", "Raoul Walsh")
    assert reply.observations == [quote]


async def test_an_answer_without_a_grounded_quote_searches_again() -> None:
    invented = "Raoul Walsh was married to Miriam Cooper from 1916 to 1926."
    reply = await judge(
        client(
            quote=invented,
            answer="Raoul Walsh",
            search_statement="Jump for Glory was directed by someone.",
            keywords=["Jump for Glory", "director"],
        )
    )
    assert (reply.action, reply.answer) == ("QUERY_AGAIN", "")
    assert reply.keywords == ["Jump for Glory", "director"]


async def test_in_the_last_round_no_grounded_quote_means_unknown() -> None:
    reply = await judge(client(quote="", answer="Raoul Walsh"), last_round=True)
    assert (reply.action, reply.answer) == ("DONE", UNKNOWN)


async def test_a_quote_of_an_earlier_note_counts() -> None:
    note = "Raoul Walsh directed Jump for Glory."
    reply = await judge(client(quote=note, answer="Raoul Walsh"), notes=[note])
    assert (reply.action, reply.answer) == ("DONE", "Raoul Walsh")


def test_grounding_tolerates_small_slips_but_not_new_sentences() -> None:
    source = "Iron Maiden are an English heavy metal band formed in Leyton, East London, in 1975."
    assert quote_is_grounded(
        "Iron Maiden are an English heavy metal band formed in Leyton", [source]
    )
    # one word changed of ten still passes (80 %), three of ten do not
    assert quote_is_grounded(
        "Iron Maiden is an English heavy metal band formed in Leyton", [source]
    )
    assert not quote_is_grounded("Iron Maiden is a British rock group formed in Leyton", [source])
    assert not quote_is_grounded("", [source])
