"""Where hosted providers are reached: OpenAI-compatible and Gemini base URLs, keys, JSON dialect."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, cast, get_args
from urllib.parse import urlsplit

#: How a JSON schema is sent to an OpenAI-compatible server. `json_schema` is OpenAI's structured
#: outputs (OpenAI, vLLM, Ollama, llama.cpp's llama-server); `json_object_schema` puts the schema
#: inside JSON mode (llama-cpp-python's server, which rejects `json_schema`); `json_object` sends
#: JSON mode only and leaves the format to the prompt.
OpenAiSchemaStyle = Literal["json_schema", "json_object_schema", "json_object"]
OPENAI_SCHEMA_STYLES: tuple[str, ...] = get_args(OpenAiSchemaStyle)

#: Sent as the key where a self-hosted server needs none (the OpenAI and Gemini clients refuse an
#: empty one).
UNUSED_KEY = "unused"


@dataclass(frozen=True)
class ProviderEndpoints:
    """Base URLs and keys for the hosted providers; None everywhere means their public APIs."""

    openai_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    openai_schema: OpenAiSchemaStyle = "json_schema"
    gemini_base_url: str | None = None


def parse_schema_style(value: str) -> OpenAiSchemaStyle:
    """Validate a GRASP_OPENAI_SCHEMA value."""
    if value in OPENAI_SCHEMA_STYLES:
        return cast(OpenAiSchemaStyle, value)
    raise ValueError(
        f"GRASP_OPENAI_SCHEMA={value!r} is not one of {', '.join(OPENAI_SCHEMA_STYLES)}"
    )


def endpoint_label(base_url: str | None) -> str:
    """`@host:port/path` for a custom endpoint, '' for the public API.

    Part of a model's cache and ledger name: two servers may both serve a model called `default`,
    and a proxy's answers must never be replayed as the public API's.
    """
    if not base_url:
        return ""
    parts = urlsplit(base_url)
    where = (parts.netloc or parts.path) + (parts.path.rstrip("/") if parts.netloc else "")
    return f"@{where}"
