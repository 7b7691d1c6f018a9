"""What a run page shows, as plain records (built from checkpoints, rendered to HTML)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphs.runtime.branches import Branch


@dataclass(frozen=True)
class CallView:
    """One LLM call, attributed to the superstep (and sub-agent step) whose write reported it."""

    step: int
    node: str
    agent: str | None
    iteration: int | None
    input: int
    output: int
    cached: bool
    latency_s: float
    in_tally: bool = True  # False: made by a step the run's state has not taken in yet

    @property
    def label(self) -> str:
        """'step 3 · sq1 · evaluate r2'."""
        who = f" · {self.agent}" if self.agent else ""
        round_ = f" r{self.iteration}" if self.iteration is not None else ""
        return f"step {self.step}{who} · {self.node}{round_}"


@dataclass(frozen=True)
class TaskView:
    """One node run in a superstep: what it wrote, or how it failed, or that it never ran."""

    name: str
    status: str  # done, failed, pending
    summary: str
    error: str = ""
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class StepView:
    """One superstep of the parent graph."""

    step: int
    tasks: list[TaskView]
    started_at: str = ""
    seconds: float | None = None


@dataclass(frozen=True)
class PlanNode:
    """A sub-question of the plan, with the superstep its sub-agent ran in (None: not yet)."""

    index: int
    text: str
    depends_on: list[int]
    superstep: int | None
    answer: str | None


@dataclass
class CandidateView:
    """A candidate entity of one search round."""

    id: int
    name: str
    type: str
    score: float
    chosen: bool = False


@dataclass
class PassageView:
    """A passage (or proposition) the evaluator read, with its vote score."""

    id: int
    title: str
    text: str
    score: float


@dataclass
class RoundView:
    """One search round of a sub-agent."""

    iteration: int
    statement: str
    keywords: list[str]
    candidates: list[CandidateView] = field(default_factory=list)
    chosen: list[int] = field(default_factory=list)
    passages: list[PassageView] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)
    decision: str = ""
    answer: str = ""

    @property
    def reached(self) -> bool:
        """Whether the run got past the rewrite of this round."""
        return bool(self.decision or self.candidates or self.chosen or self.passages)


@dataclass
class AgentView:
    """A sub-agent: its sub-question, rounds, cost and how it ended."""

    index: int
    sub_question: str
    step: int
    status: str  # done, failed, unfinished
    rounds: list[RoundView] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    error: str = ""
    dependencies: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Incident:
    """An error or a resumption, at the superstep it happened."""

    kind: str  # error, resumed
    step: int
    text: str


@dataclass(frozen=True)
class LedgerSummary:
    """The ledger's rows of this run (every answer used, cached or not, resumed or not).

    Failed attempts (a provider error, an unusable reply: retried or given up) are counted
    apart; their tokens, where the provider reported some, are in `failed_tokens`.
    """

    calls: int
    cached: int
    input_tokens: int
    output_tokens: int
    latency_s: float
    models: list[str]
    failed: int = 0
    failed_tokens: int = 0


@dataclass(frozen=True)
class TurnView:
    """One turn of a conversation thread (one run: a question and its answer)."""

    number: int
    question: str
    answer: str
    status: str
    input_tokens: int
    output_tokens: int


@dataclass
class RunView:
    """Everything a run page shows."""

    thread: str
    graph: str
    status: str
    question: str = ""
    answer: str = ""
    justification: str = ""
    plan: str = ""
    plan_nodes: list[PlanNode] = field(default_factory=list)
    agents: list[AgentView] = field(default_factory=list)
    steps: list[StepView] = field(default_factory=list)
    calls: list[CallView] = field(default_factory=list)
    incidents: list[Incident] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    tally: dict[str, Any] = field(default_factory=dict)
    ledger: LedgerSummary | None = None
    earlier_runs: int = 0
    turn: int = 1
    turns: list[TurnView] = field(default_factory=list)
    wall_s: float | None = None
    values: dict[str, Any] = field(default_factory=dict)
    #: The answer's citations (None: the run has no answer yet, or predates citations).
    citations: list[dict[str, Any]] | None = None
    #: The cited passages' texts by id, where the page could read them.
    cited_passages: dict[int, str] = field(default_factory=dict)
    branches: list[Branch] = field(default_factory=list)  # the turn's, when it was forked

    @property
    def plan_edges(self) -> list[tuple[int, int]]:
        """(dependency, dependent) pairs of the plan's DAG."""
        return [(k, node.index) for node in self.plan_nodes for k in node.depends_on]
