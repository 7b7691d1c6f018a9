"""The final answer's text, streamed as "answer_delta" events while the synthesis reply comes in.

The synthesiser replies with JSON (`{"answer": "…", "justification": "…"}`), so the raw tokens
on the "messages" stream are JSON. A chat UI wants the answer's words alone: this turns the
reply's chunks into custom events that carry only the newly written part of the answer field.

Contract for a client: the concatenated `text` of the "answer_delta" events since the last
"answer_restart" equals the run's final answer (the "answer" event's). A restart is sent when
the model is asked again (a malformed reply re-asked) or when the final answer is not an
extension of what already streamed (a synthesis that failed and fell back to the last hop).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk
from langchain_core.tracers.context import register_configure_hook

from nodes.llm.reply import partial_field

Write = Callable[[dict[str, Any]], None]

#: The listener of the synthesis call in progress; LangChain adds it to every model call made
#: while it is set (a configure hook), so the LLM client needs no extra argument.
_listener: ContextVar[AnswerDeltas | None] = ContextVar("grasp_answer_deltas", default=None)
register_configure_hook(_listener, inheritable=True)


class AnswerDeltas(AsyncCallbackHandler):
    """Writes "answer_delta" events for the answer field of a streaming JSON reply.

    It listens and never makes a model stream by itself: a reply streams when the client also
    asks for "messages" (LangGraph then streams every call) or the model always streams; else
    the whole answer comes as one delta from `finish`. Forcing a stream would cost the token
    count of providers that report no usage while streaming (llama.cpp's OpenAI server).
    """

    def __init__(self, write: Write, field: str = "answer") -> None:
        self.write = write
        self.field = field
        self.raw = ""
        self.sent = ""  # the answer text already sent since the last restart

    async def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        """A new reply (a first ask, a re-ask or a cached replay) starts from nothing."""
        self.raw = ""
        self.restart()

    async def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Send what the answer field gained; trailing spaces wait, they may be trimmed."""
        self.raw += token if isinstance(token, str) else blocks_text(token)
        grown = partial_field(self.raw, self.field).strip()
        if len(grown) > len(self.sent) and grown.startswith(self.sent):
            self.send(grown[len(self.sent) :])

    def finish(self, answer: str) -> None:
        """Make the streamed text equal the final answer, whatever did or did not stream."""
        if not answer.startswith(self.sent):
            self.restart()
        if len(answer) > len(self.sent):
            self.send(answer[len(self.sent) :])

    def send(self, text: str) -> None:
        """Write one delta."""
        self.write({"event": "answer_delta", "text": text})
        self.sent += text

    def restart(self) -> None:
        """Tell the client to forget what streamed (only when something did)."""
        if self.sent:
            self.write({"event": "answer_restart"})
            self.sent = ""

    @contextmanager
    def listening(self) -> Iterator[None]:
        """Listen to the model calls made inside the block (then call `finish`)."""
        token = _listener.set(self)
        try:
            yield
        finally:
            _listener.reset(token)


def blocks_text(blocks: list[str | dict[str, Any]]) -> str:
    """The text of a chunk given as content blocks (some providers stream those)."""
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in blocks)


def answer_text(events: Sequence[dict[str, Any]]) -> str:
    """The answer a client has shown after these custom events (the contract above)."""
    shown = ""
    for event in events:
        if event.get("event") == "answer_restart":
            shown = ""
        elif event.get("event") == "answer_delta":
            shown += event["text"]
    return shown
