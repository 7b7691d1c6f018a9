"""Retrieval eval: recall@k of gold passages, single-pass or simulated agentic, no LLM at query time.

Modes (spec "Retrieval metrics", GRASP Table 2):
- single: the whole question, top-k passages;
- agentic: one retrieval per gold sub-question (earlier answers substituted for #k), top-k each,
  their union in order;
- single-wide: the whole question with k × (number of sub-questions) passages, the budget a
  single-pass method gets when it is compared in the agentic table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from sqlalchemy import Engine

from evals.gold import PassageIndex, gold_passage_ids
from evals.loaders import QAExample, substitute_placeholders
from evals.metrics import recall_at_k
from nodes.embedding import Embedder
from nodes.retrieval.methods import PprParams, ppr_passages, proprag_passages, sa_rag_passages
from nodes.retrieval.proprag import PropRagParams
from nodes.retrieval.spreading_activation import SpreadingParams
from store.passage_search import ranked_bm25_passages, ranked_dense_passages
from store.retrieval import FloatVector
from store.single_pass import single_pass_passages

log = logging.getLogger(__name__)

RetrievalMethod = Literal["grasp", "dense", "bm25", "ppr", "proprag", "sa-rag"]
#: The settings dataclass of each peer method (`--set` edits its fields); grasp uses GraspContext.
PEER_PARAMS: dict[str, type[Any]] = {
    "ppr": PprParams,
    "proprag": PropRagParams,
    "sa-rag": SpreadingParams,
}
Mode = Literal["single", "agentic", "single-wide"]
RETRIEVAL_METHODS: tuple[str, ...] = get_args(RetrievalMethod)
MODES: tuple[str, ...] = get_args(Mode)
KS = (2, 5, 10)

#: (query text, its vector, k) → passage ids, best first.
Retriever = Callable[[str, FloatVector, int], list[int]]


def make_retriever(
    engine: Engine,
    corpus: int,
    method: RetrievalMethod,
    params: Any,
    *,
    embed: Callable[[list[str]], FloatVector] | None = None,
) -> Retriever:
    """A retriever over one corpus; `params` is RetrievalParams for grasp, else PEER_PARAMS'.

    grasp is GRASP's retrieval with entity selection off: hybrid search with the query text as
    keywords, then RankVote over the propositions of the top `k_entities` entities (the run
    setting's k_entities_unselected, as nothing selects). ppr, proprag
    and sa-rag are the LLM-free peers over the entity graph layer (`embed` is PropRAG's path
    re-ranker: the corpus's embedder).
    """
    if method == "ppr":
        return lambda query, vector, k: ppr_passages(engine, corpus, vector, k, params)
    if method == "sa-rag":
        return lambda query, vector, k: sa_rag_passages(engine, corpus, vector, k, params)
    if method == "proprag":
        if embed is None:
            raise ValueError("proprag needs the corpus's embedder to re-rank paths")
        path_embed = embed
        return lambda query, vector, k: proprag_passages(
            engine, corpus, vector, k, path_embed, params
        )

    def grasp(query: str, vector: FloatVector, k: int) -> list[int]:
        return single_pass_passages(
            engine, corpus=corpus, query=vector, keywords=query, params=params, k=k
        )

    def dense(query: str, vector: FloatVector, k: int) -> list[int]:
        return ranked_dense_passages(engine, corpus, vector, k)

    def bm25(query: str, vector: FloatVector, k: int) -> list[int]:
        return ranked_bm25_passages(engine, corpus, query, k)

    return {"grasp": grasp, "dense": dense, "bm25": bm25}[method]


def agentic_union(per_query: Sequence[Sequence[int]], k: int) -> list[int]:
    """The first k passages of each sub-question's list, united in order without repeats."""
    return list(dict.fromkeys(pid for ranked in per_query for pid in ranked[:k]))


def queries_for(example: QAExample, mode: Mode) -> list[str]:
    """What is retrieved for: the question, or its gold sub-questions with answers filled in."""
    if mode == "agentic":
        return substitute_placeholders(example.decomposition)
    return [example.question]


def recalls(
    example: QAExample, mode: Mode, ranked: Sequence[Sequence[int]], gold: list[int]
) -> dict[str, float]:
    """recall@k for k in KS, as {"2": …, "5": …, "10": …}."""
    result: dict[str, float] = {}
    for k in KS:
        if mode == "agentic":
            result[str(k)] = recall_at_k(agentic_union(ranked, k), gold, len(ranked) * k)
        elif mode == "single-wide":
            width = k * max(len(example.decomposition), 1)
            result[str(k)] = recall_at_k(ranked[0], gold, width)
        else:
            result[str(k)] = recall_at_k(ranked[0], gold, k)
    return result


@dataclass(frozen=True)
class RetrievalRun:
    """Per-question records and the questions left out (no decomposition in agentic mode)."""

    records: list[dict[str, Any]]
    skipped: list[str]


def evaluate_retrieval(
    examples: Sequence[QAExample],
    index: PassageIndex,
    corpus_name: str,
    retriever: Retriever,
    embedder: Embedder,
    mode: Mode,
    method: str,
) -> RetrievalRun:
    """Retrieve for every question and score recall@2/5/10; gold passages must be in the corpus."""
    golds = {e.id: gold_passage_ids(e, index, corpus_name) for e in examples}
    usable: list[QAExample] = []
    skipped: list[str] = []
    for example in examples:
        needs_steps = mode in ("agentic", "single-wide")
        if not golds[example.id] or (needs_steps and not example.decomposition):
            skipped.append(example.id)
        else:
            usable.append(example)
    queries = [queries_for(e, mode) for e in usable]
    flat = [q for qs in queries for q in qs]
    vectors = iter(list(embedder.embed(flat)) if flat else [])
    records: list[dict[str, Any]] = []
    for example, texts in zip(usable, queries, strict=True):
        depth = max(KS) * (len(example.decomposition) if mode == "single-wide" else 1)
        ranked = [retriever(text, next(vectors), depth) for text in texts]
        records.append(
            {
                "id": example.id,
                "hops": example.hops,
                "method": method,
                "mode": mode,
                "queries": texts,
                "gold": golds[example.id],
                "retrieved": [list(r) for r in ranked],
                "recall": recalls(example, mode, ranked, golds[example.id]),
            }
        )
    if skipped:
        log.warning("%d questions skipped (no gold passages or no decomposition)", len(skipped))
    return RetrievalRun(records, skipped)


def mean_recalls(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Mean recall@k overall ("all") and per hop count ("2hop", …), with n."""
    groups: dict[str, list[dict[str, Any]]] = {"all": list(records)}
    for record in records:
        if isinstance(record.get("hops"), int):
            groups.setdefault(f"{record['hops']}hop", []).append(record)
    order = ["all", *sorted((g for g in groups if g != "all"), key=lambda g: int(g[:-3]))]
    return {
        group: {
            "n": float(len(groups[group])),
            **{
                str(k): sum(r["recall"][str(k)] for r in groups[group]) / len(groups[group])
                for k in KS
            },
        }
        for group in order
        if groups[group]
    }
