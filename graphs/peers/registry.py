"""Every answering method by name: its graph builder and Context class, and one way to run it.

`grasp ask --method M` and the eval runner both go through here, so every method is built, run,
checkpointed and tallied the same way.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from graphs.agent.context import GraspContext
from graphs.agent.graph import build_grasp_graph
from graphs.peers.bm25 import Bm25Context, build_bm25_graph
from graphs.peers.dense import DenseContext, build_dense_graph
from graphs.peers.full_context import FullContextContext, build_full_context_graph
from graphs.peers.ircot_ppr import IrcotContext, build_ircot_graph
from graphs.peers.no_context import NoContextContext, build_no_context_graph
from graphs.peers.prism import PrismContext, build_prism_graph
from graphs.peers.proprag_reader import PropRagContext, build_proprag_graph
from graphs.peers.sa_rag_cot import SaRagCotContext, build_sa_rag_cot_graph
from graphs.peers.self_ask import SelfAskContext, build_self_ask_graph
from graphs.runtime.checkpoints import ATTEMPT_KEY
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider

AnyGraph = CompiledStateGraph[Any, Any, Any, Any]
GraphBuilder = Callable[[Services | ServicesProvider | None, Checkpointer], AnyGraph]


@dataclass(frozen=True)
class Method:
    """One answering method: how to build its graph and the Context its runs take."""

    build: GraphBuilder
    context: type[Any]
    summary: str


DEFAULT_METHOD = "grasp"

METHODS: dict[str, Method] = {
    "grasp": Method(build_grasp_graph, GraspContext, "GRASP: planner, graph-search sub-agents"),
    "prism": Method(build_prism_graph, PrismContext, "PRISM: analyzer, selector ↔ adder"),
    "ircot": Method(build_ircot_graph, IrcotContext, "IRCoT with PPR retrieval"),
    "sa-rag-cot": Method(build_sa_rag_cot_graph, SaRagCotContext, "SA-RAG inside a CoT loop"),
    "self-ask": Method(build_self_ask_graph, SelfAskContext, "Self-Ask with dense top-k"),
    "proprag": Method(build_proprag_graph, PropRagContext, "PropRAG retrieval, one answer"),
    "full-context": Method(
        build_full_context_graph, FullContextContext, "the whole corpus in one call"
    ),
    "dense": Method(build_dense_graph, DenseContext, "dense top-k passages, one answer"),
    "bm25": Method(build_bm25_graph, Bm25Context, "BM25 top-k passages, one answer"),
    "none": Method(build_no_context_graph, NoContextContext, "closed-book, no context"),
}


def method_named(name: str) -> Method:
    """The method called `name`; an unknown name is refused with the valid ones listed."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; choose one of {', '.join(METHODS)}") from None


def setting_names(name: str) -> list[str]:
    """The Context fields of method `name`, the corpus left out."""
    return [f.name for f in fields(method_named(name).context) if f.name != "corpus"]


def method_context(name: str, corpus: str, **overrides: Any) -> Any:
    """The Context of a `name` run over `corpus`; unknown setting names are refused."""
    known = set(setting_names(name))
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise TypeError(f"unknown {name} settings {unknown}; valid ones: {sorted(known)}")
    return method_named(name).context(corpus=corpus, **overrides)


def build_method_graph(
    name: str,
    services: Services | ServicesProvider | None = None,
    checkpointer: Checkpointer = None,
) -> AnyGraph:
    """The compiled graph of method `name`."""
    return method_named(name).build(services, checkpointer)


async def run_method(
    name: str,
    question: str,
    corpus: str | None,
    *,
    services: Services | ServicesProvider | None = None,
    checkpointer: Checkpointer = None,
    thread_id: str | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Answer `question` over `corpus` with method `name`; the final state.

    Every method's final state has `question`, `final_answer`, `tokens` (the run's token tally)
    and `error`; the retrieval peers add `passages` (ids shown to the answer step) and PRISM
    `kept` (its evidence set). `corpus` may be None for the closed-book method only.
    """
    if corpus is None and name != "none":
        raise ValueError(f"method {name} answers from a corpus; none was named")
    context = method_context(name, corpus or "-", **overrides)
    graph = build_method_graph(name, services, checkpointer)
    config: RunnableConfig = {
        "configurable": {"thread_id": thread_id or str(uuid.uuid4())},
        "metadata": {"grasp_method": name, ATTEMPT_KEY: uuid.uuid4().hex},
    }
    return dict(await graph.ainvoke({"question": question}, config, context=context))
