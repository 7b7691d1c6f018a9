import asyncio
import json

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from graphs.models.gguf_assembly import ModelPartsMissingError, resolve_gguf
from graphs.models.local_model import LocalLlamaChatModel
from graphs.runtime.settings import Settings
from nodes.agent.evaluate import INSTRUCTIONS, EvaluationReply, reply_schema

pytestmark = pytest.mark.e2e

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not built in this environment")


@pytest.fixture(scope="module")
def smollm2() -> LocalLlamaChatModel:
    try:
        path = resolve_gguf("local:smollm2", Settings().model_dir)
    except ModelPartsMissingError as exc:
        pytest.skip(str(exc))
    return LocalLlamaChatModel(model_path=str(path), n_ctx=2048, max_tokens=96)


@pytest.fixture(scope="module")
def qwen() -> LocalLlamaChatModel:
    try:
        path = resolve_gguf("local", Settings().model_dir)
    except ModelPartsMissingError as exc:
        pytest.skip(str(exc))
    return LocalLlamaChatModel(model_path=str(path), n_ctx=2048, max_tokens=16, temperature=0.0)


def test_json_mode_returns_json_and_usage(smollm2: LocalLlamaChatModel) -> None:
    model = smollm2.bind(response_format={"type": "json_object"})

    reply = model.invoke(
        [
            SystemMessage("You reply with a JSON object."),
            HumanMessage('Give a JSON object with keys "city" and "country" for Paris.'),
        ]
    )

    assert isinstance(json.loads(str(reply.content)), dict)
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["input_tokens"] > 0
    assert reply.usage_metadata["output_tokens"] > 0
    assert reply.usage_metadata["total_tokens"] == (
        reply.usage_metadata["input_tokens"] + reply.usage_metadata["output_tokens"]
    )
    assert reply.response_metadata["model_name"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert reply.response_metadata["finish_reason"] in {"stop", "length"}


def test_json_schema_structured_output(smollm2: LocalLlamaChatModel) -> None:
    class City(BaseModel):
        name: str
        population: int

    result = smollm2.with_structured_output(City).invoke("Describe the city of Paris as JSON.")

    assert isinstance(result, City)


def test_prompt_longer_than_context_is_refused(smollm2: LocalLlamaChatModel) -> None:
    with pytest.raises(ValueError, match="n_ctx=2048"):
        smollm2.invoke("word " * 3000)


def test_instances_share_one_loaded_model(smollm2: LocalLlamaChatModel) -> None:
    twin = LocalLlamaChatModel(model_path=smollm2.model_path, n_ctx=2048, temperature=0.7)

    assert twin._shared() is smollm2._shared()


def test_qwen_answers_capital_of_france(qwen: LocalLlamaChatModel) -> None:
    reply = qwen.invoke("What is the capital of France? Answer with one word.")

    assert "paris" in str(reply.content).lower()
    assert reply.response_metadata["model_name"] == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


async def test_qwen_concurrent_calls_both_return(qwen: LocalLlamaChatModel) -> None:
    first, second = await asyncio.wait_for(
        asyncio.gather(
            qwen.ainvoke("What is the capital of France? Answer with one word."),
            qwen.ainvoke("What is the capital of Italy? Answer with one word."),
        ),
        timeout=300,
    )

    assert "paris" in str(first.content).lower()
    assert "rome" in str(second.content).lower()


def test_the_grammar_leaves_a_done_replys_search_empty(qwen: LocalLlamaChatModel) -> None:
    # The real model under llama.cpp's grammar for the evaluator's last-round reply: whatever it
    # would have written after "DONE", the search statement and keywords come out empty.
    model = LocalLlamaChatModel(
        model_path=qwen.model_path, n_ctx=2048, max_tokens=400, temperature=0.0
    ).bind(response_format={"type": "json_object", "schema": reply_schema(last_round=True)})
    reply = model.invoke(
        [
            SystemMessage(INSTRUCTIONS["brief"]),
            HumanMessage(
                "Question: Where was Marie Duval born?\nSub-question: Where was Marie Duval "
                "born?\nNew evidence:\n[1] Marie Duval: Marie Duval was born in Lyon."
            ),
        ]
    )
    judged = EvaluationReply.model_validate_json(str(reply.content))
    assert (judged.action, judged.search_statement, judged.keywords) == ("DONE", "", [])
    assert "lyon" in judged.answer.lower()
