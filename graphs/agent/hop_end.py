"""How a sub-agent ends: the update a finished hop hands back, and the hops the reader answers."""

from __future__ import annotations

from collections.abc import Sequence

from graphs.agent.context import GraspContext, chosen
from graphs.agent.hop_reads import HopRead
from graphs.agent.progress import emit
from graphs.agent.state import Evidence, Observation, ObservationLog, SubAgentState
from nodes.agent.bridge_answer import evidence_answer
from nodes.deps import NodeServices

#: How a hop left to the reader is shown where hop answers are (it has none of its own).
LEFT_TO_READER = "(left to the reader)"


def shown_answer(answer: str) -> str:
    """A hop's answer as the CLI and the run page show it."""
    return answer or LEFT_TO_READER


def kept_for_synthesis(context: GraspContext, evidence: Sequence[Evidence]) -> list[int]:
    """The ids of the hop's best passages the final answer will read (synthesis=reader only)."""
    if context.synthesis != "reader" or context.evidence != "passages":
        return []
    return [item["id"] for item in evidence[: context.reader_passages]]


def left_to_reader(state: SubAgentState, context: GraspContext) -> bool:
    """Whether this hop's passages go to the reader unjudged (`final_hops=read`).

    Only a final hop (one no other builds on) can skip its evaluator: nothing waits on its
    answer but the final answer, and the reader, which reads its passages, writes that.
    """
    return (
        chosen(context.final_hops, "final_hops") == "read"
        and bool(state.get("final"))
        and bool(kept_for_synthesis(context, state.get("evidence", [])))
    )


def bridged(state: SubAgentState, context: GraspContext) -> bool:
    """Whether this inner hop takes its answer from its evidence, with no call (`inner_hops`).

    Only a hop others build on, and only on passages the graph search found (with
    evidence=propositions an evidence id is a unit's, not a passage's): its answer fills their
    `#k`. The reader (synthesis=reader) reads passages, not hop answers.
    """
    return (
        chosen(context.inner_hops, "inner_hops") == "bridge"
        and not state.get("final")
        and context.retrieval == "grasp"
        and context.evidence == "passages"
        and bool(state.get("evidence"))
    )


async def bridge_end(
    state: SubAgentState, context: GraspContext, services: NodeServices
) -> SubAgentState | None:
    """A bridged hop's DONE update; None when not bridged or its best unit names no new entity.

    Then the evaluator reads the evidence, as it does for a final hop that found nothing.
    """
    if not bridged(state, context):
        return None
    answer, unit = await evidence_answer(
        services,
        corpus_id=state["corpus_id"],
        sub_question=state["sub_question"],
        top_passage=state["evidence"][0]["id"],
        ranked_units=state.get("hit_units", []),
    )
    if not answer:
        return None
    # The unit it was read from is the round's one observation: the run page and the CLI show it.
    note = ObservationLog(
        cap=context.max_observations,
        items=[Observation(iteration=1, text=f"read from the evidence: {unit}")],
    )
    return {"decision": "DONE", "observations": note, **finished(state, context, answer, 1)}


def finished(
    state: SubAgentState, context: GraspContext, answer: str, iteration: int
) -> SubAgentState:
    """A DONE hop's output: its answer ("" when left to the reader), passages and reads."""
    update: SubAgentState = {"answer": answer, "answers": {state["index"]: answer}}
    kept = kept_for_synthesis(context, state.get("evidence", []))
    if kept:
        update["hop_passages"] = {state["index"]: kept}
    rounds = state.get("rounds_read", [])
    update["hop_reads"] = {state["index"]: HopRead(answered_in=iteration, rounds=rounds)}
    emit("hop_done", index=state["index"], answer=answer)
    return update
