"""LangChain messages as the role/content dicts llama.cpp's chat templates take."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage


def content_text(message: BaseMessage) -> str:
    """A message's text; a non-text block (an image) is refused."""
    if isinstance(message.content, str):
        return message.content
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, str):
            parts.append(block)
        elif block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            raise ValueError(f"local model accepts text only, got a {block.get('type')!r} block")
    return "".join(parts)


def to_openai_messages(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    """Convert LangChain messages to the role/content dicts llama.cpp's chat templates expect."""
    converted: list[dict[str, str]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            role = "system"
        elif isinstance(message, HumanMessage):
            role = "user"
        elif isinstance(message, AIMessage):
            role = "assistant"
        elif isinstance(message, ChatMessage) and message.role in {"system", "user", "assistant"}:
            role = message.role
        else:
            raise ValueError(f"local model cannot send a {message.type!r} message")
        converted.append({"role": role, "content": content_text(message)})
    return converted
