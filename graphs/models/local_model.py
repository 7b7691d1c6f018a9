"""A LangChain chat model over a local llama.cpp GGUF file: offline, shared, lock-guarded, JSON-capable."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.output_parsers import JsonOutputParser, PydanticOutputParser
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import BaseModel, Field

from graphs.models.llama_loader import SharedLlama, load_shared
from graphs.models.llama_messages import to_openai_messages
from graphs.models.roles import GENERATOR_TEMPERATURE
from graphs.models.thread_stream import iterate_in_thread

# What a plain tokenize of the contents misses: role markers and separators per message, and the
# default system prompt some chat templates (Qwen's) add; measured ≈5 and ≈22 tokens.
_TEMPLATE_TOKENS_PER_MESSAGE = 8
_TEMPLATE_TOKENS_FIXED = 32
_JSON_OBJECT: dict[str, Any] = {"type": "json_object"}


class LocalLlamaChatModel(BaseChatModel):
    """Chat model backed by one process-wide `llama_cpp.Llama` per GGUF file, never downloading."""

    model_path: str = Field(description="Path of the GGUF file to load.")
    temperature: float = Field(default=GENERATOR_TEMPERATURE, description="Sampling temperature.")
    top_p: float = Field(default=0.95, description="Nucleus sampling mass.")
    max_tokens: int = Field(default=1024, description="Most tokens generated per call.")
    n_ctx: int = Field(default=8192, description="Context window in tokens (prompt + output).")
    n_threads: int | None = Field(default=None, description="CPU threads; None uses every core.")
    seed: int | None = Field(
        default=0,
        description="Sampling seed, fixed so a prompt gives one answer; None draws a new one "
        "each call (repeated samples of one prompt, as the closed-book estimates need).",
    )
    json_mode: bool = Field(default=False, description="Constrain every output to a JSON object.")

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-local"

    @property
    def model_name(self) -> str:
        """File name of the GGUF, the name usage ledgers and caches key on."""
        return Path(self.model_path).name

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_name": self.model_name,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "n_ctx": self.n_ctx,
            "seed": self.seed,
            "json_mode": self.json_mode,
        }

    def _shared(self) -> SharedLlama:
        return load_shared(
            model_path=self.model_path,
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            seed=self.seed or 0,
        )

    def _check_prompt_fits(self, llama: Any, messages: list[dict[str, str]]) -> None:
        # An estimate (the template is applied inside llama.cpp), checked before any decoding starts
        # so the error names both sizes and the fix.
        tokens = _TEMPLATE_TOKENS_FIXED + sum(
            len(llama.tokenize(m["content"].encode("utf-8"), add_bos=False, special=True))
            + _TEMPLATE_TOKENS_PER_MESSAGE
            for m in messages
        )
        if tokens >= self.n_ctx:
            raise ValueError(
                f"prompt is about {tokens} tokens but {self.model_name} was loaded with "
                f"n_ctx={self.n_ctx}; shorten the prompt or raise n_ctx"
            )

    def _response_format(self, kwargs: dict[str, Any]) -> dict[str, Any] | None:
        response_format: dict[str, Any] | None = kwargs.pop("response_format", None)
        if response_format is None and self.json_mode:
            return _JSON_OBJECT
        return response_format

    def _completion_args(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        return {
            "messages": to_openai_messages(messages),
            "temperature": kwargs.pop("temperature", self.temperature),
            "top_p": kwargs.pop("top_p", self.top_p),
            "repeat_penalty": 1.0,
            "max_tokens": kwargs.pop("max_tokens", self.max_tokens),
            "stop": stop,
            "seed": self.seed,
            "response_format": self._response_format(kwargs),
        }

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        args = self._completion_args(messages, stop, kwargs)
        shared = self._shared()
        with shared.lock:
            self._check_prompt_fits(shared.llama, args["messages"])
            response = shared.llama.create_chat_completion(**args)
        return self._to_result(response)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        # A worker thread keeps the event loop free; the shared lock orders the calls into llama.cpp.
        return await asyncio.to_thread(self._generate, messages, stop, None, **kwargs)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        yield from self._stream_until(messages, stop, threading.Event(), kwargs)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        # One worker thread decodes the whole reply under the lock; a consumer that stops early
        # (a cancelled run) stops it at the next token, so the lock is freed.
        chunks = iterate_in_thread(
            lambda stop_now: self._stream_until(messages, stop, stop_now, kwargs)
        )
        async for chunk in chunks:
            yield chunk

    def _stream_until(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        stop_now: threading.Event,
        kwargs: dict[str, Any],
    ) -> Iterator[ChatGenerationChunk]:
        """Decode under the lock, one chunk per token; usage comes with the last chunk.

        llama.cpp's stream reports no usage: the prompt's tokens are the context's length after
        decoding less the reply's, and the reply's are its text tokenized again.
        """
        args = self._completion_args(messages, stop, kwargs)
        shared = self._shared()
        text: list[str] = []
        finish: str | None = None
        with shared.lock:
            self._check_prompt_fits(shared.llama, args["messages"])
            for part in shared.llama.create_chat_completion(**args, stream=True):
                if stop_now.is_set():
                    break
                choice = part["choices"][0]
                piece = choice["delta"].get("content") or ""
                finish = choice.get("finish_reason") or finish
                if piece:
                    text.append(piece)
                    yield ChatGenerationChunk(message=AIMessageChunk(content=piece))
            reply = "".join(text)
            output_tokens = len(shared.llama.tokenize(reply.encode("utf-8"), add_bos=False))
            input_tokens = max(int(shared.llama.n_tokens) - output_tokens, 0)
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                usage_metadata=UsageMetadata(
                    input_tokens=input_tokens,
                    output_tokens=output_tokens,
                    total_tokens=input_tokens + output_tokens,
                ),
                response_metadata={
                    "model_name": self.model_name,
                    "finish_reason": finish,
                    "model_provider": "llama-cpp",
                },
            )
        )

    def _to_result(self, response: dict[str, Any]) -> ChatResult:
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        input_tokens = int(usage.get("prompt_tokens", 0))
        output_tokens = int(usage.get("completion_tokens", 0))
        message = AIMessage(
            content=choice["message"].get("content") or "",
            usage_metadata=UsageMetadata(
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                total_tokens=input_tokens + output_tokens,
            ),
            response_metadata={
                "model_name": self.model_name,
                "finish_reason": choice.get("finish_reason"),
                "model_provider": "llama-cpp",
            },
        )
        return ChatResult(
            generations=[ChatGeneration(message=message)],
            llm_output={"model_name": self.model_name},
        )

    def with_structured_output(
        self,
        schema: dict[str, Any] | type[BaseModel],
        *,
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, Any]:
        """Constrain output with llama.cpp's JSON-schema grammar and parse it (dict or pydantic)."""
        if include_raw:
            raise ValueError("include_raw=True is not supported by the local model")
        if isinstance(schema, dict):
            bound = self.bind(response_format={**_JSON_OBJECT, "schema": schema})
            return bound | JsonOutputParser()
        json_schema = schema.model_json_schema()
        bound = self.bind(response_format={**_JSON_OBJECT, "schema": json_schema})
        return bound | PydanticOutputParser(pydantic_object=schema)
