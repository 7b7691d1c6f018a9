"""A scripted chat model: replies chosen by rules over the prompt, with fixed token counts.

Tests use it for exact expected behaviour, and `GRASP_CHAT_MODEL=scripted:rules.json` lets the
dev server and the CLI run the whole graph offline without any model at all. It streams too: a
streamed reply comes in `chunk_chars`-sized pieces, its usage on the last one, as providers do.
`latency_s` makes every call wait first, as a remote API would: the async path awaits it, so
concurrent calls wait together (`grasp bench concurrency` measures that).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from nodes.llm.reply import text_pieces


class ScriptedReply(BaseModel):
    """One rule: when every `when` pattern is found in the prompt, answer `reply`."""

    model_config = ConfigDict(extra="forbid")

    when: list[str] = Field(default_factory=list, description="regexes that must all match")
    reply: str
    input_tokens: int = 100
    output_tokens: int = 10
    times: int | None = Field(default=None, description="use at most this often (None: always)")
    delay_s: float = Field(default=0.0, description="seconds to wait before answering")
    error: str | None = Field(default=None, description="raise RuntimeError(error) instead")
    chunk_delay_s: float = Field(
        default=0.0, description="when streamed: seconds to wait before each chunk after the first"
    )

    def usage(self) -> UsageMetadata:
        """The token usage this reply reports."""
        return UsageMetadata(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            total_tokens=self.input_tokens + self.output_tokens,
        )


class NoScriptedReply(LookupError):
    """No rule matched a prompt: the test's script is incomplete."""


class ScriptedChatModel(BaseChatModel):
    """Answers from `rules` (first match wins) and remembers every prompt it saw."""

    rules: list[ScriptedReply]
    name_: str = "scripted"
    chunk_chars: int = Field(default=8, description="characters per streamed chunk")
    latency_s: float = Field(
        default=0.0, ge=0.0, description="seconds every call waits before answering (a remote API)"
    )
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _used: dict[int, int] = PrivateAttr(default_factory=dict)
    _prompts: list[str] = PrivateAttr(default_factory=list)

    @classmethod
    def from_file(cls, path: Path) -> ScriptedChatModel:
        """Load rules from a JSON list of ScriptedReply objects."""
        data = json.loads(path.read_text())
        return cls(rules=[ScriptedReply.model_validate(rule) for rule in data])

    @property
    def prompts(self) -> list[str]:
        """Every prompt answered so far, in call order."""
        return list(self._prompts)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency_s:
            time.sleep(self.latency_s)
        return self._result(messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        # A rule's own delay_s sleeps in a thread, so it never blocks the event loop.
        return await asyncio.to_thread(self._result, messages)

    def _result(self, messages: list[BaseMessage]) -> ChatResult:
        rule = self._answer(messages)
        message = AIMessage(
            content=rule.reply,
            usage_metadata=rule.usage(),
            response_metadata={"model_name": self.name_, "finish_reason": "stop"},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        if self.latency_s:
            time.sleep(self.latency_s)
        yield from self._chunks(messages)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        chunks = self._chunks(messages)
        # Each chunk in a thread: a rule's delays sleep there, never on the event loop.
        while (chunk := await asyncio.to_thread(next, chunks, None)) is not None:
            yield chunk

    def _chunks(self, messages: list[BaseMessage]) -> Iterator[ChatGenerationChunk]:
        # LangChain reports each chunk to the callbacks itself; the model only yields them.
        rule = self._answer(messages)
        pieces = text_pieces(rule.reply, self.chunk_chars)
        for number, piece in enumerate(pieces, start=1):
            if number > 1 and rule.chunk_delay_s:
                time.sleep(rule.chunk_delay_s)
            last = number == len(pieces)
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content=piece,
                    usage_metadata=rule.usage() if last else None,
                    response_metadata={"model_name": self.name_, "finish_reason": "stop"}
                    if last
                    else {},
                )
            )

    def _answer(self, messages: list[BaseMessage]) -> ScriptedReply:
        """The rule that answers `messages`, after its delay; raises its scripted error."""
        prompt = "\n\n".join(str(message.content) for message in messages)
        with self._lock:
            rule_index = self._match(prompt)
            self._used[rule_index] = self._used.get(rule_index, 0) + 1
            self._prompts.append(prompt)
        rule = self.rules[rule_index]
        if rule.delay_s:
            time.sleep(rule.delay_s)
        if rule.error is not None:
            raise RuntimeError(rule.error)
        return rule

    def _match(self, prompt: str) -> int:
        for index, rule in enumerate(self.rules):
            if rule.times is not None and self._used.get(index, 0) >= rule.times:
                continue
            if all(re.search(pattern, prompt, re.DOTALL) for pattern in rule.when):
                return index
        raise NoScriptedReply(f"no scripted reply matches this prompt:\n{prompt[-1500:]}")
