"""Chat models by name: Gemini, OpenAI-compatible servers, any init_chat_model string, llama.cpp."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from sqlalchemy import Engine

from graphs.models.endpoints import UNUSED_KEY, ProviderEndpoints, endpoint_label
from graphs.models.faulty import FAULTY_PREFIX, FaultyChatModel, inner_spec, parse_faulty_spec
from graphs.models.roles import LOCAL_MAX_TOKENS
from graphs.models.scripted_model import ScriptedChatModel
from nodes.llm.client import LlmClient, SchemaBinder


class ProviderConfigError(ValueError):
    """A chat-model name that cannot be served in this environment."""


def is_local(spec: str) -> bool:
    """Whether `spec` names a llama.cpp model (`local`, `local:smollm2`, `local:/path/x.gguf`)."""
    return spec == "local" or spec.startswith("local:")


#: Spec prefixes served by Gemini through langchain-google-genai (the second is init_chat_model's).
GEMINI_PREFIXES = ("gemini:", "google_genai:")
OPENAI_PREFIX = "openai:"


def gemini_model(spec: str) -> str | None:
    """The Gemini model a spec names (`gemini:NAME` or `google_genai:NAME`), else None."""
    for prefix in GEMINI_PREFIXES:
        if spec.startswith(prefix):
            return spec.removeprefix(prefix)
    return None


def make_json_chat_model(
    spec: str,
    *,
    temperature: float,
    api_key: str | None,
    model_dir: Path,
    max_tokens: int,
    endpoints: ProviderEndpoints | None = None,
    sampled: bool = False,
) -> BaseChatModel:
    """Build the chat model named by `spec`, in JSON mode where the provider has one.

    `sampled`: the caller draws repeated samples of one prompt, so a local model takes a new
    seed each call (otherwise its fixed seed makes every sample the same).

    `local`, `local:smollm2`, `local:/path/model.gguf` → llama.cpp; `gemini:NAME` (or
    `google_genai:NAME`) → Gemini; `openai:NAME` → OpenAI or an OpenAI-compatible server;
    `scripted:/path/rules.json` → ScriptedChatModel; anything else → `init_chat_model(spec)`.
    """
    endpoints = endpoints or ProviderEndpoints()
    if spec.startswith(FAULTY_PREFIX):
        return _faulty_chat(spec, temperature, api_key, model_dir, max_tokens, endpoints, sampled)
    if is_local(spec):
        from graphs.models.gguf_assembly import resolve_gguf
        from graphs.models.local_model import LocalLlamaChatModel

        path = resolve_gguf(spec, model_dir)
        return LocalLlamaChatModel(
            model_path=str(path),
            temperature=temperature,
            json_mode=True,
            max_tokens=max_tokens,
            seed=None if sampled else 0,
        )
    gemini = gemini_model(spec)
    if gemini is not None:
        return _gemini_chat(gemini, spec, temperature, api_key, endpoints.gemini_base_url)
    if spec.startswith(OPENAI_PREFIX):
        return _openai_chat(spec, temperature, max_tokens, endpoints)
    if spec.startswith("scripted:"):
        return ScriptedChatModel.from_file(Path(spec.removeprefix("scripted:")))
    try:
        from langchain.chat_models import init_chat_model

        return init_chat_model(spec, temperature=temperature)
    except Exception as exc:  # the integrations raise many types; the message is what matters
        raise ProviderConfigError(f"cannot build chat model {spec!r}: {exc}") from exc


def _faulty_chat(
    spec: str,
    temperature: float,
    api_key: str | None,
    model_dir: Path,
    max_tokens: int,
    endpoints: ProviderEndpoints,
    sampled: bool,
) -> BaseChatModel:
    try:
        rate, seed, inner = parse_faulty_spec(spec)
    except ValueError as exc:
        raise ProviderConfigError(str(exc)) from exc
    wrapped = make_json_chat_model(
        inner,
        temperature=temperature,
        api_key=api_key,
        model_dir=model_dir,
        max_tokens=max_tokens,
        endpoints=endpoints,
        sampled=sampled,
    )
    return FaultyChatModel(inner=wrapped, rate=rate, seed=seed)


def _gemini_chat(
    model: str, spec: str, temperature: float, api_key: str | None, base_url: str | None
) -> BaseChatModel:
    if not api_key and not base_url:
        raise ProviderConfigError(f"{spec} needs GOOGLE_API_KEY (or GOOGLE_GEMINI_BASE_URL)")
    from langchain_google_genai import ChatGoogleGenerativeAI

    # Our client retries with backoff and records each attempt; the SDK's own retries would hide them.
    return ChatGoogleGenerativeAI(
        model=model,
        temperature=temperature,
        google_api_key=api_key or UNUSED_KEY,
        base_url=base_url,
        max_retries=0,
        response_mime_type="application/json",
    )


def _openai_chat(
    spec: str, temperature: float, max_tokens: int, endpoints: ProviderEndpoints
) -> BaseChatModel:
    base_url = endpoints.openai_base_url
    if not endpoints.openai_api_key and not base_url:
        raise ProviderConfigError(
            f"{spec} needs OPENAI_API_KEY, or OPENAI_BASE_URL for a self-hosted server"
        )
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:
        raise ProviderConfigError(
            f"{spec} needs langchain-openai: pip install 'grasp-qa[openai]'"
        ) from exc
    return ChatOpenAI(
        model=spec.removeprefix(OPENAI_PREFIX),
        temperature=temperature,
        api_key=endpoints.openai_api_key or UNUSED_KEY,  # type: ignore[arg-type]
        base_url=base_url,
        max_tokens=max_tokens,  # type: ignore[call-arg]
        max_retries=0,  # as for Gemini: our client retries and records every attempt
        # A streamed reply (a chat client streaming the answer) still reports its token usage.
        stream_usage=True,
        extra_body=_openai_body(base_url is not None, max_tokens, {"type": "json_object"}),
    )


def _openai_body(
    self_hosted: bool, max_tokens: int, response_format: dict[str, Any]
) -> dict[str, Any]:
    """Request fields sent beside the client's own.

    `response_format` travels here rather than as the client's parameter: given that parameter,
    langchain-openai parses the reply with the OpenAI SDK, which raises on a reply cut at the
    token cap and loses the usage the server billed; sent this way, a cut reply comes back as
    text with its usage and is re-asked like any malformed reply. Newer OpenAI clients send only
    `max_completion_tokens`, which llama.cpp, vLLM and Ollama servers may ignore, so a self-hosted
    server also gets the classic `max_tokens`.
    """
    body: dict[str, Any] = {"response_format": response_format}
    if self_hosted:
        body["max_tokens"] = max_tokens
    return body


def openai_schema_binder(endpoints: ProviderEndpoints) -> SchemaBinder | None:
    """Send a call's JSON schema in the dialect the configured server understands (or not at all)."""
    style = endpoints.openai_schema
    if style == "json_object":
        return None

    def bind(
        model: BaseChatModel, json_schema: dict[str, Any]
    ) -> Runnable[LanguageModelInput, BaseMessage]:
        if style == "json_object_schema":
            response_format = {"type": "json_object", "schema": json_schema}
        else:
            spec = {"name": "reply", "schema": json_schema, "strict": False}
            response_format = {"type": "json_schema", "json_schema": spec}
        # A bound extra_body replaces the model's, so the model's fields are carried over.
        body = {**(getattr(model, "extra_body", None) or {}), "response_format": response_format}
        return model.bind(extra_body=body)

    return bind


