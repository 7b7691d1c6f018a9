"""Plan review: the run pauses after the planner with an Agent Inbox payload, then accepts, runs an
edit, refuses a broken edit (staying paused) or plans again with a reviewer's words."""

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from langgraph.types import Command
from sqlalchemy import Engine

from graphs.agent.context import GraspContext
from graphs.agent.graph import GraspGraph, build_grasp_graph
from graphs.agent.plan_review import HOW
from graphs.models.scripted_model import ScriptedChatModel
from graphs.runtime.checkpoints import open_checkpointer
from nodes.llm.client import LlmClient
from tests.fixtures.films import PAPER_VOTE, build_corpus, services
from tests.fixtures.steering import (
    GUIDANCE,
    NEW_PLAN,
    PLAN_SENTENCE,
    QUESTION,
    REWORDED,
    asked,
    steering_rules,
    stream,
)

CONTEXT = GraspContext(corpus="films", review_plan=True, **PAPER_VOTE)
CHAIN = ["Who directed Blue Harbor?", "Where was #1 born?"]


@dataclass
class Rig:
    graph: GraspGraph
    model: ScriptedChatModel
    config: Any

    async def pause(self) -> tuple[Any, list[dict[str, Any]]]:
        """Ask the question; the paused state and the custom events up to the pause."""
        events = await stream(self.graph, {"question": QUESTION}, self.config, CONTEXT)
        return await self.graph.aget_state(self.config), events

    async def reply(self, value: Any) -> tuple[Any, list[dict[str, Any]]]:
        """Resume with a reviewer's reply; the state after and the events on the way."""
        events = await stream(self.graph, Command(resume=value), self.config, CONTEXT)
        return await self.graph.aget_state(self.config), events


@pytest.fixture
async def rig(
    engine: Engine, database_url: str, request: pytest.FixtureRequest
) -> AsyncIterator[Rig]:
    model = ScriptedChatModel(rules=steering_rules(build_corpus(engine)))
    svc = services(engine, database_url, [])
    svc.llm = LlmClient(model=model, model_name="scripted", engine=engine, use_cache=False)
    async with open_checkpointer(database_url) as saver:
        thread = f"review-{request.node.name}"
        yield Rig(build_grasp_graph(svc, saver), model, {"configurable": {"thread_id": thread}})


def description(*notes: str, steps: list[str] = CHAIN, plan: str = PLAN_SENTENCE) -> str:
    needs = ["", *[" (needs #1)"] * (len(steps) - 1)]
    lines = [
        f"{n}. {text}{need}" for n, (text, need) in enumerate(zip(steps, needs, strict=True), 1)
    ]
    return "\n".join(
        [f"Review the plan for: {QUESTION}", *notes, "", f"Plan: {plan}", *lines, "", HOW]
    )


async def test_the_run_pauses_after_the_plan_with_an_agent_inbox_payload(rig: Rig) -> None:
    paused, events = await rig.pause()

    assert paused.next == ("review_plan",)
    assert [i.value for i in paused.interrupts] == [
        [
            {
                "action_request": {
                    "action": "review_plan",
                    "args": {"plan": PLAN_SENTENCE, "sub_questions": CHAIN},
                },
                "config": {
                    "allow_accept": True,
                    "allow_edit": True,
                    "allow_respond": True,
                    "allow_ignore": False,
                },
                "description": description(),
            }
        ]
    ]
    assert asked(rig.model.prompts) == ["plan"]  # no hop runs before the decision
    assert [e["event"] for e in events] == ["planning", "plan", "tokens"]


async def test_an_accepted_plan_runs_as_planned(rig: Rig) -> None:
    await rig.pause()
    done, events = await rig.reply({"type": "accept"})

    values = done.values
    assert (done.next, values["final_answer"]) == ((), "Lisbon")
    assert asked(rig.model.prompts) == [
        "plan",
        *["rewrite", "select", "evaluate"],
        *["rewrite", "select", "evaluate", "select", "evaluate"],
        "synthesize",
    ]
    # The same cost as a run without review: the pause spends nothing.
    tally = values["tokens"]
    assert (tally["input_tokens"], tally["output_tokens"], tally["calls"]) == (1770, 181, 10)
    assert values["plan_review"] == [
        {"action": "accept", "note": "", "before": CHAIN, "after": CHAIN, "plan": PLAN_SENTENCE}
    ]
    assert events[0] == {"event": "plan_review", "action": "accept"}


