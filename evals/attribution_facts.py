"""Failure-attribution facts of one answered question: the hops, rounds and passages it read."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, cast

from langchain_core.runnables import RunnableConfig

from evals.attribution import HopFacts, RoundFacts, Shown
from evals.attribution_record import agent_attribution, kept_retrieval, passages_attribution
from evals.qa_run import Answer, QaItem, QaRun
from graphs.agent.graph import GraspGraph
from graphs.cli.ask_report import Round, resolved_sub_question
from graphs.peers.registry import AnyGraph
from graphs.runtime.run_history import agent_traces
from store.passage_search import passages_by_id

#: Methods that show no passages (closed-book): their lines carry no attribution.
NO_PASSAGES = frozenset({"none"})


def round_facts(trace_round: Round) -> RoundFacts:
    """One sub-agent round as attribution facts."""
    return RoundFacts(
        iteration=trace_round.iteration,
        search=trace_round.search_statement,
        entities=tuple(trace_round.entities),
        evidence=tuple(
            Shown(pid, title)
            for pid, title in zip(trace_round.evidence_ids, trace_round.passages, strict=True)
        ),
        decision=trace_round.decision,
    )


async def read_hops(graph: GraspGraph, thread: str) -> list[HopFacts]:
    """Each sub-question of the thread's run with its rounds and answer, from the checkpoints.

    Evidence never leaves a sub-agent (only answers do), so it is read back from the sub-agents'
    own checkpoints rather than from the parent's state.
    """
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    values = dict((await graph.aget_state(config)).values)
    traces = {trace.index: trace for trace in await agent_traces(graph, thread)}
    answers = {int(k): str(v) for k, v in (values.get("answers") or {}).items()}
    hops: list[HopFacts] = []
    for step in values.get("sub_questions") or []:
        index = int(step["index"])
        trace = traces.get(index)
        # A round is kept once it did something (a round opened by the last decision is empty).
        rounds = [r for r in (trace.rounds if trace else []) if r.decision or r.passages]
        hops.append(
            HopFacts(
                index=index,
                text=str(step["text"]),
                resolved=resolved_sub_question(values, index),
                depends_on=tuple(int(k) for k in step.get("depends_on", [])),
                answer=answers.get(index, ""),
                rounds=tuple(round_facts(r) for r in rounds),
            )
        )
    return hops


async def shown_passages(run: QaRun, ids: Sequence[int]) -> list[Shown]:
    """The passages a run showed, with their titles (from the gold index, else the store)."""
    missing = [pid for pid in ids if pid not in run.passage_titles]
    titles = dict(run.passage_titles)
    if missing:
        found = await asyncio.to_thread(passages_by_id, run.services.engine, missing)
        titles.update({p.id: p.title for p in found})
    return [Shown(pid, titles.get(pid, "")) for pid in ids]


async def attribute(
    run: QaRun, graph: AnyGraph, item: QaItem, answer: Answer, thread: str, correct: bool
) -> dict[str, Any] | None:
    """The line's failure attribution (see evals.attribution); None for closed-book answers.

    GRASP's is read from its sub-agents' checkpoints; every other method's from the passages its
    run showed (for a multi-step peer, every passage any step showed).
    """
    if item.corpus is None or run.method in NO_PASSAGES:
        return None
    if run.method != "grasp":
        shown = await shown_passages(run, answer.passages)
        return passages_attribution(correct, item.gold, shown)
    context = run.context(item.corpus)
    # Under the propositions ablation evidence ids are proposition ids: match gold by title.
    by_title = context.evidence == "propositions" and context.retrieval != "dense"
    hops = await read_hops(cast(GraspGraph, graph), thread)
    return agent_attribution(correct, item.gold, hops, item.answers, by_title)


async def kept_facts(run: QaRun, item: QaItem, kept: Sequence[int]) -> dict[str, Any]:
    """PRISM's kept set with its retrieval precision and recall against the gold passages."""
    return kept_retrieval(item.gold, await shown_passages(run, kept))
