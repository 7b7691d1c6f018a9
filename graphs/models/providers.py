"""Chat models by name: Gemini, any init_chat_model string, the local llama.cpp model, scripted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from sqlalchemy import Engine

from graphs.models.roles import LOCAL_MAX_TOKENS
from graphs.models.scripted_model import ScriptedChatModel
from nodes.llm.client import LlmClient


class ProviderConfigError(ValueError):
    """A chat-model name that cannot be served in this environment."""


def is_local(spec: str) -> bool:
    """Whether `spec` names a llama.cpp model (`local`, `local:smollm2`, `local:/path/x.gguf`)."""
    return spec == "local" or spec.startswith("local:")


def make_json_chat_model(
    spec: str,
    *,
    temperature: float,
    api_key: str | None,
    model_dir: Path,
    max_tokens: int,
) -> BaseChatModel:
    """Build the chat model named by `spec`, in JSON mode where the provider has one.

    `local`, `local:smollm2`, `local:/path/model.gguf` → llama.cpp; `gemini:NAME` → Gemini;
    `scripted:/path/rules.json` → ScriptedChatModel; anything else → `init_chat_model(spec)`.
    """
    if is_local(spec):
        from graphs.models.gguf_assembly import resolve_gguf
        from graphs.models.local_model import LocalLlamaChatModel

        path = resolve_gguf(spec, model_dir)
        return LocalLlamaChatModel(
            model_path=str(path), temperature=temperature, json_mode=True, max_tokens=max_tokens
        )
    if spec.startswith("gemini:"):
        if not api_key:
            raise ProviderConfigError(f"{spec} needs GOOGLE_API_KEY")
        from langchain_google_genai import ChatGoogleGenerativeAI

        # Our client retries with backoff and records each attempt; the SDK's own retries would hide them.
        return ChatGoogleGenerativeAI(
            model=spec.removeprefix("gemini:"),
            temperature=temperature,
            google_api_key=api_key,
            max_retries=0,
            response_mime_type="application/json",
        )
    if spec.startswith("scripted:"):
        return ScriptedChatModel.from_file(Path(spec.removeprefix("scripted:")))
    try:
        from langchain.chat_models import init_chat_model

        return init_chat_model(spec, temperature=temperature)
    except Exception as exc:  # the integrations raise many types; the message is what matters
        raise ProviderConfigError(f"cannot build chat model {spec!r}: {exc}") from exc


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

    def build() -> BaseChatModel:
        return make_json_chat_model(
            spec,
            temperature=temperature,
            api_key=api_key,
            model_dir=model_dir,
            max_tokens=max_tokens,
        )

    local = is_local(spec)
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


def bind_grammar(
    model: BaseChatModel, json_schema: dict[str, Any]
) -> Runnable[LanguageModelInput, BaseMessage]:
    """Constrain a llama.cpp model's output to `json_schema` (enforced as a grammar)."""
    return model.bind(response_format={"type": "json_object", "schema": json_schema})
