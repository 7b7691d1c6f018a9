"""Where GRASP's single pass loses a gold passage that PPR or PropRAG finds (issue 34).

    python -m evals.retrieval_losses QUESTIONS --corpus C [--set KEY=VALUE …] [--details]

For every gold passage that PPR or PropRAG ranks in its top 5 and GRASP does not, the step is
traced stage by stage and the loss is put in the first stage that dropped it:

- `not linked`: no entity of the passage is linked to any search hit, so the vote cannot reach it;
- `ranked out`: one is, but its entity score ranks below the entities the step traverses;
- `out-voted`: an entity of the passage is traversed, but by RankVote alone (no fusion terms)
  5 other passages outrank it;
- `fused out`: RankVote alone ranks it in the top 5, the fused score 6+.

The table also gives each method's recall@5 on the set, so one command shows the gap and its
causes. The table goes to stdout, and with `--out FILE` also to a markdown file that records
the command and commit it came from (committed under results/<set>/retrieval/ and linked from
docs/retrieval.md, so no loss count there is typed by hand).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from evals.gold import corpus_passage_index, gold_passage_ids
from evals.loaders import load_questions
from evals.metrics import recall_at_k
from evals.provenance import provenance
from evals.results import read_jsonl
from evals.retrieval_eval import RetrievalMethod, Retriever, make_retriever
from graphs.agent.context import GraspContext
from graphs.cli.ask_input import set_items
from graphs.runtime.run_history import Refused
from graphs.runtime.services import services_for
from graphs.runtime.settings import Settings
from nodes.retrieval.methods import PprParams
from nodes.retrieval.proprag import PropRagParams
from store.corpora import corpus_id
from store.engine import StoreError
from store.entity_graph import passage_propositions, proposition_details
from store.grasp_retrieval import RetrievalParams, search_entities, vote_passages
from store.retrieval import FloatVector

TOP = 5
#: How deep the fused and vote-only rankings are read (a rank beyond it prints as "—").
DEPTH = 100
#: Entities scored when the entity ranking is read whole (far beyond any traversed count).
ALL_ENTITIES = 100_000
PEERS: tuple[RetrievalMethod, ...] = ("ppr", "proprag")
COMPARED: tuple[RetrievalMethod, ...] = ("grasp", "dense", "bm25", *PEERS)
CAUSES = ("not linked", "ranked out", "out-voted", "fused out")


@dataclass(frozen=True)
class Loss:
    """One gold passage a peer finds and GRASP misses, with the stage that lost it."""

    question: str
    passage: int
    found_by: tuple[str, ...]
    cause: str
    entity_rank: int | None  # best rank of one of its entities among all scored entities
    vote_rank: int | None  # its rank by RankVote alone
    final_rank: int | None  # its rank by the step's fused score


def _rank(ranked: Sequence[int], item: int) -> int | None:
    return ranked.index(item) + 1 if item in ranked else None


def passage_entities(engine: Engine, passage: int) -> set[int]:
    """The entities linked to any unit of the passage."""
    details = proposition_details(engine, passage_propositions(engine, [passage]))
    return {entity for detail in details.values() for entity in detail.entity_ids}


def trace_loss(
    engine: Engine,
    corpus: int,
    query: str,
    vector: FloatVector,
    params: RetrievalParams,
    passage: int,
    top: int = TOP,
) -> tuple[str, int | None, int | None, int | None]:
    """(cause, entity rank, vote-only rank, fused rank) of a gold passage the step missed.

    The passage must be one the step ranks below `top`; the cause is the first stage that lost it.
    """
    every = search_entities(
        engine,
        corpus=corpus,
        query=vector,
        keywords=query,
        params=replace(params, k_entities=ALL_ENTITIES),
    )
    found = search_entities(engine, corpus=corpus, query=vector, keywords=query, params=params)
    traversed = [e["id"] for e in found.entities]
    deep = replace(params, k_passages=DEPTH)
    fused = vote_passages(
        engine,
        corpus=corpus,
        query=vector,
        entities=traversed,
        params=deep,
        hits=found.hits,
        prior=found.prior,
    )
    plain = deep.plain_vote()
    voted = vote_passages(engine, corpus=corpus, query=vector, entities=traversed, params=plain)
    final_rank = _rank([item["id"] for item in fused.items], passage)
    vote_rank = _rank([item["id"] for item in voted.items], passage)
    mine = passage_entities(engine, passage)
    ranking = [e["id"] for e in every.entities]
    entity_rank = min((r for e in mine if (r := _rank(ranking, e)) is not None), default=None)
    if not mine & set(traversed):
        cause = "not linked" if entity_rank is None else "ranked out"
    elif vote_rank is None or vote_rank > top:
        cause = "out-voted"
    else:
        cause = "fused out"
    return cause, entity_rank, vote_rank, final_rank


@dataclass(frozen=True)
class LossReport:
    """Each method's recall@5 and the traced losses of one question set."""

    questions: int
    recall: dict[str, float]
    losses: list[Loss]


