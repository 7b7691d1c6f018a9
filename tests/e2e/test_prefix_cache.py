"""The kept prompt states, on a real llama.cpp model: a node's next call resumes after its
instructions, and greedy replies are the ones a fresh read gives."""

from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from graphs.models.gguf_assembly import ModelPartsMissingError, resolve_gguf
from graphs.models.local_model import LocalLlamaChatModel
from graphs.models.prefix_cache import keep_prefixes
from graphs.runtime.settings import Settings

pytestmark = pytest.mark.e2e

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not built here")

PLANNER = "You split a question into steps. " * 12
READER = "You answer a sub-question from numbered passages, in one short phrase. " * 8


def _model_path() -> str:
    try:
        return str(resolve_gguf("local:smollm2", Settings().model_dir))
    except ModelPartsMissingError as exc:
        pytest.skip(str(exc))


def _fresh_llama() -> Any:
    return llama_cpp.Llama(model_path=_model_path(), n_ctx=2048, n_threads=2, seed=0, verbose=False)


def _reply(llama: Any, system: str, user: str, max_tokens: int = 24) -> str:
    response = llama.create_chat_completion(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        max_tokens=max_tokens,
        temperature=0.0,
    )
    return str(response["choices"][0]["message"]["content"])


def test_a_nodes_next_call_resumes_and_replies_as_a_fresh_read() -> None:
    cached = _fresh_llama()
    stats = keep_prefixes(cached)

    _reply(cached, PLANNER, "Question: who founded the city where Ada Lovelace was born?")
    _reply(cached, READER, "Sub-question: where was Ada Lovelace born? [1] Ada was born in London.")
    assert stats.restored == 0  # each call so far shared nothing longer than the one before

    resumed = _reply(cached, PLANNER, "Question: which river runs through Leyton?")
    assert stats.restored == 1

    plain = _fresh_llama()
    assert _reply(plain, PLANNER, "Question: which river runs through Leyton?") == resumed

    # A kept state holds one row of logits, not llama-cpp-python's whole n_batch buffer.
    assert all(state.scores.shape[0] == 1 for state in cached.cache.cache_state.values())


def test_the_same_prompt_again_is_re_evaluated_not_sampled_from_stale_logits() -> None:
    cached = _fresh_llama()
    stats = keep_prefixes(cached)
    question = "Question: which river runs through Leyton?"

    # One token out leaves it unread: the kept state is exactly the prompt, and its logits are
    # gone once the next call has run.
    _reply(cached, PLANNER, question, max_tokens=1)
    _reply(cached, READER, "Sub-question: what is Leyton? [1] Leyton is a district of London.")
    again = _reply(cached, PLANNER, question)

    assert stats.restored == 1
    assert again == _reply(_fresh_llama(), PLANNER, question)


def test_the_shared_local_model_resumes_a_nodes_instructions() -> None:
    model = LocalLlamaChatModel(model_path=_model_path(), n_ctx=2048, max_tokens=8)
    shared = model._shared()
    model.invoke([SystemMessage(PLANNER), HumanMessage("Question: where was Ada Lovelace born?")])
    model.invoke([SystemMessage(READER), HumanMessage("Sub-question: what is Leyton?")])
    before = shared.prefixes.restored

    model.invoke(
        [SystemMessage(PLANNER), HumanMessage("Question: which river runs through Leyton?")]
    )

    assert shared.prefixes.restored == before + 1
