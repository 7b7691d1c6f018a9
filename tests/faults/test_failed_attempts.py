"""Failed attempts reach the ledger flagged, with their tokens; retries still end in an answer."""

import asyncio
import json

import pytest
from pydantic import BaseModel
from sqlalchemy import Engine

from graphs.models.faulty import FAULT_KINDS, FaultyChatModel
from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply
from nodes.llm.client import CallTag, LlmCallError, LlmClient, MalformedOutput, system_and_user
from store.ledger import run_call_keys, run_failed_calls

GOOD = json.dumps({"answer": "Lisbon"})


class Answer(BaseModel):
    answer: str


def client(engine: Engine, model: ScriptedChatModel | FaultyChatModel) -> LlmClient:
    return LlmClient(
        model=model, model_name="scripted", engine=engine, use_cache=False, backoff_s=0
    )


def ask(llm: LlmClient, run: str, prompt: str = "Where?") -> Answer:
    tag = CallTag(node="synthesize", run_id=run)
    parsed, _ = asyncio.run(llm.complete_json(system_and_user("Answer.", prompt), Answer, tag))
    return parsed


def test_a_rate_limit_then_a_cut_reply_are_both_recorded_as_failed(engine: Engine) -> None:
    model = ScriptedChatModel(
        rules=[
            ScriptedReply(reply="", error="Error code: 429 - slow down", times=1),
            ScriptedReply(reply=GOOD[:7], input_tokens=90, output_tokens=3, times=1),
            ScriptedReply(reply=GOOD, input_tokens=120, output_tokens=6),
        ]
    )
    assert ask(client(engine, model), "r1") == Answer(answer="Lisbon")
    assert run_call_keys(engine, "r1", failed=False) == [("synthesize", None, None)]
    assert len(run_call_keys(engine, "r1", failed=True)) == 2
    assert run_failed_calls(engine, "r1") == (2, 90, 3)  # the 429 billed nothing


def test_a_permanent_error_is_not_retried_but_is_recorded(engine: Engine) -> None:
    model = ScriptedChatModel(
        rules=[ScriptedReply(reply="", error="context too long: prompt_tokens=503 of 500")]
    )
    with pytest.raises(LlmCallError, match="after 1 attempt"):
        ask(client(engine, model), "r2")
    assert run_failed_calls(engine, "r2") == (1, 0, 0)
    assert run_call_keys(engine, "r2", failed=False) == []


@pytest.mark.parametrize("rate", [0.1, 0.3])
def test_every_injected_fault_is_one_flagged_ledger_row(engine: Engine, rate: float) -> None:
    inner = ScriptedChatModel(rules=[ScriptedReply(reply=GOOD, input_tokens=50, output_tokens=8)])
    model = FaultyChatModel(inner=inner, rate=rate, seed=11)
    llm = client(engine, model)
    answered = 0
    for n in range(40):
        try:
            ask(llm, f"faults-{rate}", f"question {n}")
            answered += 1
        except MalformedOutput:  # both asks of one question came back unusable
            pass
    injected = sum(model.injected.values())
    assert injected > 0 and set(model.injected) <= set(FAULT_KINDS)
    failed, _, _ = run_failed_calls(engine, f"faults-{rate}")
    assert failed == injected
    assert len(run_call_keys(engine, f"faults-{rate}", failed=False)) == answered
    assert answered >= 36
