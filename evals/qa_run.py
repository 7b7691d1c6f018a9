"""What a QA run is: its questions, how one method is run over them, and what it gives back."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evals.attribution import GoldStep
from graphs.agent.context import GraspContext
from graphs.models.providers import is_local
from graphs.peers.registry import method_context
from graphs.runtime.services import Services


@dataclass(frozen=True)
class QaItem:
    """One question to answer; `corpus` is None for closed-book answers."""

    id: str
    question: str
    answers: list[str]
    hops: int | None
    dataset: str
    corpus: str | None
    gold: tuple[GoldStep, ...] = ()


#: Runs before a question is answered (the long setting indexes the sample's passages here) and
#: returns the indexing tokens billed to that question.
Prepare = Callable[[QaItem], Awaitable[float]]


@dataclass
class QaRun:
    """How one method is run over a question set, and where its lines go."""

    services: Services
    method: str
    results: Path
    label: str
    concurrency: int = 1
    judge: bool = True
    #: Overrides of the method's Context (`--set KEY=VALUE`).
    method_settings: dict[str, Any] = field(default_factory=dict)
    indexing_per_question: float = 0.0
    prepare: Prepare | None = None
    passage_titles: Mapping[int, str] = field(default_factory=dict)

    def context(self, corpus: str | None) -> Any:
        """The method's Context for a question over `corpus` (unknown settings are refused)."""
        return method_context(self.method, corpus or "-", **self.method_settings)

    def settings(self) -> dict[str, Any]:
        """What this run's answers depend on, written into every line: part of its identity.

        The method, the system's model and every field of the method's Context, defaults
        included (under the method's name), so a changed default counts as a changed setting.
        """
        model = self.services.llm.model_name
        given = self.context(None)
        # What the run uses: GRASP's defaults may depend on the model (its profile).
        if isinstance(given, GraspContext):
            given = given.resolved(local_model=is_local(model))
        context = asdict(given)
        context.pop("corpus")
        # A setting added later is not written at the value that behaves as before it existed,
        # so files made before it resume (and a run that uses it is told apart).
        for name, before in ADDED_LATER.items():
            if name in context and context[name] == before:
                context.pop(name)
        found = {"method": self.method, "model": model, self.method: context}
        # Through JSON once, so it compares equal to what a results file gives back.
        settings: dict[str, Any] = json.loads(json.dumps(found))
        return settings


#: Context fields added after results files were recorded, each with its value that changes
#: nothing (a budget of 0 is none; a hop's first search by a rewrite call; whole passages, for the
#: evaluator and the reader; the full evaluator instructions).
ADDED_LATER: dict[str, Any] = {
    "max_tokens": 0,
    "first_search": "rewrite",
    "focus_chars": 0,
    "evaluator_prompt": "full",
    "reader_focus_chars": 0,
}


@dataclass
class RunOutcome:
    """What a run did: questions answered now, skipped as already done, and failures."""

    answered: int
    skipped: int
    failed: list[tuple[str, str]]
    records: list[dict[str, Any]]


@dataclass(frozen=True)
class Answer:
    """A method's prediction and cost, read from its run's final state."""

    prediction: str
    input_tokens: int
    output_tokens: int
    calls: int
    note: str | None = None
    #: Ids of every passage the run showed its answer step (empty for GRASP and closed-book).
    passages: tuple[int, ...] = ()
    #: PRISM's kept evidence set, when the method keeps one.
    kept: tuple[int, ...] | None = None
    #: The answer's citations as the run's state holds them (nodes/citations).
    citations: tuple[dict[str, Any], ...] = ()
    #: Per node: calls, tokens and the input by prompt part (evals.token_anatomy).
    anatomy: dict[str, dict[str, int]] = field(default_factory=dict)
    #: The token budget (max_tokens) ended the run's search.
    budget_stopped: bool = False
    #: Calls answered from the LLM cache: their tokens count, their time is ~0 (so is the wall's).
    cached_calls: int = 0
