"""`grasp bench concurrency`: GRASP on two-hop comparison questions, concurrent hops on vs off.

"On" is the graph as it ships: the plan's independent steps are sent together and run in one
superstep. "Off" runs the same graph with LangGraph's `max_concurrency` set to 1, so those steps
run one after the other. The default model is scripted with a fixed wait per call, standing in
for a remote API; `--model local` (or any chat model spec) runs a real one instead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import Engine

from evals.bench.concurrency_script import (
    Comparison,
    build_corpus,
    comparisons,
    entity_id,
    firms,
    question_rules,
)
from evals.bench.concurrency_spans import Overlap, SpanRecorder, overlap
from evals.bench.methods import link_graph_layer
from evals.bench.names import bench_corpus
from graphs.agent.context import GraspContext
from graphs.agent.graph import build_grasp_graph
from graphs.models.roles import AGENT_MAX_TOKENS, GENERATOR_TEMPERATURE
from graphs.models.scripted_model import ScriptedChatModel
from graphs.runtime.services import Services
from graphs.runtime.settings import Settings
from nodes.embedding import HashingEmbedder
from nodes.llm.client import LlmClient
from store.corpora import delete_corpus, ensure_corpus
from store.corpus_reads import has_passage, proposition_counter

SCRIPTED = "scripted"
MODES = ("on", "off")
#: The issue's target for two independent hops.
TARGET_SPEED_UP = 1.6


def register_bench(sub: Any) -> None:
    """Add `bench concurrency` to the bench sub-commands."""
    parser = sub.add_parser(
        "concurrency", help="GRASP with concurrent hops on vs off, on two-hop comparisons"
    )
    parser.add_argument("--questions", type=int, default=4, help="comparison questions (default 4)")
    parser.add_argument("--firms", type=int, default=200, help="firms in the corpus (default 200)")
    parser.add_argument(
        "--latency", type=float, default=0.5, help="scripted model: seconds per call (default 0.5)"
    )
    parser.add_argument(
        "--rounds", type=int, default=2, help="scripted model: search rounds per hop (default 2)"
    )
    parser.add_argument(
        "--model",
        default=SCRIPTED,
        help="'scripted' (default) or a chat model spec such as 'local' (slow; answers unchecked)",
    )
    parser.add_argument("--corpus", type=bench_corpus, default="bench-concurrency")
    parser.add_argument("--rebuild", action="store_true", help="delete the corpus and build anew")
    parser.set_defaults(handler=handle)


def check_args(args: argparse.Namespace) -> None:
    """Refuse values the bench cannot run with, in one line."""
    if args.questions < 1:
        raise SystemExit("error: --questions must be at least 1")
    if args.firms < 2 * args.questions:
        raise SystemExit("error: --firms must be at least twice --questions (two firms a question)")
    if args.latency < 0:
        raise SystemExit("error: --latency must not be negative")
    if not 1 <= args.rounds <= 5:
        raise SystemExit("error: --rounds must be between 1 and 5")


def prepare_corpus(
    engine: Engine, args: argparse.Namespace, embedder: HashingEmbedder
) -> tuple[int, str]:
    """The corpus id, built now or reused, and a note saying which."""
    if args.rebuild:
        delete_corpus(engine, args.corpus)
    corpus = ensure_corpus(engine, args.corpus, embedder.name)
    wanted = firms(args.firms)
    existing = proposition_counter(engine, corpus)
    first = wanted[0]
    if existing and not has_passage(engine, corpus, first.name, " ".join(first.propositions())):
        raise SystemExit(
            f"error: corpus {args.corpus!r} holds another build; pass --rebuild or another --corpus"
        )
    if existing >= 3 * len(wanted):
        return corpus, "reused"
    started = time.perf_counter()
    build_corpus(engine, corpus, wanted, embedder)
    link_graph_layer(engine, corpus, embedder)
    return corpus, f"built in {time.perf_counter() - started:.1f} s"


@dataclass
class ModeResult:
    """One mode's runs."""

    seconds: list[float] = field(default_factory=list)
    llm_calls: int = 0
    max_in_flight: int = 0
    right: int = 0
    overlaps: list[Overlap] = field(default_factory=list)


@dataclass(frozen=True)
class Bench:
    """What every run shares."""

    engine: Engine
    database_url: str
    settings: Settings
    corpus: str
    corpus_id: int
    model: str
    latency: float
    rounds: int
    embedder: HashingEmbedder

    def client(self, comparison: Comparison) -> LlmClient:
        """A fresh client per run: the scripted rules count their uses, and nothing is cached."""
        if self.model != SCRIPTED:
            from graphs.models.providers import lazy_llm_client

            return lazy_llm_client(
                self.model,
                temperature=GENERATOR_TEMPERATURE,
                max_tokens=AGENT_MAX_TOKENS,
                api_key=self.settings.google_api_key,
                model_dir=self.settings.model_dir,
                engine=self.engine,
                use_cache=False,
                concurrency=self.settings.llm_concurrency,
                endpoints=self.settings.endpoints,
            )
        ids = (
            entity_id(self.engine, self.corpus_id, comparison.first.name, self.embedder),
            entity_id(self.engine, self.corpus_id, comparison.second.name, self.embedder),
        )
        rules = question_rules(comparison, ids, self.rounds)
        model = ScriptedChatModel(rules=rules, latency_s=self.latency)
        return LlmClient(
            model=model,
            model_name=SCRIPTED,
            engine=self.engine,
            use_cache=False,
            concurrency=self.settings.llm_concurrency,
        )

    async def run(self, comparison: Comparison, mode: str, result: ModeResult | None) -> None:
        """Answer one question in one mode; add its figures to `result` (None: a warm-up)."""
        client = self.client(comparison)
        services = Services(
            engine=self.engine,
            database_url=self.database_url,
            settings=self.settings,
            llm=client,
            extractor_llm=client,
            embedder=self.embedder,
        )
        graph = build_grasp_graph(services, checkpointer=InMemorySaver())
        recorder = SpanRecorder()
        config: RunnableConfig = {
            "configurable": {"thread_id": f"{self.corpus}-{mode}-{uuid.uuid4().hex[:8]}"},
            "callbacks": [recorder],
        }
        if mode == "off":
            config["max_concurrency"] = 1
        context = GraspContext(corpus=self.corpus, max_iterations=max(3, self.rounds))
        started = time.perf_counter()
        state = await graph.ainvoke({"question": comparison.question}, config, context=context)
        elapsed = time.perf_counter() - started
        if result is None:
            return
        result.seconds.append(elapsed)
        result.llm_calls += recorder.llm_calls
        result.max_in_flight = max(result.max_in_flight, recorder.max_in_flight)
        result.right += state.get("final_answer") == comparison.answer
        result.overlaps.append(overlap(recorder.hops.values()))


