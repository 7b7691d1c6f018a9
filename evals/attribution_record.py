"""A result line's `attribution` record: the facts a cause was drawn from, laid out as JSON.

The cause itself comes from the rules in evals/attribution.py; this module only lays out what the
line keeps (gold hops, what was shown to whom, recall, kept sets).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from evals.attribution import (
    GoldKey,
    GoldStep,
    HopFacts,
    Shown,
    answer_matches,
    gold_key,
    label,
    recall,
    shown_keys,
)


def gold_json(
    gold: Sequence[GoldStep],
    hops: Sequence[HopFacts],
    seen: set[GoldKey],
    by_title: bool,
) -> list[dict[str, Any]]:
    """Each gold hop with whether it was shown (and to which sub-agents) and who answered it."""
    per_hop = {h.index: shown_keys(h.shown(), by_title) for h in hops}
    rows = []
    for step in gold:
        key = gold_key(step, by_title)
        rows.append(
            {
                "hop": step.hop,
                "question": step.question,
                "answers": list(step.answers),
                "depends_on": list(step.depends_on),
                "passage_id": step.passage_id,
                "title": step.title,
                "seen": key in seen,
                "seen_by": [i for i, keys in per_hop.items() if key in keys],
                "answered_by": [
                    h.index for h in hops if step.answers and answer_matches(h.answer, step.answers)
                ],
            }
        )
    return rows


def shown_json(items: Iterable[Shown]) -> dict[str, list[Any]]:
    """Evidence items as parallel id and title lists."""
    listed = list(items)
    return {"ids": [i.id for i in listed], "titles": [i.title for i in listed]}


def hop_json(hop: HopFacts, gold: Sequence[GoldStep], by_title: bool) -> dict[str, Any]:
    """One sub-question's facts: its text, links, rounds, answer and its own gold recall."""
    return {
        "index": hop.index,
        "text": hop.text,
        "resolved": hop.resolved,
        "depends_on": list(hop.depends_on),
        "answer": hop.answer,
        "evidence_recall": recall(gold, shown_keys(hop.shown(), by_title), by_title),
        "rounds": [
            {
                "iteration": r.iteration,
                "search": r.search,
                "entities": list(r.entities),
                **shown_json(r.evidence),
                "decision": r.decision,
            }
            for r in hop.rounds
        ],
    }


def agent_attribution(
    correct: bool,
    gold: Sequence[GoldStep],
    hops: Sequence[HopFacts],
    final_answers: Sequence[str],
    by_title: bool = False,
) -> dict[str, Any]:
    """A GRASP line's `attribution`: sub-questions, per-round evidence, gold recall and cause."""
    seen = shown_keys((item for h in hops for item in h.shown()), by_title)
    verdict = label(correct, gold, seen, hops, final_answers, by_title)
    return {
        "cause": verdict.cause if verdict else None,
        "why": verdict.why if verdict else "no gold passages to attribute by",
        "evidence_recall": recall(gold, seen, by_title),
        "matched_by": "title" if by_title else "id",
        "gold": gold_json(gold, hops, seen, by_title),
        "sub_questions": [hop_json(h, gold, by_title) for h in hops],
    }


def passages_attribution(
    correct: bool, gold: Sequence[GoldStep], shown: Sequence[Shown]
) -> dict[str, Any]:
    """A RAG baseline line's `attribution`: the passages shown, gold recall and cause."""
    seen = shown_keys(shown, by_title=False)
    verdict = label(correct, gold, seen, None, ())
    return {
        "cause": verdict.cause if verdict else None,
        "why": verdict.why if verdict else "no gold passages to attribute by",
        "evidence_recall": recall(gold, seen, by_title=False),
        "matched_by": "id",
        "gold": gold_json(gold, [], seen, by_title=False),
        "shown": shown_json(shown),
    }


def kept_retrieval(gold: Sequence[GoldStep], kept: Sequence[Shown]) -> dict[str, Any]:
    """A kept evidence set (PRISM's) scored against the distinct gold supporting passages.

    precision = kept passages that are gold / kept passages (None when nothing was kept);
    recall = gold passages kept / gold passages (None without gold passages).
    """
    wanted = {gold_key(step, by_title=False) for step in gold}
    hits = [item for item in kept if shown_keys([item], by_title=False) & wanted]
    found = shown_keys(kept, by_title=False) & wanted
    return {
        **shown_json(kept),
        "precision": len(hits) / len(kept) if kept else None,
        "recall": len(found) / len(wanted) if wanted else None,
    }
