"""Chat models by name: Gemini, any init_chat_model string, the local llama.cpp model, scripted."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from sqlalchemy import Engine

from graphs.models.scripted_model import ScriptedChatModel
from nodes.llm.client import LlmClient

#: Output caps for the local model: room for a five-passage extraction reply (≈250 tokens a
#: passage), and a tighter cap for agent steps, whose JSON replies are short, so a reply that
#: starts repeating itself costs seconds instead of minutes on a CPU.
LOCAL_MAX_TOKENS = 3072
AGENT_MAX_TOKENS = 768


class ProviderConfigError(ValueError):
    """A chat-model name that cannot be served in this environment."""


@dataclass(frozen=True)
class ChatModels:
    """A model for free text and one constrained to JSON (the same object where no mode exists)."""

    text: BaseChatModel
    json: BaseChatModel
    name: str


def make_chat_models(
    spec: str,
    *,
    temperature: float,
    api_key: str | None,
    model_dir: Path,
    max_tokens: int = LOCAL_MAX_TOKENS,
) -> ChatModels:
    """Build the chat model named by `spec`.

    `local`, `local:smollm2`, `local:/path/model.gguf` → llama.cpp; `gemini:NAME` → Gemini;
    `scripted:/path/rules.json` → ScriptedChatModel; anything else → `init_chat_model(spec)`.
    """
    if spec == "local" or spec.startswith("local:"):
        from graphs.models.local_model import LocalLlamaChatModel, resolve_gguf

        path = resolve_gguf(spec, model_dir)
        text: BaseChatModel = LocalLlamaChatModel(
            model_path=str(path), temperature=temperature, max_tokens=max_tokens
        )
        local_json: BaseChatModel = LocalLlamaChatModel(
            model_path=str(path),
            temperature=temperature,
            json_mode=True,
            max_tokens=max_tokens,
        )
        return ChatModels(text, local_json, f"local:{path.name}")
    if spec.startswith("gemini:"):
        if not api_key:
            raise ProviderConfigError(f"{spec} needs GOOGLE_API_KEY")
        from langchain_google_genai import ChatGoogleGenerativeAI

        model = spec.removeprefix("gemini:")
        common = {"model": model, "temperature": temperature, "google_api_key": api_key}
        # Our client retries with backoff and records each attempt; the SDK's own retries would hide them.
        text_model: BaseChatModel = ChatGoogleGenerativeAI(**common, max_retries=0)
        gemini_json: BaseChatModel = ChatGoogleGenerativeAI(
            **common, max_retries=0, response_mime_type="application/json"
        )
        return ChatModels(text_model, gemini_json, spec)
    if spec.startswith("scripted:"):
        scripted = ScriptedChatModel.from_file(Path(spec.removeprefix("scripted:")))
        return ChatModels(scripted, scripted, "scripted")
    try:
        from langchain.chat_models import init_chat_model

        generic = init_chat_model(spec, temperature=temperature)
    except Exception as exc:  # the integrations raise many types; the message is what matters
        raise ProviderConfigError(f"cannot build chat model {spec!r}: {exc}") from exc
    return ChatModels(generic, generic, spec)


def make_llm_client(
    models: ChatModels, engine: Engine | None, use_cache: bool, concurrency: int
) -> LlmClient:
    """Wrap chat models with the cache, the ledger and retries."""
    return LlmClient(
        model=models.text,
        json_model=models.json,
        model_name=models.name,
        engine=engine,
        use_cache=use_cache,
        concurrency=concurrency,
    )


def model_name_of(spec: str) -> str:
    """The name a spec's model is cached and billed under, known without building the model."""
    if spec == "local":
        from graphs.models.gguf_assembly import QWEN_FILE_NAME

        return f"local:{QWEN_FILE_NAME}"
    if spec.startswith("local:"):
        rest = spec.removeprefix("local:")
        if rest == "smollm2":
            from graphs.models.gguf_assembly import smollm2_gguf_path

            return f"local:{smollm2_gguf_path().name}"
        return f"local:{Path(rest).name}"
    if spec.startswith("scripted:"):
        return "scripted"
    return spec


def lazy_llm_client(
    spec: str,
    *,
    temperature: float,
    api_key: str | None,
    model_dir: Path,
    engine: Engine | None,
    use_cache: bool,
    concurrency: int,
    max_tokens: int = LOCAL_MAX_TOKENS,
) -> LlmClient:
    """An LlmClient that builds its model on the first real call (cache hits never build it)."""

    def build() -> tuple[BaseChatModel, BaseChatModel]:
        models = make_chat_models(
            spec,
            temperature=temperature,
            api_key=api_key,
            model_dir=model_dir,
            max_tokens=max_tokens,
        )
        return models.text, models.json

    local = spec == "local" or spec.startswith("local:")
    return LlmClient(
        model=None,
        model_name=model_name_of(spec),
        engine=engine,
        use_cache=use_cache,
        # One llama.cpp model answers one call at a time; more slots would only queue inside it.
        concurrency=1 if local else concurrency,
        factory=build,
        schema_binder=bind_grammar if local else None,
    )


def bind_grammar(model: BaseChatModel, json_schema: dict[str, Any]) -> BaseChatModel:
    """Constrain a llama.cpp model's output to `json_schema` (enforced as a grammar)."""
    return model.bind(response_format={"type": "json_object", "schema": json_schema})  # type: ignore[return-value]
