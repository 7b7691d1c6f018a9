"""Aggregating per-question QA records into the summary: overall and by hop count."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from evals.attribution import CAUSES
from evals.metrics import success_economy

ALL = "all"
UNATTRIBUTED = "n/a"


@dataclass(frozen=True)
class GroupSummary:
    """The metrics of one group of questions (None where a metric was not measured)."""

    group: str
    n: int
    em: float
    f1: float
    judge: float | None
    judge_lenient: float | None
    tokens: int
    tokens_per_question: float
    indexing_per_question: float
    total_per_question: float
    calls_per_question: float
    wall_s_per_question: float
    success_economy: float | None
    #: Questions whose search the token budget (max_tokens) ended.
    budget_stopped: int = 0
    #: LLM calls a question replayed from the cache (their time is not in the wall seconds);
    #: None when a line predates the count.
    cached_calls_per_question: float | None = None

    def as_json(self) -> dict[str, Any]:
        """JSON-safe: an infinite SE (nothing solved) becomes the string "inf"."""
        data = asdict(self)
        if data["success_economy"] is not None and math.isinf(data["success_economy"]):
            data["success_economy"] = "inf"
        return data


def hop_group(record: Mapping[str, Any]) -> str | None:
    """The record's hop group ("2hop", …) or None when its dataset has no hop count."""
    hops = record.get("hops")
    return f"{hops}hop" if isinstance(hops, int) else None


def is_correct(record: Mapping[str, Any]) -> int:
    """correct_i of success economy: the strict judge's verdict, or EM where no judge ran."""
    verdict = record.get("judge_strict")
    if verdict is None:
        return int(record["em"] == 1.0)
    return int(bool(verdict))


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _fraction(values: Sequence[bool | None]) -> float | None:
    # A judge metric is reported only when every question of the group was judged.
    if not values or any(v is None for v in values):
        return None
    return sum(bool(v) for v in values) / len(values)


def summarise_group(
    group: str, records: Sequence[Mapping[str, Any]], probabilities: Mapping[str, float] | None
) -> GroupSummary:
    """Metrics of one group; SE only when p_i is known for every question in it."""
    n = len(records)
    tokens = [int(r["tokens"]) for r in records]
    se: float | None = None
    if probabilities is not None and n and all(str(r["id"]) in probabilities for r in records):
        se = success_economy(
            tokens,
            [is_correct(r) for r in records],
            [probabilities[str(r["id"])] for r in records],
        )
    return GroupSummary(
        group=group,
        n=n,
        em=_mean([float(r["em"]) for r in records]),
        f1=_mean([float(r["f1"]) for r in records]),
        judge=_fraction([r.get("judge_strict") for r in records]),
        judge_lenient=_fraction([r.get("judge_lenient") for r in records]),
        tokens=sum(tokens),
        tokens_per_question=_mean([float(t) for t in tokens]),
        indexing_per_question=_mean([float(r.get("indexing_tokens", 0.0)) for r in records]),
        total_per_question=_mean([float(r["total_tokens"]) for r in records]),
        calls_per_question=_mean([float(r.get("calls", 0)) for r in records]),
        wall_s_per_question=_mean([float(r.get("wall_s", 0.0)) for r in records]),
        success_economy=se,
        budget_stopped=sum(1 for r in records if r.get("budget_stopped")),
        cached_calls_per_question=_mean([float(r["cached_calls"]) for r in records])
        if records and all("cached_calls" in r for r in records)
        else None,
    )


def summarise(
    records: Sequence[Mapping[str, Any]], probabilities: Mapping[str, float] | None = None
) -> list[GroupSummary]:
    """The overall summary first, then one per hop count present (in hop order)."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        group = hop_group(record)
        if group is not None:
            groups.setdefault(group, []).append(record)
    ordered = sorted(groups, key=lambda g: int(g.removesuffix("hop")))
    return [
        summarise_group(ALL, records, probabilities),
        *(summarise_group(g, groups[g], probabilities) for g in ordered),
    ]


@dataclass(frozen=True)
class CauseSummary:
    """How one method's attributed questions split over the failure causes."""

    n: int
    counts: dict[str, int]
    evidence_recall: float | None

    def share(self, cause: str) -> float:
        """The cause's share of the attributed questions."""
        return self.counts[cause] / self.n if self.n else 0.0

    def as_json(self) -> dict[str, Any]:
        """Counts, shares and mean evidence recall as JSON-safe data."""
        return {
            "n": self.n,
            "counts": dict(self.counts),
            "shares": {cause: self.share(cause) for cause in self.counts},
            "evidence_recall": self.evidence_recall,
        }


def summarise_causes(records: Sequence[Mapping[str, Any]]) -> CauseSummary | None:
    """Cause counts over the lines that carry an attribution (None when none does).

    Every cause is listed, in CAUSES order, then UNATTRIBUTED for lines the attribution could
    not label (a wrong answer without gold passages).
    """
    attributions = [r["attribution"] for r in records if isinstance(r.get("attribution"), dict)]
    if not attributions:
        return None
    counts = dict.fromkeys([*CAUSES, UNATTRIBUTED], 0)
    for attribution in attributions:
        cause = attribution.get("cause")
        counts[cause if cause in counts else UNATTRIBUTED] += 1
    recalls = [
        float(a["evidence_recall"]) for a in attributions if a.get("evidence_recall") is not None
    ]
    return CauseSummary(len(attributions), counts, _mean(recalls) if recalls else None)


@dataclass(frozen=True)
class KeptSummary:
    """Retrieval precision and recall of a method's kept evidence sets (PRISM's), averaged."""

    n: int
    precision: float | None
    recall: float | None
    kept_per_question: float

    def as_json(self) -> dict[str, Any]:
        """The averages as JSON-safe data."""
        return asdict(self)


def summarise_kept(records: Sequence[Mapping[str, Any]]) -> KeptSummary | None:
    """Mean precision and recall over the lines that carry a kept set (None when none does).

    Each mean is over the lines where it is defined: precision needs a non-empty kept set,
    recall a question with gold passages.
    """
    kept = [r["kept"] for r in records if isinstance(r.get("kept"), dict)]
    if not kept:
        return None
    precisions = [float(k["precision"]) for k in kept if k.get("precision") is not None]
    recalls = [float(k["recall"]) for k in kept if k.get("recall") is not None]
    return KeptSummary(
        n=len(kept),
        precision=_mean(precisions) if precisions else None,
        recall=_mean(recalls) if recalls else None,
        kept_per_question=_mean([float(len(k.get("ids", []))) for k in kept]),
    )


def format_number(value: float | None, digits: int = 3) -> str:
    """A table cell: n/a for an unmeasured metric, ∞ for an infinite SE, else rounded."""
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "∞"
    if digits == 0:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"