async def test_an_edit_is_checked_and_run(rig: Rig) -> None:
    await rig.pause()
    edit = {"plan": "Director, then birth city.", "sub_questions": [CHAIN[0], REWORDED]}
    # Agent Inbox sends the edited ActionRequest, in a list of one response.
    done, events = await rig.reply(
        [{"type": "edit", "args": {"action": "review_plan", "args": edit}}]
    )

    values = done.values
    assert values["sub_questions"] == [
        {"index": 1, "text": CHAIN[0], "depends_on": []},
        {"index": 2, "text": REWORDED, "depends_on": [1]},
    ]
    assert values["answers"] == {1: "Tomas Reyd", 2: "Lisbon"}
    assert values["final_answer"] == "the city of Lisbon"
    hop = ["rewrite", "select", "evaluate"]
    assert asked(rig.model.prompts) == ["plan", *hop, *hop, "synthesize"]
    assert values["plan_review"] == [
        {
            "action": "edit",
            "note": "",
            "before": CHAIN,
            "after": [CHAIN[0], REWORDED],
            "plan": "Director, then birth city.",
        }
    ]
    assert {"event": "plan_review", "action": "edit"} in events


@pytest.mark.parametrize(
    ("steps", "why"),
    [
        (
            [CHAIN[0], "Where was #3 born?"],
            "sub-question 2 refers to #3, but the plan has no sub-question 3 (it has 2)",
        ),
        (
            ["Who directed #2?", "Where was #1 born?"],
            "sub-questions depend on each other in a cycle: #1 → #2 → #1",
        ),
        ([], "the plan has no sub-questions"),
    ],
)
async def test_a_broken_edit_is_refused_and_the_run_stays_paused(
    rig: Rig, steps: list[str], why: str
) -> None:
    await rig.pause()
    paused, _ = await rig.reply({"type": "edit", "args": {"sub_questions": steps}})

    refusal = f"the edit is refused: {why}"
    assert paused.next == ("review_plan",)
    assert paused.interrupts[0].value[0]["description"] == description(f"Not used: {refusal}")
    assert paused.values["sub_questions"][1]["text"] == CHAIN[1]  # the plan is unchanged
    assert paused.values["plan_review"][-1]["action"] == "refused"
    assert paused.values["plan_review"][-1]["note"] == refusal
    assert asked(rig.model.prompts) == ["plan"]

    done, _ = await rig.reply({"type": "accept"})
    assert done.values["final_answer"] == "Lisbon"
    assert [r["action"] for r in done.values["plan_review"]] == ["refused", "accept"]


async def test_an_unknown_reply_is_refused(rig: Rig) -> None:
    await rig.pause()
    paused, _ = await rig.reply({"type": "ignore"})
    assert paused.next == ("review_plan",)
    assert paused.values["plan_review"][-1]["note"] == (
        "reply accept, edit or response (with text), not 'ignore'"
    )


async def test_a_response_plans_again_with_the_words_as_guidance(rig: Rig) -> None:
    await rig.pause()
    paused, events = await rig.reply({"type": "response", "args": GUIDANCE})

    # Planned again, and paused again on the new plan.
    assert paused.next == ("review_plan",)
    assert asked(rig.model.prompts) == ["plan", "plan"]
    second = rig.model.prompts[1]
    assert (
        f"Question: {QUESTION}" in second and "The earlier plan:\nPlan: " + PLAN_SENTENCE in second
    )
    assert second.endswith(f"The reviewer's words: {GUIDANCE}")
    assert paused.interrupts[0].value[0]["description"] == description(
        f"Planned again with your guidance: {GUIDANCE}", steps=[CHAIN[0], REWORDED], plan=NEW_PLAN
    )
    assert [e["event"] for e in events] == ["tokens", "plan_review", "plan"]

    done, _ = await rig.reply({"type": "accept"})
    values = done.values
    assert values["final_answer"] == "the city of Lisbon"
    assert [r["action"] for r in values["plan_review"]] == ["response", "accept"]
    assert values["plan_review"][0]["after"] == [CHAIN[0], REWORDED]
    # Both plans are paid for: the tally holds two planner calls.
    assert values["tokens"]["by_node"]["plan"] == {"input": 600, "output": 80, "calls": 2}
