"""How the environment picks a provider endpoint, and what each chat model is built with."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_google_genai import ChatGoogleGenerativeAI
from langchain_openai import ChatOpenAI

from graphs.cli.main import main
from graphs.models.embedders import EmbedderConfigError, GeminiEmbedder, make_embedder
from graphs.models.endpoints import ProviderEndpoints
from graphs.models.providers import (
    ProviderConfigError,
    lazy_llm_client,
    make_json_chat_model,
    model_name_of,
)
from graphs.runtime.settings import Settings

SELF_HOSTED = ProviderEndpoints(
    openai_base_url="http://127.0.0.1:8000/v1", openai_schema="json_object_schema"
)


def build(spec: str, endpoints: ProviderEndpoints, api_key: str | None = None) -> object:
    return make_json_chat_model(
        spec,
        temperature=0.1,
        api_key=api_key,
        model_dir=Path("/nonexistent"),
        max_tokens=64,
        endpoints=endpoints,
    )


def test_settings_read_the_provider_variables() -> None:
    settings = Settings.from_env(
        {
            "GRASP_CHAT_MODEL": "openai:qwen",
            "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
            "OPENAI_API_KEY": "sk-local",
            "GRASP_OPENAI_SCHEMA": "json_object_schema",
            "GOOGLE_GEMINI_BASE_URL": "http://proxy:9000",
        }
    )
    assert settings.endpoints == ProviderEndpoints(
        openai_base_url="http://127.0.0.1:8000/v1",
        openai_api_key="sk-local",
        openai_schema="json_object_schema",
        gemini_base_url="http://proxy:9000",
    )
    assert "sk-local" not in repr(settings)
    assert Settings.from_env({}).endpoints == ProviderEndpoints()


def test_an_unknown_schema_style_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GRASP_OPENAI_SCHEMA", "grammar")
    assert main(["stats", "--corpus", "x"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "GRASP_OPENAI_SCHEMA='grammar' is not one of json_schema, json_object_schema" in err


def test_a_self_hosted_openai_server_needs_no_key() -> None:
    model = build("openai:qwen", SELF_HOSTED)
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "qwen"
    assert model.openai_api_base == "http://127.0.0.1:8000/v1"
    assert model.max_retries == 0
    assert model.stream_usage  # a streamed answer still records its tokens
    # JSON mode and the classic output cap travel in the body (see providers._openai_body).
    assert model.extra_body == {"response_format": {"type": "json_object"}, "max_tokens": 64}


def test_openai_itself_needs_a_key_and_gets_no_extra_cap() -> None:
    with pytest.raises(ProviderConfigError, match="needs OPENAI_API_KEY, or OPENAI_BASE_URL"):
        build("openai:gpt-4o-mini", ProviderEndpoints())
    model = build("openai:gpt-4o-mini", ProviderEndpoints(openai_api_key="sk-test"))
    assert isinstance(model, ChatOpenAI)
    assert model.openai_api_base is None
    assert model.extra_body == {"response_format": {"type": "json_object"}}


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("json_object_schema", {"type": "json_object", "schema": {"type": "object"}}),
        (
            "json_schema",
            {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": {"type": "object"}, "strict": False},
            },
        ),
    ],
)
def test_the_schema_is_sent_in_the_servers_dialect(style: str, expected: dict[str, object]) -> None:
    endpoints = ProviderEndpoints(openai_base_url="http://h:1/v1", openai_schema=style)  # type: ignore[arg-type]
    client = lazy_llm_client(
        "openai:m",
        temperature=0.0,
        api_key=None,
        model_dir=Path("/nonexistent"),
        engine=None,
        use_cache=False,
        concurrency=1,
        max_tokens=32,
        endpoints=endpoints,
    )
    assert client.schema_binder is not None and client.factory is not None
    bound = client.schema_binder(client.factory(), {"type": "object"})
    body = bound.kwargs["extra_body"]  # type: ignore[attr-defined]
    assert body == {"response_format": expected, "max_tokens": 32}


def test_json_mode_only_sends_no_schema() -> None:
    endpoints = ProviderEndpoints(openai_base_url="http://h:1/v1", openai_schema="json_object")
    client = lazy_llm_client(
        "openai:m",
        temperature=0.0,
        api_key=None,
        model_dir=Path("/nonexistent"),
        engine=None,
        use_cache=False,
        concurrency=1,
        endpoints=endpoints,
    )
    assert client.schema_binder is None


def test_gemini_through_a_proxy() -> None:
    proxy = ProviderEndpoints(gemini_base_url="http://127.0.0.1:9000")
    with pytest.raises(ProviderConfigError, match="needs GOOGLE_API_KEY"):
        build("gemini:gemini-3-flash-preview", ProviderEndpoints())
    for spec in ("gemini:gemini-3-flash-preview", "google_genai:gemini-3-flash-preview"):
        model = build(spec, proxy)
        assert isinstance(model, ChatGoogleGenerativeAI)
        assert model.base_url == "http://127.0.0.1:9000"
        assert model.max_retries == 0
        assert model.response_mime_type == "application/json"
    embedder = make_embedder(
        "gemini:gemini-embedding-001", None, gemini_base_url="http://127.0.0.1:9000"
    )
    assert isinstance(embedder, GeminiEmbedder)
    assert (embedder.name, embedder.dim) == ("gemini:gemini-embedding-001", 384)
    with pytest.raises(EmbedderConfigError, match="needs GOOGLE_API_KEY"):
        make_embedder("gemini:gemini-embedding-001", None)


def test_a_custom_endpoint_is_part_of_the_models_name() -> None:
    assert model_name_of("openai:qwen") == "openai:qwen"
    assert model_name_of("openai:qwen", SELF_HOSTED) == "openai:qwen@127.0.0.1:8000/v1"
    proxy = ProviderEndpoints(gemini_base_url="https://gw.example.com/gemini/")
    assert model_name_of("google_genai:g", proxy) == "gemini:g@gw.example.com/gemini"
    assert model_name_of("gemini:g") == "gemini:g"
