"""A thread's branches: the original run and each fork of it, side by side.

Checkpoints are read as plain `Checkpoint` records, from a local checkpointer's snapshots or a
LangGraph server's history alike. A branch is a leaf checkpoint and the chain of parents behind it;
the branches of a turn are the leaves whose chain holds that turn's input checkpoint. What a fork
changed is in its checkpoints' metadata (FORK_KEY, written by `grasp fork`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langgraph.pregel import Pregel
from langgraph.types import StateSnapshot

from graphs.runtime.checkpoints import checkpoint_id, read_all_steps

#: Checkpoint metadata key of a fork's record: {"at", "from", "set", "question", "reused"}.
FORK_KEY = "grasp_fork"


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint of the parent graph, as forks and branch listings read it."""

    id: str
    parent_id: str | None
    next: tuple[str, ...]
    values: dict[str, Any]
    #: (task name, its write or None, its error or None) of each task run right after it
    tasks: list[tuple[str, Any, str | None]]
    metadata: dict[str, Any]
    created_at: str | None = None

    @classmethod
    def of_snapshot(cls, snapshot: StateSnapshot) -> Checkpoint:
        """From a local checkpointer's snapshot."""
        return cls(
            id=str(checkpoint_id(snapshot.config)),
            parent_id=checkpoint_id(snapshot.parent_config),
            next=tuple(snapshot.next),
            values=dict(snapshot.values),
            tasks=[
                (t.name, t.result, None if t.error is None else str(t.error))
                for t in snapshot.tasks
            ],
            metadata=dict(snapshot.metadata or {}),
            created_at=snapshot.created_at,
        )

    @classmethod
    def of_server(cls, item: Mapping[str, Any]) -> Checkpoint:
        """From one item of a LangGraph server's thread history (`threads.get_history`)."""
        parent = item.get("parent_checkpoint") or {}
        return cls(
            id=str(item["checkpoint"]["checkpoint_id"]),
            parent_id=parent.get("checkpoint_id"),
            next=tuple(item.get("next") or ()),
            values=dict(item.get("values") or {}),
            tasks=[(t["name"], t.get("result"), t.get("error")) for t in item.get("tasks", [])],
            metadata=dict(item.get("metadata") or {}),
            created_at=item.get("created_at"),
        )

    @property
    def source(self) -> str:
        """input, loop, update or fork (how LangGraph came to write it)."""
        return str(self.metadata.get("source", ""))


def chain_to(checkpoints: list[Checkpoint], leaf: str | None = None) -> list[Checkpoint]:
    """From the first checkpoint to `leaf` (default: the newest), oldest first."""
    by_id = {c.id: c for c in checkpoints}
    current = by_id.get(leaf) if leaf else max(checkpoints, key=lambda c: c.id, default=None)
    chain: list[Checkpoint] = []
    while current is not None:
        chain.append(current)
        current = by_id.get(current.parent_id) if current.parent_id else None
    return chain[::-1]


def turn_of(chain: list[Checkpoint]) -> list[Checkpoint]:
    """The chain's last turn: from its last input checkpoint on."""
    starts = [i for i, c in enumerate(chain) if c.source == "input"]
    return chain[starts[-1] :] if starts else chain


def usage(tokens: Mapping[str, Any] | None) -> dict[str, int]:
    """input_tokens, output_tokens and calls of a tally (0 where missing)."""
    tokens = tokens or {}
    return {k: int(tokens.get(k, 0)) for k in ("input_tokens", "output_tokens", "calls")}


def fork_record(turn: list[Checkpoint]) -> dict[str, Any] | None:
    """What the branch's latest fork changed, from its checkpoints' metadata (None: no fork)."""
    for checkpoint in reversed(turn):
        raw = checkpoint.metadata.get(FORK_KEY)
        if raw:
            return dict(json.loads(raw) if isinstance(raw, str) else raw)
    return None


