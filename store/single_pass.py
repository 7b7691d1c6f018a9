"""GRASP's retrieval in one pass, with nothing selected: hybrid search, then RankVote.

What `grasp eval-retrieval --method grasp` scores, and what gives the reader the whole
question's best passage beside the hops' (graphs/agent/reader_passages.py).
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import Engine

from store.grasp_retrieval import RetrievalParams, search_entities, vote_passages
from store.retrieval import FloatVector


def single_pass_passages(
    engine: Engine,
    *,
    corpus: int,
    query: FloatVector,
    keywords: str,
    params: RetrievalParams,
    k: int,
) -> list[int]:
    """The top `k` passage ids for one query: every scored entity's propositions vote."""
    found = search_entities(engine, corpus=corpus, query=query, keywords=keywords, params=params)
    vote = vote_passages(
        engine,
        corpus=corpus,
        query=query,
        entities=[entity["id"] for entity in found.entities],
        params=replace(params, k_passages=k),
        hits=found.hits,
        prior=found.prior,
    )
    return [passage["id"] for passage in vote.items]
