"""The echo check: an answer made only of the sub-question's own words is asked about once more."""

import json
import re
from typing import Any

import pytest

from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply
from nodes.agent.evaluate import EvaluatorStyle, echoes
from store.grasp_retrieval import Evidence
from tests.fixtures.evaluator import evaluate_once

SUB_QUESTION = "Which state borders Florida?"
EVIDENCE = [
    Evidence(
        id=3,
        title="Florida",
        text="Florida is a state in the southeastern United States, bordered to the north by "
        "Georgia and to the northwest by Alabama.",
        score=1.0,
    )
]
QUOTE = "bordered to the north by Georgia and to the northwest by Alabama."


def script(first: dict[str, Any], second: dict[str, Any]) -> ScriptedChatModel:
    """The first reply to the evaluation, then the reply to the re-check (which names it)."""
    asked = re.escape(f"Sub-question: {SUB_QUESTION}")
    recheck = re.escape("is named in the sub-question itself")
    return ScriptedChatModel(
        rules=[
            ScriptedReply(when=[asked, recheck], reply=json.dumps(second), input_tokens=300),
            ScriptedReply(when=[asked], reply=json.dumps(first), input_tokens=200),
        ]
    )


async def judge(
    model: ScriptedChatModel, *, echo_check: bool, style: EvaluatorStyle = "free"
) -> tuple[Any, list[Any]]:
    return await evaluate_once(
        model,
        question="How many Publix stores are in the state that borders Florida to the north?",
        sub_question=SUB_QUESTION,
        evidence=EVIDENCE,
        style=style,
        echo_check=echo_check,
    )


ECHO = {"observations": [], "action": "DONE", "answer": "Florida"}
RIGHT = {"observations": ["Georgia borders Florida."], "action": "DONE", "answer": "Georgia"}


async def test_an_echoed_answer_is_asked_again_and_the_second_reply_stands() -> None:
    model = script(ECHO, RIGHT)
    reply, results = await judge(model, echo_check=True)

    assert (reply.action, reply.answer) == ("DONE", "Georgia")
    assert [r.input_tokens for r in results] == [200, 300]  # both calls are counted
    # The re-check shows the model its own first reply, then names the slip.
    second = model.prompts[1]
    assert '"answer": "Florida"' in second
    assert second.rstrip().endswith("reply with the JSON object in the same format.")


async def test_without_the_setting_the_echo_is_the_answer() -> None:
    model = script(ECHO, RIGHT)
    reply, results = await judge(model, echo_check=False)
    assert (reply.answer, len(results)) == ("Florida", 1)


async def test_a_fitting_answer_costs_no_second_call() -> None:
    model = script(RIGHT, ECHO)
    reply, results = await judge(model, echo_check=True)
    assert (reply.answer, len(results), len(model.prompts)) == ("Georgia", 1, 1)


async def test_the_re_check_may_send_the_agent_searching_again() -> None:
    again = {
        "observations": [],
        "action": "QUERY_AGAIN",
        "answer": "",
        "search_statement": "A state borders Florida.",
        "keywords": ["Florida", "border"],
    }
    reply, _ = await judge(script(ECHO, again), echo_check=True)
    assert (reply.action, reply.keywords) == ("QUERY_AGAIN", ["Florida", "border"])


async def test_the_quoting_evaluator_is_re_checked_too() -> None:
    first = {"quote": "Florida is a state in the southeastern United States", "answer": "Florida"}
    second = {"quote": QUOTE, "answer": "Georgia"}
    reply, results = await judge(script(first, second), echo_check=True, style="quote")
    assert (reply.action, reply.answer, len(results)) == ("DONE", "Georgia", 2)


@pytest.mark.parametrize(
    ("answer", "sub_question", "expected"),
    [
        ("Florida", "Which state borders Florida?", True),
        (
            "The Journal of Psychotherapy Integration",
            "Who published the Journal of Psychotherapy Integration?",
            True,
        ),
        ("Georgia", "Which state borders Florida?", False),
        ("Frederick County, Maryland", "Which county borders Frederick County?", False),
        ("Alice Smith", "Who is older, Alice Smith or Bob Jones?", False),  # a choice
        ("no", "Was Florida a Confederate state?", False),
        ("unknown", "Which state borders Florida?", False),
        ("", "Which state borders Florida?", False),
    ],
)
def test_what_counts_as_an_echo(answer: str, sub_question: str, expected: bool) -> None:
    assert echoes(answer, sub_question) is expected
