"""How a sub-agent ends: the update a finished hop hands back, and the hops the reader answers."""

from __future__ import annotations

from collections.abc import Sequence

from graphs.agent.context import GraspContext, chosen
from graphs.agent.hop_reads import HopRead
from graphs.agent.progress import emit
from graphs.agent.state import Evidence, SubAgentState

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
