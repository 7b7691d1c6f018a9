"""The QA runner: answer questions by one method, judge them, append one JSON line each; resumable."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from evals.attribution import (
    GoldStep,
    HopFacts,
    RoundFacts,
    Shown,
    agent_attribution,
    passages_attribution,
)
from evals.baselines import DEFAULT_K, Answer, answer_closed_book, answer_with_passages
from evals.closed_book import ClosedBookItem, estimate_probabilities
from evals.judge import judge_answer
from evals.metrics import exact_match, token_f1
from evals.results import JsonlAppender, check_settings, read_jsonl
from evals.summary import GroupSummary, summarise
from graphs.agent.graph import GraspGraph, build_grasp_graph
from graphs.api import make_context
from graphs.cli.ask_report import Round, resolved_sub_question
from graphs.runtime.checkpoints import open_checkpointer
from graphs.runtime.run_history import agent_traces
from graphs.runtime.services import Services
from nodes.llm.client import LlmClient
from store.corpora import corpus_id

log = logging.getLogger(__name__)

Method = Literal["grasp", "dense", "bm25", "none"]
METHODS: tuple[str, ...] = get_args(Method)


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
    method: Method
    results: Path
    label: str
    concurrency: int = 1
    judge: bool = True
    k_passages: int = DEFAULT_K
    grasp_settings: dict[str, Any] = field(default_factory=dict)
    indexing_per_question: float = 0.0
    prepare: Prepare | None = None
    passage_titles: Mapping[int, str] = field(default_factory=dict)

    def settings(self) -> dict[str, Any]:
        """What this run's answers depend on, written into every line: part of its identity.

        The method, the system's model and the method's own settings (k for the passage
        baselines; every GraspContext field, defaults included, for GRASP), so a changed default
        counts as a changed setting too.
        """
        found: dict[str, Any] = {"method": self.method, "model": self.services.llm.model_name}
        if self.method in ("dense", "bm25"):
            found["k"] = self.k_passages
        if self.method == "grasp":
            context = asdict(make_context("-", **self.grasp_settings))
            context.pop("corpus")
            found["grasp"] = context
        # Through JSON once, so it compares equal to what a results file gives back.
        settings: dict[str, Any] = json.loads(json.dumps(found))
        return settings


@dataclass
class RunOutcome:
    """What a run did: questions answered now, skipped as already done, and failures."""

    answered: int
    skipped: int
    failed: list[tuple[str, str]]
    records: list[dict[str, Any]]


def thread_id(run: QaRun, item: QaItem) -> str:
    """The LangGraph thread (and ledger run id) of one question of one run."""
    return f"eval:{run.label}:{item.corpus or '-'}:{item.id}"


async def answer_item(run: QaRun, graph: GraspGraph | None, item: QaItem, thread: str) -> Answer:
    """The method's prediction and cost for one question."""
    services = run.services
    if run.method == "none" or item.corpus is None:
        return await answer_closed_book(services.llm, item.question, thread, node="none_answer")
    if run.method in ("dense", "bm25"):
        corpus = await asyncio.to_thread(corpus_id, services.engine, item.corpus)
        return await answer_with_passages(
            services.llm,
            services.engine,
            services.embedder,
            corpus,
            item.question,
            "dense" if run.method == "dense" else "bm25",
            thread,
            run.k_passages,
        )
    assert graph is not None
    return await answer_with_grasp(graph, item, thread, run.grasp_settings)


async def answer_with_grasp(
    graph: GraspGraph, item: QaItem, thread: str, settings: dict[str, Any]
) -> Answer:
    """Run the agent on the question's checkpointed thread, continuing an interrupted run.

    The results file, not the checkpoints, says what is done: a finished thread whose answer is
    not in the file (the file was removed, or the process died before writing the line) is
    cleared and answered afresh, so its token tally never mixes two runs.
    """
    assert item.corpus is not None
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    snapshot = await graph.aget_state(config)
    resume = snapshot.metadata is not None and bool(snapshot.next)
    if snapshot.metadata is not None and not resume:
        assert isinstance(graph.checkpointer, BaseCheckpointSaver)
        await graph.checkpointer.adelete_thread(thread)
    state = await graph.ainvoke(
        None if resume else {"question": item.question},
        config,
        context=make_context(item.corpus, **settings),
        # Every step is saved before the next starts: a crash loses only the calls in flight.
        durability="sync",
    )
    tokens = state.get("tokens") or {}
    return Answer(
        prediction=str(state.get("final_answer") or "").strip(),
        input_tokens=int(tokens.get("input_tokens", 0)),
        output_tokens=int(tokens.get("output_tokens", 0)),
        calls=int(tokens.get("calls", 0)),
        note=state.get("error"),
    )


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


async def attribute(
    run: QaRun, graph: GraspGraph | None, item: QaItem, answer: Answer, thread: str, correct: bool
) -> dict[str, Any] | None:
    """The line's failure attribution (see evals.attribution); None for closed-book answers."""
    if item.corpus is None or run.method == "none":
        return None
    if run.method in ("dense", "bm25"):
        shown = [Shown(pid, run.passage_titles.get(pid, "")) for pid in answer.passages]
        return passages_attribution(correct, item.gold, shown)
    assert graph is not None
    context = make_context(item.corpus, **run.grasp_settings)
    # Under the propositions ablation evidence ids are proposition ids: match gold by title.
    by_title = context.evidence == "propositions" and context.retrieval != "dense"
    hops = await read_hops(graph, thread)
    return agent_attribution(correct, item.gold, hops, item.answers, by_title)


