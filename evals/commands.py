"""`grasp eval`, `grasp eval-retrieval` and `grasp eval-report`: argument parsing and wiring."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from evals.closed_book import SAMPLING_TEMPERATURE
from evals.eval_inputs import check_corpus, method_settings
from evals.gold import PassageIndex, corpus_passage_index, gold_steps, passage_titles
from evals.loaders import load_longbench, load_questions
from evals.long_context import long_items, make_prepare
from evals.qa_evaluate import evaluate
from evals.qa_run import QaItem, QaRun, RunOutcome
from evals.qa_runner import GRAPH_METHODS, METHODS
from evals.reports import write_report
from evals.results import results_dir, safe_name
from evals.results_doc import print_results_doc
from evals.retrieval_command import handle_eval_retrieval
from evals.retrieval_eval import MODES, RETRIEVAL_METHODS
from evals.summary import GroupSummary, format_number, summarise_causes
from graphs.cli.index import count_or_zero
from graphs.models.providers import lazy_llm_client
from graphs.runtime.services import Services, services_for
from graphs.runtime.settings import Settings
from nodes.llm.client import LlmClient
from store.ledger import corpus_token_totals

T = TypeVar("T")


def register(sub: Any) -> None:
    """Add the three evaluation commands."""
    qa = sub.add_parser("eval", help="answer a question set by one method and score it")
    qa.add_argument("questions", type=Path, help="HippoRAG question JSON, or LongBench JSON lines")
    qa.add_argument("--corpus", help="indexed corpus (pooled); results folder name (long)")
    qa.add_argument("--method", choices=METHODS, default="grasp")
    qa.add_argument("--setting", choices=["pooled", "long"], default="pooled")
    qa.add_argument("--limit", type=int, default=0, help="only the first N questions")
    qa.add_argument(
        "--offset",
        type=count_or_zero,
        default=0,
        help="skip the first N questions (a held-out slice: --offset 40 --limit 20 is 41-60)",
    )
    qa.add_argument("--concurrency", type=int, default=1, help="questions in flight")
    qa.add_argument("--p-samples", type=int, default=5, help="closed-book samples (0: no SE)")
    qa.add_argument("--no-judge", action="store_true", help="EM/F1 only, no judge calls")
    qa.add_argument("--k", type=int, help="passages shown (methods with a k setting: --set k=N)")
    qa.add_argument("--name", help="label and file name of this run (default: the method)")
    qa.add_argument("--out", type=Path, help="results root (default runs/eval)")
    qa.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="the method's Context field"
    )
    qa.add_argument("--extractor", choices=["llm", "spacy", "synthetic"], default="llm")
    qa.set_defaults(handler=handle_eval)

    retrieval = sub.add_parser("eval-retrieval", help="recall@2/5/10 of gold passages")
    retrieval.add_argument("questions", type=Path)
    retrieval.add_argument("--corpus", required=True)
    retrieval.add_argument("--method", choices=RETRIEVAL_METHODS, default="grasp")
    retrieval.add_argument("--mode", choices=MODES, default="single")
    retrieval.add_argument("--limit", type=int, default=0)
    retrieval.add_argument(
        "--k-entities", type=int, help="entities traversed (grasp: k_entities_unselected)"
    )
    retrieval.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="GraspContext field"
    )
    retrieval.add_argument("--out", type=Path, help="results root (default runs/eval)")
    retrieval.set_defaults(handler=handle_eval_retrieval)

    report = sub.add_parser("eval-report", help="tables and plots of a results folder")
    report.add_argument("directory", type=Path)
    report.add_argument("--p-model", help="closed-book estimates of this model (default: most)")
    report.add_argument("--no-plots", action="store_true")
    report.add_argument("--markdown", type=Path, help="write the summaries under DIR to this page")
    report.set_defaults(handler=handle_eval_report)


def sampler_for(settings: Settings, services: Services) -> LlmClient:
    """The base model at temperature 1.0 with its response cache off (see evals.closed_book)."""
    return lazy_llm_client(
        settings.chat_model,
        temperature=SAMPLING_TEMPERATURE,
        api_key=settings.google_api_key,
        model_dir=settings.model_dir,
        engine=services.engine,
        use_cache=False,
        concurrency=settings.llm_concurrency,
        endpoints=settings.endpoints,
        sampled=True,
    )


async def run_eval(
    args: argparse.Namespace,
    services: Services,
    sampler: LlmClient | None,
    progress: Callable[[str], None] | None = None,
) -> tuple[QaRun, RunOutcome, list[GroupSummary]]:
    """Everything `grasp eval` does but printing; tests call this with scripted services."""
    label = safe_name(args.name or args.method)
    # A bad --set fails before anything is read.
    overrides = method_settings(args.method, args.set, args.k)
    index: PassageIndex = {}
    indexing = 0.0
    if args.setting == "long":
        samples = picked(load_longbench(args.questions), args)
        items = long_items(samples)
        directory = results_dir(args.out, args.corpus or f"longbench-{args.questions.stem}")
    else:
        if not args.corpus:
            raise ValueError("--corpus is required in the pooled setting")
        examples = load_questions(args.questions)
        if args.method != "none":
            corpus = await asyncio.to_thread(check_corpus, services, args.corpus)
            # Where each gold passage is stored: the lines' evidence recall and failure causes.
            index = await asyncio.to_thread(corpus_passage_index, services.engine, corpus)
            if args.method in GRAPH_METHODS:
                # These read the proposition graph; the pooled index serves every question.
                totals = await asyncio.to_thread(corpus_token_totals, services.engine, corpus)
                indexing = (totals.input_tokens + totals.output_tokens) / len(examples)
        items = [
            QaItem(
                e.id,
                e.question,
                e.answers,
                e.hops,
                e.dataset,
                args.corpus,
                tuple(gold_steps(e, index)),
            )
            for e in picked(examples, args)
        ]
        directory = results_dir(args.out, args.corpus)
    run = QaRun(
        services=services,
        method=args.method,
        results=directory / f"{label}.jsonl",
        label=label,
        concurrency=args.concurrency,
        judge=not args.no_judge,
        method_settings=overrides,
        indexing_per_question=indexing,
        passage_titles=passage_titles(index),
    )
    if args.setting == "long":
        run.prepare = make_prepare(run, samples, args.extractor)
    outcome, summaries = await evaluate(run, items, sampler, args.p_samples, progress)
    return run, outcome, summaries


def picked(items: list[T], args: argparse.Namespace) -> list[T]:
    """The questions `--offset` and `--limit` select, in file order."""
    return items[args.offset : args.offset + args.limit if args.limit else None]


def summary_lines(label: str, summaries: list[GroupSummary]) -> list[str]:
    """Plain-text summary rows for the terminal."""
    lines = [f"{label}: group n EM F1 Judge Judge(lenient) tokens/q total/q SE"]
    for g in summaries:
        cells = [g.group, str(g.n), format_number(g.em), format_number(g.f1)]
        cells += [format_number(g.judge), format_number(g.judge_lenient)]
        cells += [format_number(g.tokens_per_question, 0), format_number(g.total_per_question, 0)]
        cells += [format_number(g.success_economy, 1)]
        lines.append("  " + "  ".join(cells))
    return lines


async def handle_eval(args: argparse.Namespace) -> int:
    """`grasp eval`: answer, judge and score questions, then print the summary."""
    from graphs.cli.main import console, errors

    method_settings(args.method, args.set, args.k)  # a bad --set fails before the store starts
    settings = Settings.from_env()
    services = services_for(settings)
    sampler = sampler_for(settings, services) if args.p_samples > 0 else None
    run, outcome, summaries = await run_eval(
        args, services, sampler, lambda line: console.print(line, markup=False)
    )
    for line in summary_lines(run.label, summaries):
        console.print(line)
    causes = summarise_causes(outcome.records)
    if causes is not None:
        shares = ", ".join(f"{name} {count}" for name, count in causes.counts.items() if count)
        console.print(f"failure causes: {shares}")
    console.print(f"answered {outcome.answered}, skipped {outcome.skipped} already done")
    console.print(f"results: {run.results}")
    report = write_report(run.results.parent)
    console.print(f"report: {report.files[0]}")
    for qid, error in outcome.failed:
        errors.print(f"[yellow]failed[/] {qid}: {error}")
    if outcome.failed:
        errors.print("run the same command again to retry the failed questions")
        return 1
    return 0


def handle_eval_report(args: argparse.Namespace) -> int:
    """`grasp eval-report`: rebuild a results folder's report and print it."""
    from graphs.cli.main import console

    if args.markdown is not None:  # docs/results.md from committed summaries
        return print_results_doc(args.directory, args.markdown)
    if not args.directory.is_dir():
        raise FileNotFoundError(f"no results folder {args.directory}")
    report = write_report(args.directory, args.p_model, plots=not args.no_plots)
    console.print(report.files[0].read_text(encoding="utf-8"), markup=False, soft_wrap=True)
    for path in report.files[1:]:
        console.print(f"plot: {path}")
    return 0
