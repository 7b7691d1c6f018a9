"""Full context (the extended-context setting): every passage of the corpus in one answer call.

In the long setting a corpus holds one LongBench record's context, so "the corpus" is the whole
given context. A prompt that cannot fit the model's window is refused with one line in `error`
before any call: the window is `window_tokens` when set, else the local llama.cpp model's n_ctx
(graphs/models/local_model.py); other providers' windows are not known here and are not checked.
The check is an estimate, so a prompt the local model still refuses (its own n_ctx check) ends
the run the same way, with the model's line in `error`.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from graphs.models.local_model import LocalLlamaChatModel
from graphs.models.providers import is_local
from graphs.models.roles import AGENT_MAX_TOKENS
from graphs.peers.cite import reply_update
from graphs.peers.context import PeerContext, at_least
from graphs.peers.retrieve_answer import PeerGraph
from graphs.peers.state import PeerInput, PeerState
from graphs.peers.steps import PeerSteps
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider, Wiring, as_provider
from nodes.llm.client import LlmCallError, LlmClient
from nodes.peers.answer import WITH_PASSAGES, answer_prompt
from store.corpus_reads import corpus_passages

#: English text runs at about four characters a token in the models we use; a prompt the
#: estimate lets through but the model refuses still fails with the model's own message.
CHARS_PER_TOKEN = 4


#: What the local model's own check says when a prompt overflows its window.
OVERFLOW_MARKER = "n_ctx="


def model_window(spec: str, llm: LlmClient | None = None) -> int | None:
    """The context window (tokens) of the chat model `spec`, where it is known here.

    A local model already loaded by `llm` tells its own n_ctx; one not loaded yet will be built
    with LocalLlamaChatModel's default.
    """
    if llm is not None and isinstance(llm.model, LocalLlamaChatModel):
        return llm.model.n_ctx
    if is_local(spec):
        return int(LocalLlamaChatModel.model_fields["n_ctx"].default)
    return None


def estimated_tokens(text: str) -> int:
    """A rough token count of `text`."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(kw_only=True)
class FullContextContext(PeerContext):
    """A full-context run's configuration."""

    max_passage_chars: int = field(
        default=0, metadata={"description": "passages are cut to this many characters (0: whole)"}
    )
    window_tokens: int = field(
        default=0,
        metadata={
            "description": "the model's context window in tokens; 0: the local model's n_ctx "
            "(other providers are not checked)"
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        at_least(self, 0, "window_tokens")


def too_long(prompt_tokens: int, window: int | None, model: str) -> str | None:
    """The one-line refusal when the prompt and the reply's room exceed `window`, else None."""
    if window is None or prompt_tokens + AGENT_MAX_TOKENS <= window:
        return None
    return (
        f"the whole context is about {prompt_tokens} tokens, which with {AGENT_MAX_TOKENS} for "
        f"the reply exceeds the {window}-token window of {model}; use a model with a longer "
        "window (window_tokens) or a retrieval method"
    )


def after_read(state: PeerState) -> Literal["answer", "__end__"]:
    """Answer, unless the context was refused."""
    return "__end__" if state.get("error") else "answer"


def build_full_context_graph(
    services: Services | ServicesProvider | None = None, checkpointer: Checkpointer = None
) -> PeerGraph:
    """Compile start → read_context → answer (or END when the context cannot fit)."""
    wiring = Wiring(as_provider(services), FullContextContext)
    steps = PeerSteps(wiring)

    async def read_context(
        state: PeerState, runtime: Runtime[FullContextContext]
    ) -> dict[str, Any]:
        """Take every passage of the corpus, and check the prompt fits the model's window."""
        context, svc = await wiring.resolve(runtime)
        corpus = state.get("corpus_id")
        assert corpus is not None  # start resolved it
        passages = await asyncio.to_thread(corpus_passages, svc.engine, corpus)
        spec = context.chat_model or svc.settings.chat_model
        window = context.window_tokens or model_window(spec, svc.llm)
        prompt = WITH_PASSAGES + answer_prompt(
            state["question"], passages, [], context.passage_chars(len(passages))
        )
        update: dict[str, Any] = {"passages": [p.id for p in passages]}
        refusal = too_long(estimated_tokens(prompt), window, svc.llm.model_name)
        if refusal:
            update |= {"error": refusal, **reply_update("", [])}  # no answer, said so
        return update

    async def answer(state: PeerState, runtime: Runtime[FullContextContext]) -> dict[str, Any]:
        """One answer call over the whole context; the model's own overflow refusal is kept."""
        try:
            return await steps.answer(state, runtime)
        except LlmCallError as exc:
            if OVERFLOW_MARKER not in str(exc):
                raise  # not the window: the run stops and can be resumed
            return {"final_answer": "", "error": " ".join(str(exc).split()), **reply_update("", [])}

    graph = StateGraph(PeerState, context_schema=FullContextContext, input_schema=PeerInput)
    graph.add_node("start", steps.start)
    graph.add_node("read_context", read_context)
    graph.add_node("answer", answer)
    graph.add_edge(START, "start")
    graph.add_edge("start", "read_context")
    graph.add_conditional_edges("read_context", after_read, ["answer", END])
    graph.add_edge("answer", END)
    return graph.compile(checkpointer=checkpointer, name="full_context")


graph = build_full_context_graph()
