"""Closed-book estimates sample one prompt several times: a sampled local model must vary."""

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from graphs.models.gguf_assembly import ModelPartsMissingError
from graphs.models.local_model import LocalLlamaChatModel
from graphs.models.providers import make_json_chat_model
from graphs.runtime.settings import Settings

pytestmark = pytest.mark.e2e

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not built here")

PROMPT = [
    SystemMessage("You reply with a JSON object."),
    HumanMessage('Invent a name for a cat. Reply {"name": "..."}.'),
]


def _model(sampled: bool) -> LocalLlamaChatModel:
    try:
        model = make_json_chat_model(
            "local:smollm2",
            temperature=1.0,
            api_key=None,
            model_dir=Settings().model_dir,
            max_tokens=16,
            sampled=sampled,
        )
    except ModelPartsMissingError as exc:
        pytest.skip(str(exc))
    assert isinstance(model, LocalLlamaChatModel)
    return model


def test_only_a_sampled_model_leaves_its_seed_to_each_call() -> None:
    assert _model(sampled=False).seed == 0
    assert _model(sampled=True).seed is None


def test_a_sampled_model_replies_differently_to_one_prompt() -> None:
    # With the fixed seed, every call after the first replays the same draw: five samples of a
    # closed-book question were one answer, and p_i could only be 1/7 or 6/7.
    model = _model(sampled=True)

    replies = {str(model.invoke(PROMPT).content) for _ in range(5)}

    assert len(replies) > 1