async def solve(
    run: QaRun, graph: GraspGraph | None, judge: LlmClient | None, item: QaItem
) -> dict[str, Any]:
    """Index if needed, answer, score and judge one question: its JSON line."""
    indexing = run.indexing_per_question
    index_wall = 0.0
    if run.prepare is not None:
        started = time.perf_counter()
        indexing = await run.prepare(item)
        index_wall = time.perf_counter() - started
    thread = thread_id(run, item)
    started = time.perf_counter()
    answer = await answer_item(run, graph, item, thread)
    wall = time.perf_counter() - started
    record: dict[str, Any] = {
        "id": item.id,
        "question": item.question,
        "dataset": item.dataset,
        "hops": item.hops,
        "method": run.label,
        "corpus": item.corpus,
        "prediction": answer.prediction,
        "gold": item.answers,
        "em": exact_match(answer.prediction, item.answers),
        "f1": token_f1(answer.prediction, item.answers),
        "judge_strict": None,
        "judge_lenient": None,
        "judge_tokens": 0,
        "input_tokens": answer.input_tokens,
        "output_tokens": answer.output_tokens,
        "tokens": answer.input_tokens + answer.output_tokens,
        "calls": answer.calls,
        "indexing_tokens": indexing,
        "total_tokens": answer.input_tokens + answer.output_tokens + indexing,
        "wall_s": round(wall, 3),
        "index_wall_s": round(index_wall, 3),
        "thread_id": thread,
        "passages": list(answer.passages),
        "note": answer.note,
        "settings": run.settings(),
    }
    record["attribution"] = await attribute(
        run, graph, item, answer, thread, correct=record["em"] == 1.0
    )
    if judge is not None:
        # The judge's tokens are kept apart: they are the evaluation's cost, not the system's.
        verdicts = await judge_answer(
            judge, item.question, answer.prediction, item.answers, thread + ":judge"
        )
        record["judge_strict"] = verdicts.strict
        record["judge_lenient"] = verdicts.lenient
        record["judge_tokens"] = verdicts.input_tokens + verdicts.output_tokens
        if verdicts.note:
            record["note"] = "; ".join(n for n in (answer.note, verdicts.note) if n)
    return record


async def run_questions(
    run: QaRun, items: Sequence[QaItem], progress: Callable[[str], None] | None = None
) -> RunOutcome:
    """Answer every item not yet in the results file, `run.concurrency` at a time.

    Refuses (SettingsChanged) a results file whose lines were made with other settings: their
    answers are not this run's, and mixing them would silently report one run as another.
    """
    lines = read_jsonl(run.results)
    check_settings(run.results, lines, run.settings())
    previous = {str(r["id"]): r for r in lines}
    todo = [item for item in items if item.id not in previous]
    async with AsyncExitStack() as stack:
        graph = None
        if run.method == "grasp" and todo:
            # Checkpointed like `grasp ask`: a line's thread_id opens in `grasp show` and in
            # Studio, and an interrupted question continues where it stopped.
            saver = await stack.enter_async_context(open_checkpointer(run.services.database_url))
            graph = build_grasp_graph(run.services, saver)
        fresh, failed = await answer_all(run, graph, todo, progress)
    by_id = {**previous, **fresh}
    records = [by_id[item.id] for item in items if item.id in by_id]
    return RunOutcome(len(fresh), len(items) - len(todo), failed, records)


async def answer_all(
    run: QaRun,
    graph: GraspGraph | None,
    todo: Sequence[QaItem],
    progress: Callable[[str], None] | None,
) -> tuple[dict[str, dict[str, Any]], list[tuple[str, str]]]:
    """Solve and append each item, `run.concurrency` at a time; failures are listed, not raised."""
    judge = run.services.judge() if run.judge else None
    appender = JsonlAppender(run.results)
    gate = asyncio.Semaphore(max(run.concurrency, 1))
    fresh: dict[str, dict[str, Any]] = {}
    failed: list[tuple[str, str]] = []

    async def work(item: QaItem) -> None:
        async with gate:
            try:
                record = await solve(run, graph, judge, item)
            except (
                Exception
            ) as exc:  # one bad question must not sink the run; it is retried next time
                log.warning("question %s failed: %s: %s", item.id, type(exc).__name__, exc)
                failed.append((item.id, f"{type(exc).__name__}: {exc}"))
                return
            await appender.append(record)
            fresh[item.id] = record
            if progress is not None:
                progress(f"{item.id}: {record['prediction']!r} em={record['em']:.0f}")

    await asyncio.gather(*(work(item) for item in todo))
    return fresh, failed


def summary_path(results: Path) -> Path:
    """`<method>.summary.json` beside `<method>.jsonl`."""
    return results.with_name(results.stem + ".summary.json")


async def evaluate(
    run: QaRun,
    items: Sequence[QaItem],
    sampler: LlmClient | None,
    p_samples: int,
    progress: Callable[[str], None] | None = None,
) -> tuple[RunOutcome, list[GroupSummary]]:
    """Run, estimate the closed-book p_i (when p_samples > 0), summarise and save the summary."""
    outcome = await run_questions(run, items, progress)
    probabilities: dict[str, float] | None = None
    if p_samples > 0 and sampler is not None:
        probabilities = await estimate_probabilities(
            [ClosedBookItem(i.id, i.question, i.answers) for i in items],
            run.results.parent,
            sampler,
            run.services.judge() if run.judge else None,
            p_samples,
            run.concurrency,
        )
    summaries = summarise(outcome.records, probabilities)
    payload = {
        "method": run.label,
        "settings": run.settings(),
        "questions": len(items),
        "answered_now": outcome.answered,
        "skipped": outcome.skipped,
        "failed": [{"id": qid, "error": error} for qid, error in outcome.failed],
        "p_samples": p_samples,
        "groups": [s.as_json() for s in summaries],
    }
    summary_path(run.results).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return outcome, summaries
