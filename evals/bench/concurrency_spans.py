"""Who was busy when, in one GRASP run: LLM waits and node spans per hop, from LangChain callbacks.

The recorder is a callback handler: handed to a run's config it sees every graph node start and
end, and every chat model call, with LangGraph's metadata saying which sub-agent (hop) it belongs
to. It also counts the chat model calls in flight, so a run can show whether hops' calls overlapped.
Nothing in the graph is changed to measure it.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

Span = tuple[float, float]
HOP_NODE = "sub_agent"


def merged(spans: Iterable[Span]) -> list[Span]:
    """The union of `spans` as sorted, disjoint spans."""
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def length(spans: Iterable[Span]) -> float:
    """Seconds covered by `spans` (overlaps counted once)."""
    return sum(end - start for start, end in merged(spans))


def intersection(first: Iterable[Span], second: Iterable[Span]) -> list[Span]:
    """The spans covered by both `first` and `second`."""
    a, b = merged(first), merged(second)
    out: list[Span] = []
    i = j = 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if start < end:
            out.append((start, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def difference(first: Iterable[Span], second: Iterable[Span]) -> list[Span]:
    """The parts of `first` that `second` does not cover."""
    out: list[Span] = []
    cuts = merged(second)
    for start, end in merged(first):
        cursor = start
        for cut_start, cut_end in cuts:
            if cut_end <= cursor or cut_start >= end:
                continue
            if cut_start > cursor:
                out.append((cursor, cut_start))
            cursor = max(cursor, cut_end)
        if cursor < end:
            out.append((cursor, end))
    return out


@dataclass
class HopSpans:
    """One hop's time: its node runs (the sub-agent's own nodes) and its LLM waits."""

    nodes: list[Span] = field(default_factory=list)
    llm: list[Span] = field(default_factory=list)

    def other_work(self) -> list[Span]:
        """Time the hop was running a node but not in an LLM call: database, embedding, code.

        With a model of one slot (the local one) it also holds the wait for that slot, which the
        client spends before the call starts.
        """
        return difference(self.nodes, self.llm)

    def llm_free_work(self) -> list[Span]:
        """The runs of nodes that made no LLM call (search, gather_evidence: database, embedding)."""
        return [
            node
            for node in self.nodes
            if not any(start < node[1] and end > node[0] for start, end in self.llm)
        ]

    def window(self) -> Span | None:
        """From the hop's first node start to its last node end."""
        return (
            (min(s for s, _ in self.nodes), max(e for _, e in self.nodes)) if self.nodes else None
        )


def _hop_key(metadata: Mapping[str, Any] | None) -> str | None:
    """The sub-agent task a run belongs to: the first segment of its checkpoint namespace."""
    namespace = str((metadata or {}).get("langgraph_checkpoint_ns", ""))
    first = namespace.split("|", 1)[0]
    return first if first.startswith(f"{HOP_NODE}:") and "|" in namespace else None


class SpanRecorder(BaseCallbackHandler):
    """Records per-hop node spans and LLM waits, and the most chat model calls in flight at once."""

    run_inline = True  # called on the event loop, in order, not from a thread pool

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[UUID, tuple[str | None, str, float]] = {}
        self.hops: dict[str, HopSpans] = defaultdict(HopSpans)
        self.llm_calls = 0
        self.in_flight = 0
        self.max_in_flight = 0

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: dict[str, Any] | Any,
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """A node of a sub-agent starts (other runnables are ignored)."""
        hop = _hop_key(metadata)
        node = (metadata or {}).get("langgraph_node")
        if hop is not None and node is not None and kwargs.get("name") == node:
            with self._lock:
                self._open[run_id] = (hop, "node", time.perf_counter())

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """A sub-agent node ends."""
        self._close(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """A sub-agent node fails: its span still counts."""
        self._close(run_id)

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """A chat model call starts waiting."""
        with self._lock:
            self.llm_calls += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._open[run_id] = (_hop_key(metadata), "llm", time.perf_counter())

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """A chat model call answered."""
        self._close(run_id, llm=True)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """A chat model call failed."""
        self._close(run_id, llm=True)

    def _close(self, run_id: UUID, *, llm: bool = False) -> None:
        ended = time.perf_counter()
        with self._lock:
            if llm:
                self.in_flight -= 1
            opened = self._open.pop(run_id, None)
            if opened is None:
                return
            hop, kind, started = opened
            if hop is None:  # the planner's or the synthesis's call: in no hop
                return
            spans = self.hops[hop].llm if kind == "llm" else self.hops[hop].nodes
            spans.append((started, ended))


@dataclass(frozen=True)
class Overlap:
    """How two or more hops of one run shared time."""

    windows_sum: float
    windows_overlap: float
    other_work: float
    other_work_beside: float
    llm_free_work: float = 0.0
    llm_free_beside: float = 0.0


def overlap(hops: Iterable[HopSpans]) -> Overlap:
    """How the hops' time overlapped.

    Windows: the pairwise overlap of the hops' windows against their sum. Other work: each hop's
    non-LLM time, and how much of it ran while another hop's window was open; likewise for the
    hop's LLM-free nodes alone.
    """
    active = [(hop, window) for hop in hops if (window := hop.window()) is not None]
    windows = [window for _, window in active]
    shared = sum(
        length(intersection([a], [b])) for i, a in enumerate(windows) for b in windows[i + 1 :]
    )
    work = beside = free = free_beside = 0.0
    for i, (hop, _) in enumerate(active):
        others = windows[:i] + windows[i + 1 :]
        own, llm_free = hop.other_work(), hop.llm_free_work()
        work += length(own)
        beside += length(intersection(own, others))
        free += length(llm_free)
        free_beside += length(intersection(llm_free, others))
    return Overlap(
        sum(end - start for start, end in windows), shared, work, beside, free, free_beside
    )
