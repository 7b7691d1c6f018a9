"""Reading a model's reply: text, token usage, and strict JSON parsing into pydantic schemas."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel, ValidationError

Schema = TypeVar("Schema", bound=BaseModel)


@dataclass(frozen=True)
class LlmResult:
    """A model reply with its cost."""

    text: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    cached: bool


class MalformedOutput(ValueError):
    """The model's reply could not be parsed into the expected structure."""

    def __init__(self, message: str, raw: str) -> None:
        super().__init__(message)
        self.raw = raw
        #: Every call spent before giving up, so callers can still bill their tokens.
        self.results: list[LlmResult] = []


def usage_of(message: AIMessage) -> tuple[int, int]:
    """Input and output tokens a provider reported for one reply (0 when it reported none)."""
    usage = message.usage_metadata
    if usage is None:
        return 0, 0
    return int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))


def message_text(message: BaseMessage) -> str:
    """Plain text of a reply, also when a provider returns content blocks."""
    if isinstance(message.content, str):
        return message.content
    parts = [
        block.get("text", "") if isinstance(block, dict) else str(block)
        for block in message.content
    ]
    return "".join(parts)


def extract_json(text: str) -> Any:
    """Parse the first JSON object in `text`, tolerating code fences and prose around it."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`")
        stripped = stripped[stripped.find("\n") + 1 :] if "\n" in stripped else stripped
    start = stripped.find("{")
    if start < 0:
        raise MalformedOutput("no JSON object in the reply", text)
    try:
        value, _ = json.JSONDecoder().raw_decode(stripped[start:])
    except json.JSONDecodeError as exc:
        raise MalformedOutput(f"invalid JSON: {exc.msg} at char {exc.pos}", text) from exc
    return value


def parse_reply(text: str, schema: type[Schema]) -> Schema:
    """Strictly validate a JSON reply against a pydantic schema."""
    try:
        return schema.model_validate(extract_json(text))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "reply"
        raise MalformedOutput(f"{where}: {first['msg']}", text) from exc
