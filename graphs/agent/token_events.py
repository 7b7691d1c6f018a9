"""`tokens` events on the custom stream: each LLM call's cost and the run's running total.

A node reports the tally of its calls once it has made them (one event per call). The running
total is the turn's: the state's tally where a parent node has it (the plan starts it, schedule and
synthesize take it up again), plus the calls reported since. Sub-agents cannot see each other's
state, so their calls go into a per-run counter (keyed by thread id, in this process) that every
parallel hop adds to; the last event of a turn (the synthesis) therefore carries exactly the
state's final tally. A run resumed in another process counts its first hops from zero until the
next parent step takes up the state's tally again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from graphs.agent.progress import emit
from graphs.agent.state import TokenTally, Usage, add_usage, tally, usage_of
from graphs.runtime.wiring import run_id
from nodes.llm.client import LlmResult

#: Runs whose running totals are kept (oldest dropped first): bounds a long-lived server's memory.
MAX_RUNS = 1024
_totals: OrderedDict[str, Usage] = OrderedDict()


def _remember(key: str, total: Usage) -> None:
    _totals[key] = total
    _totals.move_to_end(key)
    while len(_totals) > MAX_RUNS:
        _totals.popitem(last=False)


def hop_of(agent: str | None) -> int | None:
    """The sub-question index of a call record's agent ("sq2" → 2); None for the parent's calls."""
    if agent and agent.startswith("sq") and agent[2:].isdigit():
        return int(agent[2:])
    return None


def running_total() -> Usage:
    """The run's running total as this process has counted it."""
    return _totals.get(run_id() or "", usage_of(None))


def take_up(tokens: TokenTally | None) -> None:
    """Restart the run's running total from the state's tally (a parent node's view of it)."""
    _remember(run_id() or "", usage_of(tokens))


def report_tokens(
    tokens: TokenTally, before: TokenTally | None = None, *, new_turn: bool = False
) -> TokenTally:
    """Send a `tokens` event for each call in `tokens`; return `tokens` unchanged.

    `before`: the turn's tally before these calls, as the calling parent node's state holds it;
    `new_turn`: these are the turn's first calls (the plan's), counted from zero. Sub-agent nodes
    give neither and add to the run's counter. Each event: {"node", "hop", "input", "output",
    "total": {"input_tokens", "output_tokens", "calls"}}.
    """
    if before is not None or new_turn:
        take_up(before)
    total = running_total()
    for record in tokens.get("records", []):
        total = add_usage(
            total, Usage(input_tokens=record["input"], output_tokens=record["output"], calls=1)
        )
        emit(
            "tokens",
            node=record["node"],
            hop=hop_of(record["agent"]),
            input=record["input"],
            output=record["output"],
            total=dict(total),
        )
    _remember(run_id() or "", total)
    return tokens


def reported_tally(
    node: str, results: Sequence[LlmResult], agent: str | None = None, iteration: int | None = None
) -> TokenTally:
    """`tally`, with each call also sent as a `tokens` event (how sub-agent nodes tally)."""
    return report_tokens(tally(node, results, agent, iteration))
