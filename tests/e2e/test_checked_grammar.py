"""Grammar-held replies drawn free first, on a real llama.cpp model: greedy replies are the ones
the grammar-first chain gives, a refused draw is redrawn inside the grammar, sampled replies keep
to the schema."""

import json
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from graphs.models.checked_grammar import check_grammar_after_drawing
from graphs.models.gguf_assembly import ModelPartsMissingError, resolve_gguf
from graphs.models.local_model import LocalLlamaChatModel
from graphs.runtime.settings import Settings

pytestmark = pytest.mark.e2e

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not built here")

REPLY = {
    "type": "object",
    "properties": {
        "notes": {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 2},
        "action": {"enum": ["DONE", "QUERY_AGAIN"]},
        "answer": {"type": "string", "maxLength": 30},
    },
    "required": ["notes", "action", "answer"],
}
#: A value the model would never write unprompted, so the grammar must refuse its draws.
ZEBRA = {
    "type": "object",
    "properties": {"colour": {"enum": ["zebra-striped vermilion"]}},
    "required": ["colour"],
}
QUESTION = "Where was Ada Lovelace born? Evidence: Ada Lovelace was born in London in 1815."


def _llama() -> Any:
    try:
        path = str(resolve_gguf("local:smollm2", Settings().model_dir))
    except ModelPartsMissingError as exc:
        pytest.skip(str(exc))
    return llama_cpp.Llama(model_path=path, n_ctx=1024, n_threads=2, seed=0, verbose=False)


def _reply(llama: Any, schema: dict[str, Any], temperature: float, seed: int = 0) -> str:
    response = llama.create_chat_completion(
        messages=[
            {"role": "system", "content": "Reply with a JSON object."},
            {"role": "user", "content": QUESTION},
        ],
        max_tokens=80,
        temperature=temperature,
        seed=seed,
        response_format={"type": "json_object", "schema": schema},
    )
    return str(response["choices"][0]["message"]["content"])


def test_a_greedy_reply_is_the_grammar_first_reply_token_for_token() -> None:
    checked = _llama()
    checks = check_grammar_after_drawing(checked)
    reply = _reply(checked, REPLY, temperature=0.0)
    assert reply == _reply(_llama(), REPLY, temperature=0.0)
    assert json.loads(reply)["action"] in ("DONE", "QUERY_AGAIN")
    assert checks.passed > 0


def test_a_refused_draw_is_redrawn_inside_the_grammar() -> None:
    checked = _llama()
    checks = check_grammar_after_drawing(checked)
    reply = _reply(checked, ZEBRA, temperature=0.0)
    assert json.loads(reply) == {"colour": "zebra-striped vermilion"}
    assert checks.redrawn > 0
    assert reply == _reply(_llama(), ZEBRA, temperature=0.0)


def test_sampled_replies_keep_to_the_schema_and_replies_without_a_grammar_are_untouched() -> None:
    checked = _llama()
    checks = check_grammar_after_drawing(checked)
    for seed in range(4):
        reply = json.loads(_reply(checked, REPLY, temperature=0.8, seed=seed))
        assert set(reply) == {"notes", "action", "answer"}
        assert reply["action"] in ("DONE", "QUERY_AGAIN")
        assert len(reply["answer"]) <= 30 and len(reply["notes"]) <= 2
    drawn = checks.passed + checks.redrawn
    free = checked.create_chat_completion(
        messages=[{"role": "user", "content": QUESTION}], max_tokens=8, temperature=0.0
    )
    assert free["choices"][0]["message"]["content"]
    assert checks.passed + checks.redrawn == drawn  # a free reply never reaches the grammar


def test_the_shared_local_model_draws_schema_held_replies_free_first() -> None:
    try:
        path = str(resolve_gguf("local:smollm2", Settings().model_dir))
    except ModelPartsMissingError as exc:
        pytest.skip(str(exc))
    model = LocalLlamaChatModel(model_path=path, n_ctx=1024, max_tokens=60, temperature=0.0)
    checks = model._shared().grammar_checks
    before = checks.passed + checks.redrawn
    reply = model.with_structured_output(ZEBRA).invoke([HumanMessage(QUESTION)])
    assert reply == {"colour": "zebra-striped vermilion"}
    assert checks.passed + checks.redrawn > before