@dataclass(frozen=True)
class Branch:
    """One branch of a turn: how it ended, what it cost and what its fork changed."""

    leaf: str
    question: str
    answer: str
    status: str  # done, paused, failed, unfinished
    tokens: dict[str, int]  # the branch's state tally: reused steps included
    spent: dict[str, int]  # what this branch's own calls cost (the tally less what it reused)
    fork: dict[str, Any] | None = None  # None: the original run
    current: bool = False
    changed: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """'original run', or 'fork at sq2'."""
        return f"fork at {self.fork.get('at', '?')}" if self.fork else "original run"


def status_of(leaf: Checkpoint) -> str:
    """done, failed (a step raised), paused (waiting on a review) or unfinished."""
    if any(error for _, _, error in leaf.tasks):
        return "failed"
    if not leaf.next:
        return "done"
    return "paused" if "review_plan" in leaf.next else "unfinished"


def changes(fork: dict[str, Any] | None) -> list[str]:
    """What a fork changed, as short phrases."""
    if not fork:
        return []
    said = [f"{k}={v}" for k, v in sorted((fork.get("set") or {}).items())]
    if fork.get("question"):
        said.append(f"asked: {fork['question']}")
    return said or ["nothing: the same settings"]


def fork_note(before: StateSnapshot | None, here: StateSnapshot) -> str | None:
    """'── fork at sq2 from here: k_passages=3' where a branch's own checkpoints begin, else None."""
    record: Any = dict(here.metadata or {}).get(FORK_KEY)
    if not record or (before is not None and dict(before.metadata or {}).get(FORK_KEY) == record):
        return None
    fork = json.loads(record) if isinstance(record, str) else dict(record)
    return f"── fork at {fork.get('at', '?')} from here: {'; '.join(changes(fork))}"


def branches_of(checkpoints: list[Checkpoint]) -> list[Branch]:
    """The branches of the newest checkpoint's turn: the original run first, then each fork."""
    if not checkpoints:
        return []
    newest = max(checkpoints, key=lambda c: c.id)
    start = turn_of(chain_to(checkpoints, newest.id))[0].id
    parents = {c.parent_id for c in checkpoints}
    found: list[Branch] = []
    for leaf in sorted((c for c in checkpoints if c.id not in parents), key=lambda c: c.id):
        chain = chain_to(checkpoints, leaf.id)
        ids = [c.id for c in chain]
        if start not in ids:
            continue  # another turn's branch
        fork = fork_record(chain[ids.index(start) :])
        tokens = usage(leaf.values.get("tokens"))
        reused = usage((fork or {}).get("reused"))
        found.append(
            Branch(
                leaf=leaf.id,
                question=str(leaf.values.get("question", "")),
                answer=str(leaf.values.get("final_answer") or ""),
                status=status_of(leaf),
                tokens=tokens,
                spent={k: tokens[k] - reused[k] for k in tokens},
                fork=fork,
                current=leaf.id == newest.id,
                changed=changes(fork),
            )
        )
    return sorted(found, key=lambda b: b.fork is not None)  # stable: forks in creation order


async def thread_branches(graph: Pregel[Any, Any, Any, Any], thread: str) -> list[Branch]:
    """The branches of the thread's latest turn, read from the graph's checkpointer."""
    snapshots = await read_all_steps(graph, thread)
    return branches_of([Checkpoint.of_snapshot(s) for s in snapshots])


def tokens_phrase(counts: Mapping[str, int]) -> str:
    """'1,770 in / 181 out, 10 calls'."""
    calls = counts.get("calls", 0)
    return (
        f"{counts.get('input_tokens', 0):,} in / {counts.get('output_tokens', 0):,} out, "
        f"{calls} call{'' if calls == 1 else 's'}"
    )


def branch_lines(branches: list[Branch]) -> list[str]:
    """The branches as aligned columns: branch, what changed, answer, tokens (and spent anew)."""
    if len(branches) < 2:
        return []
    rows = [("  branch", "changed", "answer", "tokens (this branch's own calls)")]
    for b in branches:
        mark = "* " if b.current else "  "
        rows.append(
            (
                mark + b.label,
                "; ".join(b.changed) or "-",
                (b.answer or f"({b.status})")[:40],
                f"{tokens_phrase(b.tokens)} ({tokens_phrase(b.spent)})",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [f"branches of this turn: {len(branches)} (* the latest)"]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  " + "  ".join([*cells, row[3]]).rstrip())
    return lines