def recorded_runs(folder: Path | None) -> dict[str, Retriever]:
    """The peers' single-pass rankings as `grasp eval-retrieval` recorded them in `folder`.

    `<method>-single.jsonl` of each peer found there (run at its defaults) replaces running it
    again: PropRAG takes seconds a question.
    """
    runs: dict[str, Retriever] = {}
    for name in COMPARED[1:]:
        path = folder / f"{name}-single.jsonl" if folder else None
        if path is None or not path.is_file():
            continue
        runs[name] = _replay({r["queries"][0]: r["retrieved"][0] for r in read_jsonl(path)})
    return runs


def _replay(ranked: dict[str, list[int]]) -> Retriever:
    def retrieve(query: str, _vector: FloatVector, k: int) -> list[int]:
        return ranked[query][:k]

    return retrieve


def analyse(
    engine: Engine,
    corpus: int,
    corpus_name: str,
    questions: Path,
    params: RetrievalParams,
    embed: Callable[[list[str]], FloatVector],
    recorded: Path | None = None,
) -> LossReport:
    """Run every compared method on every question (or read its run), then trace the losses."""
    peers: dict[str, Any] = {"ppr": PprParams(), "proprag": PropRagParams()}
    retrievers: dict[str, Retriever] = {
        name: make_retriever(engine, corpus, name, peers.get(name, params), embed=embed)
        for name in COMPARED
    } | recorded_runs(recorded)
    index = corpus_passage_index(engine, corpus)
    examples = [e for e in load_questions(questions) if e.gold_passages]
    vectors = embed([e.question for e in examples])
    recall: dict[str, float] = dict.fromkeys(COMPARED, 0.0)
    losses: list[Loss] = []
    for example, vector in zip(examples, vectors, strict=True):
        gold = gold_passage_ids(example, index, corpus_name)
        ranked = {name: run(example.question, vector, TOP) for name, run in retrievers.items()}
        for name in COMPARED:
            recall[name] += recall_at_k(ranked[name], gold, TOP) / len(examples)
        for passage in gold:
            found_by = tuple(p for p in PEERS if passage in ranked[p][:TOP])
            if not found_by or passage in ranked["grasp"][:TOP]:
                continue
            traced = trace_loss(engine, corpus, example.question, vector, params, passage)
            losses.append(Loss(example.id, passage, found_by, *traced))
    return LossReport(len(examples), recall, losses)


def _cell(value: int | None) -> str:
    return "—" if value is None else str(value)


def report_lines(name: str, report: LossReport, details: bool) -> list[str]:
    """The set's recall@5 row, its losses by cause, and (with details) one row per loss."""
    lines = [f"## {name}: {report.questions} questions", ""]
    lines += ["| " + " | ".join(COMPARED) + " |", "|" + "---|" * len(COMPARED)]
    lines += ["| " + " | ".join(f"{report.recall[m]:.3f}" for m in COMPARED) + " |", ""]
    lines += [
        "| gold passages a peer finds, GRASP misses | " + " | ".join(CAUSES) + " |",
        "|" + "---|" * (len(CAUSES) + 1),
    ]
    counts = [sum(1 for loss in report.losses if loss.cause == c) for c in CAUSES]
    lines += [f"| {len(report.losses)} | " + " | ".join(str(n) for n in counts) + " |"]
    if details:
        lines += [
            "",
            "| question | passage | found by | cause | entity rank | vote rank | fused rank |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {x.question} | {x.passage} | {'+'.join(x.found_by)} | {x.cause} | "
            f"{_cell(x.entity_rank)} | {_cell(x.vote_rank)} | {_cell(x.final_rank)} |"
            for x in report.losses
        ]
    return lines


def write_table(out: Path, lines: Sequence[str], given: Sequence[str]) -> None:
    """The table as a markdown file headed by the command (`given` arguments) and commit."""
    made = provenance(["python", "-m", "evals.retrieval_losses", *given])
    header = [
        "# Where GRASP's single pass loses gold passages",
        "",
        f"Generated by `{made['command']}` at commit `{made['commit']}`; do not edit by hand.",
        "",
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join([*header, *lines]) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """The command: one question set against one corpus, the table on stdout."""
    parser = argparse.ArgumentParser(prog="python -m evals.retrieval_losses", description=__doc__)
    parser.add_argument("questions", type=Path)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--details", action="store_true", help="one row per lost passage")
    parser.add_argument(
        "--recorded",
        type=Path,
        metavar="DIR",
        help="read the peers' rankings from grasp eval-retrieval's results here "
        "(runs/eval/C/retrieval) instead of running them",
    )
    parser.add_argument("--out", type=Path, metavar="FILE", help="also write the table here")
    args = parser.parse_args(argv)
    try:
        if not args.questions.is_file():
            raise ValueError(f"no question file {args.questions}")
        sets = set_items(args.set, GraspContext)
        params = GraspContext(**{"entity_selection": "off", **sets}).retrieval_params()
        services = services_for(Settings.from_env())
        corpus = corpus_id(services.engine, args.corpus)
        report = analyse(
            services.engine,
            corpus,
            args.corpus,
            args.questions,
            params,
            services.embedder.embed,
            args.recorded,
        )
    except (ValueError, LookupError, StoreError, Refused) as exc:  # bad input: one line
        print(f"error: {exc}", file=sys.stderr)
        return 1
    lines = report_lines(args.corpus, report, args.details)
    print("\n".join(lines))
    if args.out is not None:
        write_table(args.out, lines, sys.argv[1:] if argv is None else list(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
