"""Every LLM call goes through here: response cache, retries with backoff, JSON parsing, token ledger."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.constants import TAG_NOSTREAM
from sqlalchemy import Engine

from nodes.llm.prompt_parts import prompt_chars, token_split
from nodes.llm.provider_errors import error_usage, is_transient
from nodes.llm.reply import (
    LlmResult,
    MalformedOutput,
    Schema,
    extract_json,
    message_text,
    parse_reply,
    usage_of,
)
from store.ledger import CachedResponse, CallRecord, cache_get, cache_put, record_call

log = logging.getLogger(__name__)

__all__ = [
    "CallTag",
    "LlmCallError",
    "LlmClient",
    "LlmResult",
    "MalformedOutput",
    "extract_json",
    "message_text",
    "parse_reply",
    "system_and_user",
    "usage_of",
]


#: Calls one client makes at once unless told otherwise (GRASP_LLM_CONCURRENCY sets the run's).
DEFAULT_CONCURRENCY = 4


class LlmCallError(RuntimeError):
    """The provider kept failing (after retries) or refused the request."""


#: The nodes whose calls write a run's answer. Only they stream on LangGraph's "messages" mode:
#: every other call (a plan, a rewrite, an evaluation) is JSON a chat client should not show as
#: the assistant talking, so it is tagged "nostream" (its progress goes out as custom events).
ANSWER_NODES = frozenset({"synthesize", "answer"})


@dataclass(frozen=True)
class CallTag:
    """Who made a call, for the ledger and the per-node token breakdown."""

    node: str
    corpus_id: int | None = None
    run_id: str | None = None
    agent_id: str | None = None
    iteration: int | None = None


def stream_config(tag: CallTag) -> RunnableConfig | None:
    """No config for an answer-writing call; a "nostream" tag for every other one."""
    return None if tag.node in ANSWER_NODES else {"tags": [TAG_NOSTREAM]}


def cache_key(
    model_name: str, messages: Sequence[BaseMessage], json_schema: dict[str, Any] | None
) -> str:
    """sha256 of everything that determines a reply."""
    payload = json.dumps(
        {
            "model": model_name,
            # Every call asks for JSON; the flag stays in the key so stored responses still match.
            "json": True,
            "schema": json_schema,
            "messages": [[m.type, m.content] for m in messages],
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


#: Binds a JSON schema to a model where the provider can enforce it.
SchemaBinder = Callable[[BaseChatModel, dict[str, Any]], Runnable[LanguageModelInput, BaseMessage]]


@dataclass(kw_only=True)
class LlmClient:
    """A chat model plus the store's cache and ledger; one per model role (chat, judge, …)."""

    #: The model every call goes to; it answers in JSON mode where the provider has one.
    model: BaseChatModel | None
    model_name: str
    engine: Engine | None = None
    #: Builds the model on first use, so a run that never calls the LLM (spaCy indexing,
    #: retrieval evals) never loads or assembles model weights.
    factory: Callable[[], BaseChatModel] | None = None
    #: Binds a JSON schema to the model where the provider can enforce it (llama.cpp turns it
    #: into a grammar, so a small model cannot emit the wrong number of items).
    schema_binder: SchemaBinder | None = None
    use_cache: bool = True
    max_attempts: int = 5
    backoff_s: float = 1.0
    concurrency: int = DEFAULT_CONCURRENCY
    _semaphore: asyncio.Semaphore | None = field(default=None, init=False, repr=False)

    def _gate(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.concurrency)
        return self._semaphore

    async def complete_json(
        self,
        messages: Sequence[BaseMessage],
        schema: type[Schema],
        tag: CallTag,
        *,
        validate: Callable[[Schema], None] | None = None,
        attempts: int = 2,
        json_schema: dict[str, Any] | None = None,
    ) -> tuple[Schema, list[LlmResult]]:
        """Ask for JSON matching `schema`; a malformed reply is re-asked once with the error shown.

        Only replies that parse are cached, so a retry never replays a bad answer. Raises
        MalformedOutput (carrying the last raw reply) when every attempt fails.
        """
        results: list[LlmResult] = []
        conversation = list(messages)
        last_error: MalformedOutput | None = None
        for _ in range(attempts):
            result = await self._complete_uncached_on_failure(
                conversation, tag, schema=schema, validate=validate, json_schema=json_schema
            )
            results.append(result[0])
            if result[1] is not None:
                return result[1], results
            last_error = result[2]
            assert last_error is not None
            conversation = [
                *messages,
                AIMessage(content=result[0].text),
                HumanMessage(
                    content=f"That reply was not usable ({last_error}). "
                    "Answer again with only the JSON object, following the format exactly."
                ),
            ]
        assert last_error is not None
        last_error.results = results
        raise last_error

    async def _complete_uncached_on_failure(
        self,
        messages: Sequence[BaseMessage],
        tag: CallTag,
        *,
        schema: type[Schema],
        validate: Callable[[Schema], None] | None,
        json_schema: dict[str, Any] | None,
    ) -> tuple[LlmResult, Schema | None, MalformedOutput | None]:
        enforced = json_schema if self.schema_binder is not None else None
        key = cache_key(self.model_name, messages, enforced)
        cached = None
        if self.use_cache and self.engine is not None:
            cached = await asyncio.to_thread(cache_get, self.engine, key)
        if cached is not None:
            result = LlmResult(cached.text, cached.input_tokens, cached.output_tokens, 0.0, True)
        else:
            result = await self._call_with_retries(messages, enforced, tag)
        result = replace(result, parts=token_split(prompt_chars(messages), result.input_tokens))
        try:
            parsed = parse_reply(result.text, schema)
            if validate is not None:
                validate(parsed)
        except MalformedOutput as exc:
            await self._record(tag, result, failed=True)
            return result, None, exc
        except ValueError as exc:
            await self._record(tag, result, failed=True)
            return result, None, MalformedOutput(str(exc), result.text)
        await self._record(tag, result)
        if cached is None and self.use_cache and self.engine is not None:
            response = CachedResponse(result.text, result.input_tokens, result.output_tokens)
            await asyncio.to_thread(cache_put, self.engine, key, self.model_name, response)
        return result, parsed, None

    async def _call_with_retries(
        self, messages: Sequence[BaseMessage], json_schema: dict[str, Any] | None, tag: CallTag
    ) -> LlmResult:
        if self.model is None:
            if self.factory is None:
                raise LlmCallError(f"{self.model_name}: no model and no factory to build one")
            self.model = await asyncio.to_thread(self.factory)
        model: Runnable[LanguageModelInput, BaseMessage] = self.model
        if json_schema is not None and self.schema_binder is not None:
            model = self.schema_binder(self.model, json_schema)
        delay = self.backoff_s
        for attempt in range(1, self.max_attempts + 1):
            started = time.perf_counter()
            try:
                async with self._gate():
                    # Latency is the call itself, not the wait for a free slot.
                    started = time.perf_counter()
                    reply = await model.ainvoke(list(messages), stream_config(tag))
            except Exception as exc:
                # The provider may have billed the attempt: the ledger keeps it, flagged.
                tokens_in, tokens_out = error_usage(exc)
                failed = LlmResult("", tokens_in, tokens_out, time.perf_counter() - started, False)
                await self._record(tag, failed, failed=True)
                if not is_transient(exc) or attempt == self.max_attempts:
                    raise LlmCallError(
                        f"{self.model_name} failed after {attempt} attempt(s): "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                log.warning(
                    "%s: transient error (%s); retrying in %.1fs", self.model_name, exc, delay
                )
                await asyncio.sleep(delay)
                delay *= 2
                continue
            latency = time.perf_counter() - started
            assert isinstance(reply, AIMessage)
            tokens_in, tokens_out = usage_of(reply)
            return LlmResult(message_text(reply), tokens_in, tokens_out, latency, False)
        raise AssertionError("unreachable")

    async def _record(self, tag: CallTag, result: LlmResult, *, failed: bool = False) -> None:
        if self.engine is None:
            return
        record = CallRecord(
            node=tag.node,
            model=self.model_name,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            latency_s=result.latency_s,
            cached=result.cached,
            corpus_id=tag.corpus_id,
            run_id=tag.run_id,
            agent_id=tag.agent_id,
            iteration=tag.iteration,
            failed=failed,
        )
        await asyncio.to_thread(record_call, self.engine, record)


def system_and_user(system: str, user: str) -> list[BaseMessage]:
    """The two-message prompt shape every node uses."""
    return [SystemMessage(content=system), HumanMessage(content=user)]
