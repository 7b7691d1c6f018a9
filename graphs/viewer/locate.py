"""Which graph made a thread, so its checkpoints are read with the right nodes.

In order: the method its config metadata names (`grasp ask --method`, the eval runner), the graph
the dev server says it ran (`graph_id`), else the first method or langgraph.json graph whose nodes
cover the nodes the thread ran. A graph added to the method registry or to langgraph.json is
viewable without changing this module.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel

from graphs.peers.registry import METHODS, build_method_graph
from graphs.runtime.run_history import METHOD_KEY
from graphs.viewer.trace import NoSuchThread

AnyGraph = Pregel[Any, Any, Any, Any]
LANGGRAPH_JSON = Path(__file__).resolve().parents[2] / "langgraph.json"


def exported_graphs() -> dict[str, str]:
    """Graph name → 'path/to/module.py:attribute', as langgraph.json exports them."""
    if not LANGGRAPH_JSON.exists():  # an installed package without its langgraph.json
        return {}
    return dict(json.loads(LANGGRAPH_JSON.read_text(encoding="utf-8")).get("graphs", {}))


def load_exported(spec: str) -> AnyGraph:
    """Import './graphs/agent/graph.py:graph' as graphs.agent.graph.graph."""
    path, _, attribute = spec.partition(":")
    module = path.removeprefix("./").removesuffix(".py").replace("/", ".")
    graph = getattr(importlib.import_module(module), attribute)
    if not isinstance(graph, Pregel):
        raise TypeError(f"{spec} is not a compiled graph")
    return graph


async def graph_for_thread(saver: BaseCheckpointSaver[Any], thread: str) -> tuple[str, AnyGraph]:
    """The name and graph (bound to `saver`) that ran `thread`."""
    latest = await saver.aget_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
    if latest is None:
        raise NoSuchThread(f"no checkpoints for thread {thread!r}")
    metadata: dict[str, Any] = dict(latest.metadata or {})
    method = metadata.get(METHOD_KEY)
    if isinstance(method, str) and method in METHODS:
        return method, build_method_graph(method, None, saver)
    exported = exported_graphs()
    named = metadata.get("graph_id")
    if isinstance(named, str) and named in exported:  # the dev server records its graph
        return named, load_exported(exported[named]).copy(update={"checkpointer": saver})
    # Names in dunders (__start__, __interrupt__, …) are LangGraph's own, in every graph.
    ran = {n for n in latest.checkpoint.get("versions_seen", {}) if not n.startswith("__")}
    for name in METHODS:  # GRASP first: unnamed threads are most likely its runs
        graph: AnyGraph = build_method_graph(name, None, saver)
        if ran <= set(graph.nodes):
            return name, graph
    for name, spec in sorted(exported.items()):
        graph = load_exported(spec)
        if ran <= set(graph.nodes):
            return name, graph.copy(update={"checkpointer": saver})
    raise LookupError(f"thread {thread!r} ran nodes {sorted(ran)} that no known graph has")
