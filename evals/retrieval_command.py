"""`grasp eval-retrieval`: recall@k of one retrieval method and mode over a question set."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from evals.eval_inputs import check_corpus, typed_settings
from evals.gold import corpus_passage_index
from evals.loaders import load_questions
from evals.reports import write_report
from evals.results import RETRIEVAL_DIR, results_dir, safe_name, write_jsonl
from evals.results_retrieval import retrieval_summary, write_retrieval_summary
from evals.retrieval_eval import (
    PEER_PARAMS,
    evaluate_retrieval,
    make_retriever,
    mean_recalls,
)
from evals.summary import format_number
from graphs.agent.context import GraspContext
from graphs.runtime.services import Services, services_for
from graphs.runtime.settings import Settings


def run_retrieval(args: argparse.Namespace, services: Services) -> tuple[Path, dict[str, Any]]:
    """Everything `grasp eval-retrieval` does but printing: the file written and mean recalls."""
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
    recall = mean_recalls(run.records)
    summary = retrieval_summary(
        label, args.mode, args.corpus, services.embedder.name, recall, len(run.skipped)
    )
    write_retrieval_summary(path.with_suffix(".summary.json"), summary)
    return path, {"recall": recall, "skipped": run.skipped}


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
