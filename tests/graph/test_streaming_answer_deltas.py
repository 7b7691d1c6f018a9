"""Answer deltas from a growing JSON reply (AnswerDeltas, partial_field); a local model's stream."""

from typing import Any
from uuid import uuid4

import pytest
from langchain_core.messages import HumanMessage

from graphs.agent.answer_deltas import AnswerDeltas
from graphs.agent.answer_deltas import answer_text as shown_answer
from graphs.models.gguf_assembly import ModelPartsMissingError, resolve_gguf
from graphs.models.local_model import LocalLlamaChatModel
from graphs.runtime.settings import Settings
from nodes.llm.reply import partial_field


async def feed(deltas: AnswerDeltas, chunks: list[str]) -> None:
    """One model reply, chunk by chunk, as LangChain reports it to a listener."""
    await deltas.on_chat_model_start({}, [[]], run_id=uuid4())
    for chunk in chunks:
        await deltas.on_llm_new_token(chunk, run_id=uuid4())


async def test_answer_deltas_start_over_on_a_re_ask_and_end_on_the_final_answer() -> None:
    written: list[dict[str, Any]] = []
    deltas = AnswerDeltas(written.append)

    await feed(deltas, ['{"answer": "Pa', "ris ", "is it"])  # malformed, so asked again
    await feed(deltas, ['{"answer":', ' " Lisbon ', '", "justification": "x"}'])
    deltas.finish("Lisbon")

    assert written == [
        {"event": "answer_delta", "text": "Pa"},
        {"event": "answer_delta", "text": "ris"},  # the trailing space waits
        {"event": "answer_delta", "text": " is it"},
        {"event": "answer_restart"},
        {"event": "answer_delta", "text": "Lisbon"},  # leading and trailing spaces trimmed
    ]
    assert shown_answer(written) == "Lisbon"


async def test_answer_deltas_send_a_fallback_answer_whole() -> None:
    written: list[dict[str, Any]] = []
    deltas = AnswerDeltas(written.append)
    await feed(deltas, ['{"answer": "Tomas', " Reyd's"])

    deltas.finish("Lisbon")  # the synthesis failed: the last hop's answer stands
    assert written[-2:] == [
        {"event": "answer_restart"},
        {"event": "answer_delta", "text": "Lisbon"},
    ]
    assert shown_answer(written) == "Lisbon"

    nothing_streamed: list[dict[str, Any]] = []
    AnswerDeltas(nothing_streamed.append).finish("Lisbon")
    assert nothing_streamed == [{"event": "answer_delta", "text": "Lisbon"}]


def test_partial_field_reads_a_growing_json_reply() -> None:
    assert partial_field("", "answer") == ""
    assert partial_field('{"answ', "answer") == ""
    assert partial_field('{"answer": ', "answer") == ""
    assert partial_field('{"answer": "Lis', "answer") == "Lis"
    assert partial_field('{"answer": "Lisbon", "justification": "x"}', "answer") == "Lisbon"
    assert partial_field('{"answer": "say \\"hi', "answer") == 'say "hi'
    assert partial_field('{"answer": "a\\', "answer") == "a"
    assert partial_field('{"answer": "caf\\u00e', "answer") == "caf"
    assert partial_field('{"answer":"caf\\u00e9"}', "answer") == "café"


def local_model(max_tokens: int) -> LocalLlamaChatModel:
    """The shipped local model in JSON mode; the test is skipped where it is not built."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not built in this environment")
    try:
        path = resolve_gguf("local:smollm2", Settings().model_dir)
    except ModelPartsMissingError as exc:
        pytest.skip(str(exc))
    return LocalLlamaChatModel(
        model_path=str(path), n_ctx=2048, max_tokens=max_tokens, json_mode=True
    )


@pytest.mark.e2e
async def test_the_local_model_streams_with_usage_and_frees_its_lock() -> None:
    model = local_model(max_tokens=24)
    prompt = [HumanMessage('Give a JSON object with key "city" for the capital of France.')]

    chunks = [chunk async for chunk in model.astream(prompt)]

    whole = chunks[0]
    for chunk in chunks[1:]:
        whole += chunk
    assert len([c for c in chunks if c.content]) > 1
    assert whole.usage_metadata is not None
    assert whole.usage_metadata["input_tokens"] > 10
    assert 0 < whole.usage_metadata["output_tokens"] <= 24 + 1
    # A consumer that stops after one chunk (a cancelled run) must not keep the model locked.
    stream = model.astream(prompt)
    await anext(stream)
    await stream.aclose()
    assert (await model.ainvoke(prompt)).usage_metadata is not None


@pytest.mark.e2e
async def test_the_local_model_streams_the_answer_words_as_deltas() -> None:
    model = local_model(max_tokens=40)
    prompt = [
        HumanMessage(
            'Reply with a JSON object {"answer": "...", "justification": "..."}: the answer is '
            "the capital of France written as 'Paris, France', the justification at most five words."
        )
    ]
    written: list[dict[str, Any]] = []
    deltas = AnswerDeltas(written.append)

    with deltas.listening():
        reply = "".join([str(chunk.content) async for chunk in model.astream(prompt)])
    answer = partial_field(reply, "answer").strip()  # the reply may be cut short
    deltas.finish(answer)

    assert answer and shown_answer(written) == answer
    streamed = [e for e in written if e["event"] == "answer_delta"]
    assert len(streamed) > 1, written  # token by token, not one piece at the end
