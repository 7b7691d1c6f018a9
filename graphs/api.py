"""The Python API of the GRASP agent, for embedding it in other applications.

from graphs.api import answer, get_grasp_graph

result = await answer("Where was the director of Blue Harbor born?", "films", max_iterations=2)
result["final_answer"], result["tokens"]["input_tokens"]

graph = get_grasp_graph()              # a compiled LangGraph graph: ainvoke / astream
async for update in graph.astream(
    {"question": "…"}, context=GraspContext(corpus="films"), stream_mode="updates"
):
    ...
"""

from __future__ import annotations

import uuid
from dataclasses import fields
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Checkpointer

from graphs.agent.context import GraspContext
from graphs.agent.graph import GraspGraph, build_grasp_graph
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider

__all__ = ["GraspContext", "answer", "get_grasp_graph", "make_context"]


def get_grasp_graph(
    services: Services | ServicesProvider | None = None, checkpointer: Checkpointer = None
) -> GraspGraph:
    """The compiled GRASP graph; services default to the environment's (GRASP_*, DATABASE_URL).

    Run it with `context=GraspContext(...)`; pass a checkpointer (and a `thread_id` in the config)
    to make runs resumable.
    """
    return build_grasp_graph(services, checkpointer)


def make_context(corpus: str, **overrides: Any) -> GraspContext:
    """A GraspContext for `corpus`; unknown override names are refused with the valid ones listed."""
    known = {f.name for f in fields(GraspContext)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise TypeError(f"unknown GRASP settings {unknown}; valid ones: {sorted(known)}")
    return GraspContext(corpus=corpus, **overrides)


async def answer(
    question: str,
    corpus: str = "default",
    *,
    services: Services | ServicesProvider | None = None,
    checkpointer: Checkpointer = None,
    thread_id: str | None = None,
    **context_overrides: Any,
) -> dict[str, Any]:
    """Answer one question over `corpus` and return the final state.

    Keys: question, plan, sub_questions, answers, final_answer, justification, tokens, error.
    `context_overrides` are GraspContext fields (max_iterations=2, planner="off", …).
    """
    graph = build_grasp_graph(services, checkpointer)
    config: RunnableConfig = {"configurable": {"thread_id": thread_id or str(uuid.uuid4())}}
    result = await graph.ainvoke(
        {"question": question}, config, context=make_context(corpus, **context_overrides)
    )
    return dict(result)
