"""Reading a model's reply: text, token usage, strict JSON parsing, and replaying a stored one."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
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
    #: The input tokens by prompt part (nodes.llm.prompt_parts); empty where unknown.
    parts: Mapping[str, int] = field(default_factory=dict)


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
    except RecursionError as exc:  # nesting deeper than the parser's stack
        raise MalformedOutput("invalid JSON: nested too deeply", text) from exc
    return value


def parse_reply(text: str, schema: type[Schema]) -> Schema:
    """Strictly validate a JSON reply against a pydantic schema."""
    try:
        return schema.model_validate(extract_json(text))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "reply"
        raise MalformedOutput(f"{where}: {first['msg']}", text) from exc


def text_pieces(text: str, size: int) -> list[str]:
    """`text` cut into pieces of `size` characters, as a streaming model sends it ([""] if empty)."""
    size = max(size, 1)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class ReplayModel(BaseChatModel):
    """Streams a stored reply back in chunks, so a cached answer reaches a streaming client too.

    Invoked inside a graph node, its chunks go to stream_mode="messages" like a live model's.
    """

    text: str
    chunk_chars: int = 16

    @property
    def _llm_type(self) -> str:
        return "replay"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = AIMessage(content=self.text, response_metadata={"cached": True})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for piece in text_pieces(self.text, self.chunk_chars):
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))


async def replay(text: str) -> None:
    """Stream `text` to whoever listens to the current run's messages (next to no cost otherwise)."""
    await ReplayModel(text=text).ainvoke([HumanMessage(content="(cached reply)")])


def partial_field(text: str, name: str) -> str:
    """The value of string field `name` so far in a JSON reply that is still streaming in.

    A chat client shows the answer as it grows from the raw chunks of `{"answer": "…", …}`;
    "" until the field's value has begun.
    """
    key = text.find(f'"{name}"')
    if key < 0:
        return ""
    rest = text[key + len(name) + 2 :].lstrip()
    if not rest.startswith(":"):
        return ""
    rest = rest[1:].lstrip()
    if not rest.startswith('"'):
        return ""
    value: list[str] = []
    escaped = False
    for char in rest[1:]:
        if escaped:
            value.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
            value.append(char)
        elif char == '"':
            break
        else:
            value.append(char)
    raw = "".join(value[:-1] if escaped else value)
    try:
        return str(json.loads(f'"{raw}"'))
    except json.JSONDecodeError:  # a \u escape cut short: show what is certain
        return raw[: raw.rfind("\\")]