def mode_line(mode: str, result: ModeResult, scripted: bool, questions: int) -> str:
    """One mode's row of the table."""
    windows = sum(o.windows_sum for o in result.overlaps)
    shared = sum(o.windows_overlap for o in result.overlaps)
    work = sum(o.other_work for o in result.overlaps)
    beside = sum(o.other_work_beside for o in result.overlaps)
    free = sum(o.llm_free_work for o in result.overlaps)
    free_beside = sum(o.llm_free_beside for o in result.overlaps)
    answers = f"{result.right}/{questions}" if scripted else "unchecked"
    return (
        f"{mode:<5}{statistics.median(result.seconds):>9.2f}{statistics.fmean(result.seconds):>9.2f}"
        f"{result.llm_calls:>7}{result.max_in_flight:>11}"
        f"{f'{shared:.2f} of {windows:.2f}':>20}{f'{beside:.3f} of {work:.3f}':>24}"
        f"{f'{free_beside:.3f} of {free:.3f}':>24}{answers:>11}"
    )


def report(bench: Bench, note: str, results: dict[str, ModeResult], questions: int) -> list[str]:
    """The lines `grasp bench concurrency` prints."""
    from evals.bench.hardware import cpu_model

    scripted = bench.model == SCRIPTED
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    model = (
        f"scripted, {bench.latency:.2f} s latency per call, {bench.rounds} search round(s) per hop"
        if scripted
        else f"{bench.model} (no response cache)"
    )
    on, off = (statistics.fmean(results[mode].seconds) for mode in MODES)
    speed_up = off / on if on else float("nan")
    lines = [
        f"grasp bench concurrency — corpus {bench.corpus!r} ({note}), {questions} comparison "
        f"question(s) with two independent hops, each run once per mode after one warm-up",
        f"hardware: {os.cpu_count()} CPUs, {cpu_model()}; load average {load}",
        f"model: {model}",
        "hops on: the plan's independent steps in one superstep; off: LangGraph max_concurrency=1",
        "hops overlap: seconds the hops' windows overlapped, of their sum; non-LLM beside: seconds "
        "of the hops' non-LLM work (database, embedding, code; with a one-slot model such as the "
        "local one, also the wait for that slot) run while another hop was active, of all of it; "
        "LLM-free nodes beside: the same for the nodes that call no LLM (search, "
        "gather_evidence: database and embedding alone), equal on and off when no hop waits on "
        "another's database work",
        f"{'mode':<5}{'p50 s':>9}{'mean s':>9}{'calls':>7}{'in flight':>11}"
        f"{'hops overlap s':>20}{'non-LLM beside s':>24}{'LLM-free beside s':>24}{'answers':>11}",
        *(mode_line(mode, results[mode], scripted, questions) for mode in MODES),
        f"speed-up (off / on, mean wall per question): {speed_up:.2f}× — target ≥ "
        f"{TARGET_SPEED_UP}×: {'met' if speed_up >= TARGET_SPEED_UP else 'MISSED'}",
    ]
    if scripted:
        per_hop = 1 + 2 * bench.rounds  # rewrite, then selection and evaluation per round
        lines.append(
            f"ideal for this script (LLM calls in a row, off / on): {2 + 2 * per_hop} / "
            f"{2 + per_hop} = {(2 + 2 * per_hop) / (2 + per_hop):.2f}×"
        )
    return lines


async def handle(args: argparse.Namespace) -> int:
    """Run `grasp bench concurrency`."""
    from graphs.cli.main import console
    from graphs.runtime.services import open_engine

    check_args(args)
    settings = Settings.from_env()
    engine, url = open_engine(settings)
    embedder = HashingEmbedder()
    corpus, note = prepare_corpus(engine, args, embedder)
    asked = comparisons(firms(args.firms), args.questions)
    bench = Bench(
        engine, url, settings, args.corpus, corpus, args.model, args.latency, args.rounds, embedder
    )
    results = {mode: ModeResult() for mode in MODES}
    await bench.run(asked[0], "on", None)  # first use builds the entity graph cache
    for number, comparison in enumerate(asked):
        # Alternate which mode goes first, so a drift in load favours neither.
        order = MODES if number % 2 == 0 else MODES[::-1]
        for mode in order:
            await bench.run(comparison, mode, results[mode])
    for line in report(bench, note, results, len(asked)):
        console.print(line, markup=False, soft_wrap=True)
    return 0
