"""Forks of a GRASP run: run it again from its plan, one hop or its synthesis, as a new branch.

A fork starts from a checkpoint of the parent graph, so the steps before it are neither run nor
paid again, and writes its branch beside the original (LangGraph time travel):
- plan: from the checkpoint before the planner (with `question`, the question is replaced first);
- synthesis: from the checkpoint before the synthesis;
- hop k: from the checkpoint before the `schedule` step that sends hop k. Its siblings in that
  superstep are written back as they were (as `sub_agent` writes, so they are not run again), and
  with `question` hop k's text is replaced; `schedule` then sends hop k, and every later step runs.
  Replaying from a checkpoint inside the sub-agent subgraph is no way in: LangGraph 1.2 re-runs
  the whole sub-agent from its start (tests/graph/test_fork.py shows it), so a hop is the finest
  step a fork starts at.
The plan is made from plain `Checkpoint` records, so a client of a LangGraph server can make the
same fork with `threads.update_state` and `runs.create(checkpoint_id=…)`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel

from graphs.agent.context import GraspContext
from graphs.runtime.branches import FORK_KEY, Checkpoint, turn_of, usage
from nodes.agent.plan_dag import PlanError, build_dag, ready

_HOP = re.compile(r"^(?:sq|hop)?(\d+)$")
STEPS = "plan, sqK (hop K, e.g. sq2) or synthesis"


class ForkRefused(ValueError):
    """The fork cannot be made as asked; the message says why in one line."""


@dataclass(frozen=True)
class ForkPlan:
    """Where a branch starts and what is written there before it runs."""

    at: str  # plan | sqK | synthesis
    checkpoint_id: str  # the checkpoint the branch grows from
    as_node: str | None  # the node each update is written as
    updates: list[dict[str, Any]] = field(default_factory=list)  # applied in order
    reused: dict[str, int] = field(default_factory=lambda: usage(None))  # tokens not spent again
    question: str = ""  # the run's question on the branch


def step_name(at: str) -> str:
    """The canonical name of a fork step: plan, sqK or synthesis."""
    text = at.strip().lower()
    if text in ("plan", "synthesis", "synthesize"):
        return "synthesis" if text.startswith("synth") else "plan"
    match = _HOP.match(text)
    if match is None or int(match[1]) < 1:
        raise ForkRefused(f"--at takes {STEPS}, not {at!r}")
    return f"sq{int(match[1])}"


def plan_fork(chain: list[Checkpoint], at: str, question: str | None = None) -> ForkPlan:
    """The fork at step `at` of the chain's last turn (`question`: the new question or hop text)."""
    turn = turn_of(chain)
    name = step_name(at)
    asked = (question or "").strip() or None
    if name == "plan":
        return _at_plan(turn, asked)
    if name == "synthesis":
        if asked:
            raise ForkRefused(
                "--question rewords the question (at plan) or a hop, not the synthesis"
            )
        return _at_synthesis(turn)
    return _at_hop(turn, int(name[2:]), asked)


def _at_plan(turn: list[Checkpoint], question: str | None) -> ForkPlan:
    target = next((c for c in turn if c.next == ("plan",)), None)
    if target is None:
        raise ForkRefused("this run has no checkpoint before its plan")
    updates = [{"question": question}] if question else []
    asked = question or str(target.values.get("question", ""))
    return ForkPlan("plan", target.id, "__start__", updates, usage(None), asked)


def _at_synthesis(turn: list[Checkpoint]) -> ForkPlan:
    target = next((c for c in reversed(turn) if c.next == ("synthesize",)), None)
    if target is None:
        raise ForkRefused("this run never reached its synthesis; fork at a hop or the plan")
    reused = usage(target.values.get("tokens"))
    return ForkPlan("synthesis", target.id, None, [], reused, str(target.values["question"]))


def _answered(write: Any) -> set[int]:
    """The hop indices a sub_agent write answered."""
    answers = write.get("answers") if isinstance(write, dict) else None
    return {int(k) for k in answers} if isinstance(answers, dict) else set()


def _ready(checkpoint: Checkpoint) -> list[int]:
    """The hops a checkpoint's state has ready to send."""
    answered = {int(a) for a in checkpoint.values.get("answers", {})}
    return ready(checkpoint.values.get("sub_questions", []), answered)


def _at_hop(turn: list[Checkpoint], k: int, question: str | None) -> ForkPlan:
    steps = turn[-1].values.get("sub_questions", [])
    if k not in {sq["index"] for sq in steps}:
        raise ForkRefused(f"the plan has no sub-question {k} (it has {len(steps)})")
    # The last such checkpoint: on a branch forked at this hop before, its siblings are answered.
    found = [n for n, c in enumerate(turn) if c.next == ("schedule",) and k in _ready(c)]
    i = found[-1] if found else None
    if i is None:
        raise ForkRefused(f"sub-question {k} never became ready in this run; fork at the plan")
    checkpoint = turn[i]
    plan = checkpoint.values.get("sub_questions", [])
    after = turn[i + 1] if i + 1 < len(turn) else None
    siblings = [
        dict(write)
        for name, write, error in (after.tasks if after else [])
        if name == "sub_agent" and error is None and _answered(write) - {k}
    ]
    updates = siblings
    if question:
        texts = [question if sq["index"] == k else sq["text"] for sq in plan]
        try:
            updates = [*siblings, {"sub_questions": build_dag(texts)}]
        except PlanError as exc:
            raise ForkRefused(f"the reworded sub-question {k} breaks the plan: {exc}") from None
    spent = [usage(checkpoint.values.get("tokens")), *(usage(s.get("tokens")) for s in siblings)]
    reused = {key: sum(part[key] for part in spent) for key in spent[0]}
    asked = str(checkpoint.values["question"])
    return ForkPlan(f"sq{k}", checkpoint.id, "sub_agent", updates, reused, asked)


def fork_metadata(plan: ForkPlan, changed: dict[str, Any], question: str | None) -> dict[str, str]:
    """The fork's record for its checkpoints' metadata (what `grasp show` and the page print)."""
    record = {
        "at": plan.at,
        "from": plan.checkpoint_id,
        "set": changed,
        "question": (question or "").strip() or None,
        "reused": plan.reused,
    }
    return {FORK_KEY: json.dumps(record, sort_keys=True)}


def run_settings(metadata: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """The corpus and settings a run was made with, from its checkpoints' metadata.

    `grasp ask` records them as grasp_corpus / grasp_settings; a LangGraph server copies the run's
    context fields into the metadata.
    """
    if "grasp_settings" in metadata:
        return metadata.get("grasp_corpus"), dict(json.loads(metadata["grasp_settings"] or "{}"))
    names = {f.name for f in fields(GraspContext)}
    found = {key: value for key, value in metadata.items() if key in names}
    return found.pop("corpus", None), found


async def start_fork(
    graph: Pregel[Any, Any, Any, Any], thread: str, plan: ForkPlan, metadata: dict[str, Any]
) -> RunnableConfig:
    """Write the fork's updates; the config its branch runs from (input None)."""
    configurable = {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": plan.checkpoint_id}
    config: RunnableConfig = {"configurable": configurable, "metadata": metadata}
    for values in plan.updates:
        written = await graph.aupdate_state(config, values, as_node=plan.as_node)
        config = {**written, "metadata": metadata}
    return config
