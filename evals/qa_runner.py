"""The QA runner: answer questions by one method, judge them, append one JSON line each; resumable."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from evals.attribution_facts import attribute, kept_facts
from evals.citation_metrics import citation_facts
from evals.judge import judge_answer
from evals.metrics import exact_match, token_f1
from evals.qa_run import Answer, QaItem, QaRun, RunOutcome
from evals.results import JsonlAppender, check_settings, read_jsonl
from evals.token_anatomy import anatomy_of
from graphs.cli.ask_input import run_config
from graphs.peers.registry import METHODS as REGISTRY
from graphs.peers.registry import AnyGraph, build_method_graph
from graphs.runtime.checkpoints import open_checkpointer
from nodes.llm.client import LlmClient
from store.passage_search import passages_by_id

log = logging.getLogger(__name__)

#: Every answering method of graphs/peers/registry.py, each run through its own graph.
METHODS: tuple[str, ...] = tuple(REGISTRY)

#: Methods that read the proposition graph the LLM indexing built: they are billed its tokens.
GRAPH_METHODS = frozenset({"grasp", "ircot", "sa-rag-cot", "proprag"})


def thread_id(run: QaRun, item: QaItem) -> str:
    """The LangGraph thread (and ledger run id) of one question of one run."""
    return f"eval:{run.label}:{item.corpus or '-'}:{item.id}"


def answer_of(state: Mapping[str, Any]) -> Answer:
    """The prediction, the token tally and the shown passages of a final state."""
    tokens = state.get("tokens") or {}
    kept = state.get("kept")
    return Answer(
        prediction=str(state.get("final_answer") or "").strip(),
        input_tokens=int(tokens.get("input_tokens", 0)),
        output_tokens=int(tokens.get("output_tokens", 0)),
        calls=int(tokens.get("calls", 0)),
        note=state.get("error"),
        passages=tuple(int(p) for p in state.get("passages") or ()),
        kept=None if kept is None else tuple(int(p) for p in kept),
        anatomy=anatomy_of(tokens.get("records") or ()),
        citations=tuple(dict(c) for c in state.get("citations") or ()),
        budget_stopped=bool(state.get("budget_stopped")),
        cached_calls=sum(1 for r in tokens.get("records") or () if r.get("cached")),
    )


async def answer_item(run: QaRun, graph: AnyGraph, item: QaItem, thread: str) -> Answer:
    """Run the method's graph on the question's checkpointed thread, continuing an interrupted run.

    The results file, not the checkpoints, says what is done: a finished thread whose answer is
    not in the file (the file was removed, or the process died before writing the line) is
    cleared and answered afresh, so its token tally never mixes two runs.
    """
    corpus = item.corpus or "-"
    config = run_config(thread, item.question, corpus, run.method_settings, run.method)
    snapshot = await graph.aget_state(config)
    resume = snapshot.metadata is not None and bool(snapshot.next)
    if snapshot.metadata is not None and not resume:
        assert isinstance(graph.checkpointer, BaseCheckpointSaver)
        await graph.checkpointer.adelete_thread(thread)
    state = await graph.ainvoke(
        None if resume else {"question": item.question},
        config,
        context=run.context(corpus),
        # Every step is saved before the next starts: a crash loses only the calls in flight.
        durability="sync",
    )
    return answer_of(state)


async def cited_passage_texts(run: QaRun, citations: Sequence[Mapping[str, Any]]) -> dict[int, str]:
    """Title and text of each cited passage, for answer support (the store, off the loop)."""
    ids = list(dict.fromkeys(int(c["passage_id"]) for c in citations))
    if not ids:
        return {}
    found = await asyncio.to_thread(passages_by_id, run.services.engine, ids)
    return {p.id: f"{p.title}. {p.text}" for p in found}


async def solve(
    run: QaRun, graph: AnyGraph, judge: LlmClient | None, item: QaItem
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
        "cached_calls": answer.cached_calls,
        "budget_stopped": answer.budget_stopped,
        "indexing_tokens": indexing,
        "total_tokens": answer.input_tokens + answer.output_tokens + indexing,
        "wall_s": round(wall, 3),
        "index_wall_s": round(index_wall, 3),
        "thread_id": thread,
        "passages": list(answer.passages),
        "citations": list(answer.citations),
        "anatomy": answer.anatomy,
        "note": answer.note,
        "settings": run.settings(),
    }
    record["attribution"] = await attribute(
        run, graph, item, answer, thread, correct=record["em"] == 1.0
    )
    if answer.kept is not None:
        record["kept"] = await kept_facts(run, item, answer.kept)
    gold = [step.passage_id for step in item.gold if step.passage_id is not None]
    record["citation"] = citation_facts(
        answer.prediction,
        record["em"] == 1.0,
        answer.citations,
        gold,
        await cited_passage_texts(run, answer.citations),
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
    fresh: dict[str, dict[str, Any]] = {}
    failed: list[tuple[str, str]] = []
    if todo:
        # Checkpointed like `grasp ask`: a line's thread_id opens in `grasp show` and in
        # Studio, and an interrupted question continues where it stopped.
        async with open_checkpointer(run.services.database_url) as saver:
            graph = build_method_graph(run.method, run.services, saver)
            fresh, failed = await answer_all(run, graph, todo, progress)
    by_id = {**previous, **fresh}
    records = [by_id[item.id] for item in items if item.id in by_id]
    return RunOutcome(len(fresh), len(items) - len(todo), failed, records)


async def answer_all(
    run: QaRun,
    graph: AnyGraph,
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