def model_name_of(spec: str, endpoints: ProviderEndpoints | None = None) -> str:
    """The name a spec's model is cached and billed under, known without building the model.

    A model behind a custom base URL is named with its endpoint (`openai:m@host:port/v1`).
    """
    endpoints = endpoints or ProviderEndpoints()
    # A faulty wrapper is the same model behind a flaky link: billed and cached under its name.
    spec = inner_spec(spec)
    if gemini_model(spec) is not None:
        return f"gemini:{gemini_model(spec)}{endpoint_label(endpoints.gemini_base_url)}"
    if spec.startswith(OPENAI_PREFIX):
        return spec + endpoint_label(endpoints.openai_base_url)
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
    endpoints: ProviderEndpoints | None = None,
    sampled: bool = False,
) -> LlmClient:
    """An LlmClient that builds its model on the first real call (cache hits never build it).

    `sampled`: see `make_json_chat_model`.
    """
    endpoints = endpoints or ProviderEndpoints()

    def build() -> BaseChatModel:
        return make_json_chat_model(
            spec,
            temperature=temperature,
            api_key=api_key,
            model_dir=model_dir,
            max_tokens=max_tokens,
            endpoints=endpoints,
            sampled=sampled,
        )

    served = inner_spec(spec)  # a faulty wrapper passes the schema binding to the model inside
    local = is_local(served)
    binder: SchemaBinder | None = None
    if local:
        binder = bind_grammar
    elif served.startswith(OPENAI_PREFIX):
        binder = openai_schema_binder(endpoints)
    return LlmClient(
        model=None,
        model_name=model_name_of(spec, endpoints),
        engine=engine,
        use_cache=use_cache,
        # One llama.cpp model answers one call at a time; more slots would only queue inside it.
        concurrency=1 if local else concurrency,
        factory=build,
        schema_binder=binder,
    )


def bind_grammar(
    model: BaseChatModel, json_schema: dict[str, Any]
) -> Runnable[LanguageModelInput, BaseMessage]:
    """Constrain a llama.cpp model's output to `json_schema` (enforced as a grammar)."""
    return model.bind(response_format={"type": "json_object", "schema": json_schema})
