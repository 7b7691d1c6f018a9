"""`grasp eval`, `grasp eval-retrieval` and `grasp eval-report`: argument parsing and wiring."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from evals.closed_book import SAMPLING_TEMPERATURE
from evals.gold import PassageIndex, corpus_passage_index, gold_steps, passage_titles
from evals.loaders import load_longbench, load_questions
from evals.long_context import long_items, make_prepare
from evals.qa_evaluate import evaluate
from evals.qa_run import QaItem, QaRun, RunOutcome
from evals.qa_runner import GRAPH_METHODS, METHODS
from evals.reports import write_report
from evals.results import RETRIEVAL_DIR, results_dir, safe_name, write_jsonl
from evals.results_doc import print_results_doc
from evals.retrieval_eval import (
    MODES,
    PEER_PARAMS,
    RETRIEVAL_METHODS,
    evaluate_retrieval,
    make_retriever,
)
from evals.summary import GroupSummary, format_number, summarise_causes
from graphs.agent.context import GraspContext
from graphs.cli.ask_input import setting_examples, typed_value
from graphs.models.providers import lazy_llm_client
from graphs.peers.registry import method_named
from graphs.runtime.run_history import Refused
from graphs.runtime.services import Services, services_for
from graphs.runtime.settings import Settings
from nodes.llm.client import LlmClient
from store.corpora import corpus_embedder, corpus_id
from store.ledger import corpus_token_totals


def register(sub: Any) -> None:
    """Add the three evaluation commands."""
    qa = sub.add_parser("eval", help="answer a question set by one method and score it")
    qa.add_argument("questions", type=Path, help="HippoRAG question JSON, or LongBench JSON lines")
    qa.add_argument("--corpus", help="indexed corpus (pooled); results folder name (long)")
    qa.add_argument("--method", choices=METHODS, default="grasp")
    qa.add_argument("--setting", choices=["pooled", "long"], default="pooled")
    qa.add_argument("--limit", type=int, default=0, help="only the first N questions")
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


def typed_settings(kind: type[Any], pairs: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE` pairs as overrides of the dataclass `kind`, typed like each default."""
    defaults = setting_examples(kind)
    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in defaults or key == "corpus":
            known = sorted(name for name in defaults if name != "corpus")
            raise ValueError(f"--set {pair!r}: expected KEY=VALUE with KEY one of {known}")
        try:  # the spelling `grasp ask --set` takes: a bool is never `bool("false")`
            settings[key] = typed_value(key, value, defaults[key])
        except Refused as exc:
            raise ValueError(str(exc)) from None
    kind(**settings)  # fails now, before any question, on a bad value
    return settings


def grasp_settings(pairs: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE` pairs as GraspContext overrides."""
    return typed_settings(GraspContext, pairs)


def method_settings(method: str, pairs: list[str], k: int | None = None) -> dict[str, Any]:
    """`--set KEY=VALUE` pairs (and `--k`) as overrides of the method's Context."""
    context = method_named(method).context
    settings = typed_settings(context, pairs)
    if k is not None:
        if "k" not in {f.name for f in fields(context)}:
            raise ValueError(f"--k: {method} has no k setting; use --set KEY=VALUE")
        settings["k"] = k
        context(**settings)  # a bad k fails now, like a bad --set
    return settings


def check_corpus(services: Services, name: str) -> int:
    """The corpus id, refusing one whose vectors another embedder made."""
    corpus = corpus_id(services.engine, name)
    indexed_with = corpus_embedder(services.engine, corpus)
    if indexed_with not in (None, services.embedder.name):
        raise ValueError(
            f"corpus {name!r} was indexed with {indexed_with}, but GRASP_EMBEDDER gives "
            f"{services.embedder.name}: set GRASP_EMBEDDER to match"
        )
    return corpus


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
        samples = load_longbench(args.questions)[: args.limit or None]
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
            for e in examples[: args.limit or None]
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


def run_retrieval(args: argparse.Namespace, services: Services) -> tuple[Path, dict[str, Any]]:
    """Everything `grasp eval-retrieval` does but printing: the file written and mean recalls."""
    from evals.retrieval_eval import mean_recalls

    examples = load_questions(args.questions)[: args.limit or None]
    corpus = check_corpus(services, args.corpus)
    kind = PEER_PARAMS.get(args.method, GraspContext)
    sets = typed_settings(kind, args.set)
    if args.k_entities is not None:
        sets["k_entities_unselected" if kind is GraspContext else "k_entities"] = args.k_entities
    # GRASP's retrieval here has no LLM, so no entity selection: it traverses the unselected count.
    settings = (
        kind(**sets)
        if args.method in PEER_PARAMS
        else GraspContext(**{"entity_selection": "off", **sets}).retrieval_params()
    )
    label = args.method + "".join(f"[{key}={value}]" for key, value in sorted(sets.items()))
    retriever = make_retriever(
        services.engine, corpus, args.method, settings, embed=services.embedder.embed
    )
    run = evaluate_retrieval(
        examples,
        corpus_passage_index(services.engine, corpus),
        args.corpus,
        retriever,
        services.embedder,
        args.mode,
        label,
    )
    name = f"{safe_name(label)}-{args.mode}.jsonl"
    path = results_dir(args.out, args.corpus) / RETRIEVAL_DIR / name
    write_jsonl(path, run.records)
    return path, {"recall": mean_recalls(run.records), "skipped": run.skipped}


def handle_eval_retrieval(args: argparse.Namespace) -> int:
    """`grasp eval-retrieval`: recall@k of one method and mode, printed by hop count."""
    from graphs.cli.main import console

    path, result = run_retrieval(args, services_for(Settings.from_env()))
    console.print(f"{path.stem.rsplit('-', 1)[0]} / {args.mode}: group n R@2 R@5 R@10")
    for group, values in result["recall"].items():
        cells = [format_number(values[k]) for k in ("2", "5", "10")]
        console.print(f"  {group} {int(values['n'])} " + " ".join(cells))
    if result["skipped"]:
        console.print(f"skipped {len(result['skipped'])} questions without a decomposition")
    console.print(f"results: {path}")
    write_report(path.parent.parent)
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
