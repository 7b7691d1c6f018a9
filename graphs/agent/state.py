"""State of the GRASP agent graph and its sub-agents: typed dicts and their pure reducers.

The records a step produces (SubQuestion, ScoredEntity, Evidence) are defined once, beside the step
that makes them, and kept in state as they come. TypedDicts come from typing_extensions: pydantic
(which builds the schemas Studio shows) refuses typing.TypedDict before Python 3.12.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from graphs.agent.budget import either
from graphs.agent.hop_reads import HopRead, RoundRead, append_rounds, merge_hop_reads
from graphs.agent.observations import Observation as Observation
from graphs.agent.observations import ObservationLog as ObservationLog
from graphs.agent.observations import merge_observations as merge_observations
from nodes.agent.plan_dag import SubQuestion as SubQuestion
from nodes.agent.plan_edit import PlanReview as PlanReview
from nodes.citations.attribution import Citation as Citation
from nodes.llm.client import LlmResult
from store.grasp_retrieval import Evidence as Evidence
from store.grasp_retrieval import PassageHit as PassageHit
from store.grasp_retrieval import ScoredEntity as ScoredEntity

Decision = Literal["DONE", "QUERY_AGAIN"]


class CallUsage(TypedDict):
    """The cost of one LLM call and who made it."""

    node: str
    agent: str | None
    iteration: int | None
    input: int
    output: int
    cached: bool
    latency_s: float
    #: Input tokens by prompt part (instructions, evidence, history, question).
    parts: NotRequired[dict[str, int]]


class NodeUsage(TypedDict):
    """Tokens and calls of one graph node, summed over the run."""

    input: int
    output: int
    calls: int


class TokenTally(TypedDict):
    """Totals, the per-node breakdown and every call record of a run (or of one sub-agent)."""

    input_tokens: int
    output_tokens: int
    calls: int
    by_node: dict[str, NodeUsage]
    records: list[CallUsage]


class Dependency(TypedDict):
    """An answered sub-question another one depends on."""

    sub_question: str
    answer: str


def add_tokens(left: TokenTally, right: TokenTally) -> TokenTally:
    """Add two tallies: totals and per-node counts add up, call records are concatenated.

    Addition is commutative, so the totals do not depend on the order parallel sub-agents finish;
    either side may be an empty dict (a channel's initial value).
    """
    by_node: dict[str, NodeUsage] = {}
    for side in (left, right):
        for node, usage in side.get("by_node", {}).items():
            seen = by_node.get(node, NodeUsage(input=0, output=0, calls=0))
            by_node[node] = NodeUsage(
                input=seen["input"] + usage["input"],
                output=seen["output"] + usage["output"],
                calls=seen["calls"] + usage["calls"],
            )
    return TokenTally(
        input_tokens=left.get("input_tokens", 0) + right.get("input_tokens", 0),
        output_tokens=left.get("output_tokens", 0) + right.get("output_tokens", 0),
        calls=left.get("calls", 0) + right.get("calls", 0),
        by_node=dict(sorted(by_node.items())),
        records=[*left.get("records", []), *right.get("records", [])],
    )


def tally(
    node: str, results: Sequence[LlmResult], agent: str | None = None, iteration: int | None = None
) -> TokenTally:
    """The tally of the calls one node made (retries included)."""
    records = [
        CallUsage(
            node=node,
            agent=agent,
            iteration=iteration,
            input=r.input_tokens,
            output=r.output_tokens,
            cached=r.cached,
            latency_s=round(r.latency_s, 3),
            parts=dict(r.parts),
        )
        for r in results
    ]
    tokens_in = sum(r["input"] for r in records)
    tokens_out = sum(r["output"] for r in records)
    return TokenTally(
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        calls=len(records),
        by_node={node: NodeUsage(input=tokens_in, output=tokens_out, calls=len(records))}
        if records
        else {},
        records=records,
    )


def merge_answers(left: dict[int, str], right: dict[int, str]) -> dict[int, str]:
    """Union of answered sub-questions (each is answered by exactly one sub-agent), sorted by index.

    Keys are coerced to int because state that went through JSON (the dev server's API, a state
    edited in Studio) comes back with "1" for 1.
    """
    merged = {int(k): v for side in (left, right) for k, v in side.items()}
    return dict(sorted(merged.items()))


def merge_hop_passages(
    left: dict[int, list[int]], right: dict[int, list[int]]
) -> dict[int, list[int]]:
    """Union of the passage ids each answered sub-question was read from (keys as in merge_answers)."""
    merged = {int(k): list(v) for side in (left, right) for k, v in side.items()}
    return dict(sorted(merged.items()))


def union_ids(left: list[int], right: list[int]) -> list[int]:
    """Set union of visited ids, kept sorted so the value never depends on write order."""
    return sorted({*left, *right})


class Usage(TypedDict):
    """Token totals without the breakdown: what a conversation keeps per turn."""

    input_tokens: int
    output_tokens: int
    calls: int


def usage_of(tokens: TokenTally | None) -> Usage:
    """The totals of a tally (0 where there is none yet or a field is missing)."""
    tokens = tokens or TokenTally(input_tokens=0, output_tokens=0, calls=0, by_node={}, records=[])
    return Usage(
        input_tokens=tokens.get("input_tokens", 0),
        output_tokens=tokens.get("output_tokens", 0),
        calls=tokens.get("calls", 0),
    )


def add_usage(*parts: Usage) -> Usage:
    """The sum of several totals."""
    return Usage(
        input_tokens=sum(p["input_tokens"] for p in parts),
        output_tokens=sum(p["output_tokens"] for p in parts),
        calls=sum(p["calls"] for p in parts),
    )


class Turn(TypedDict):
    """One answered question of a conversation thread: only what a later turn may see."""

    question: str
    answer: str
    tokens: Usage


def append_turns(left: list[Turn], right: list[Turn]) -> list[Turn]:
    """Turns in the order they finished (one turn runs at a time on a thread)."""
    return [*left, *right]


class GraspInput(TypedDict, total=False):
    """What a run is asked: a `question`, or `messages` whose last (a human one) is the question."""

    question: str
    messages: list[AnyMessage]


class GraspState(TypedDict, total=False):
    """The parent graph's state; checkpointed after every step.

    A thread is a conversation: each question given as input is a new turn. The fields from
    `question` to `error` belong to the current turn and are reset when it starts; `turns` (the
    finished turns' questions, answers and totals) and `conversation_tokens` span the thread.
    """

    turn: int
    question: str
    corpus_id: int
    plan: str
    sub_questions: list[SubQuestion]
    plan_review: list[PlanReview]  # review_plan: each decision on this turn's plan, in order
    answers: Annotated[dict[int, str], merge_answers]
    hop_passages: Annotated[dict[int, list[int]], merge_hop_passages]
    hop_reads: Annotated[dict[int, HopRead], merge_hop_reads]
    final_answer: str
    justification: str
    citations: list[Citation]
    tokens: Annotated[TokenTally, add_tokens]
    #: The token budget (max_tokens) ended this turn's search: hops skipped or cut short.
    budget_stopped: Annotated[bool, either]
    error: str | None
    turns: Annotated[list[Turn], append_turns]
    conversation_tokens: Usage
    #: The conversation as chat messages: each turn's question and its answer (with citations).
    messages: Annotated[list[AnyMessage], add_messages]


class SubAgentInput(TypedDict, total=False):
    """What a sub-agent is given: its (placeholder-resolved) sub-question and its dependencies.

    `sub_agent_input` always sends the first five; total=False because the state built from this
    type is updated a few fields at a time.
    """

    question: str
    corpus_id: int
    index: int
    sub_question: str
    dependencies: list[Dependency]
    #: No other sub-question builds on this one (with final_hops=read the reader answers it).
    final: bool
    #: With max_tokens set, the turn's tokens when the hop was sent (its budget check adds its own).
    spent_before: int


class SubAgentOutput(TypedDict, total=False):
    """All that leaves a sub-agent: its answer, its token tally, and the ids of what it read.

    `hop_passages` come only with synthesis=reader (which reads them), `hop_reads` always (the
    citations are picked from them); never the passages' texts.
    """

    answers: Annotated[dict[int, str], merge_answers]
    hop_passages: Annotated[dict[int, list[int]], merge_hop_passages]
    hop_reads: Annotated[dict[int, HopRead], merge_hop_reads]
    tokens: Annotated[TokenTally, add_tokens]
    budget_stopped: Annotated[bool, either]


class SubAgentState(SubAgentInput, SubAgentOutput, total=False):
    """A sub-agent's working state: its input, its output, and the round's compact working set.

    No message history: only the observation log carries over between rounds.
    """

    iteration: int
    search_statement: str
    keywords: list[str]
    candidates: list[ScoredEntity]
    hits: list[PassageHit]
    #: The search's units (proposition ids), best s(p) first: an inner hop's bridge reads them.
    hit_units: list[int]
    prior: list[PassageHit]
    selected: list[int]
    evidence: list[Evidence]
    rounds_read: Annotated[list[RoundRead], append_rounds]
    observations: Annotated[ObservationLog, merge_observations]
    visited_entities: Annotated[list[int], union_ids]
    visited_propositions: Annotated[list[int], union_ids]
    decision: Decision
    answer: str
