"""How well an answer's citations point at the evidence: per question, then averaged per method.

- precision: cited passages that are gold supporting passages / cited passages;
- recall: gold supporting passages cited / gold supporting passages;
- answer support: a correct answer's text stated in one of its cited passages (yes/no answers,
  which no text states, are left out); `answer_in_sentence` asks the stricter question of the
  cited sentences themselves, the text a reader sees highlighted.

Each is averaged over the questions where it is defined (precision needs a citation and gold
passages, recall gold passages, support a correct non-yes/no answer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from nodes.citations.text import is_yes_no, states


def citation_facts(
    prediction: str,
    correct: bool,
    citations: Sequence[Mapping[str, Any]],
    gold: Sequence[int],
    passage_texts: Mapping[int, str] | None = None,
) -> dict[str, Any]:
    """One question's citation record for its result line.

    `passage_texts` holds the cited passages' texts; a passage missing there is judged by its
    cited sentence alone.
    """
    cited = list(dict.fromkeys(int(c["passage_id"]) for c in citations))
    golden = set(gold)
    hits = len(golden.intersection(cited))
    supported: bool | None = None
    in_sentence: bool | None = None
    if correct and not is_yes_no(prediction):
        in_sentence = any(states(str(c["text"]), prediction) for c in citations)
        texts = passage_texts or {}
        supported = in_sentence or any(states(texts.get(p, ""), prediction) for p in cited)
    return {
        "cited": cited,
        "gold": sorted(golden),
        "verified": sum(bool(c.get("verified")) for c in citations),
        "precision": hits / len(cited) if cited and golden else None,
        "recall": hits / len(golden) if golden else None,
        "answer_supported": supported,
        "answer_in_sentence": in_sentence,
    }


@dataclass(frozen=True)
class CitationSummary:
    """A method's citation metrics over its result lines (None where never defined)."""

    n: int
    precision: float | None
    recall: float | None
    answer_support: float | None
    supported_n: int
    cited_per_question: float
    uncited: int

    def as_json(self) -> dict[str, Any]:
        """The averages as JSON-safe data."""
        return asdict(self)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarise_citations(records: Sequence[Mapping[str, Any]]) -> CitationSummary | None:
    """The method's citation metrics (None when no line records citations).

    `uncited` counts the answers with no citation at all.
    """
    facts = [r["citation"] for r in records if isinstance(r.get("citation"), Mapping)]
    if not facts:
        return None
    support = [bool(f["answer_supported"]) for f in facts if f.get("answer_supported") is not None]
    return CitationSummary(
        n=len(facts),
        precision=_mean([float(f["precision"]) for f in facts if f.get("precision") is not None]),
        recall=_mean([float(f["recall"]) for f in facts if f.get("recall") is not None]),
        answer_support=_mean([float(s) for s in support]),
        supported_n=len(support),
        cited_per_question=sum(len(f.get("cited", [])) for f in facts) / len(facts),
        uncited=sum(1 for f in facts if not f.get("cited")),
    )


CITATION_HEADER = ["method", "n", "precision", "recall", "answer support", "cited/q", "uncited"]

CITATION_NOTE = (
    "Citation precision = cited passages that are gold supporting passages / cited passages; "
    "recall = gold passages cited / gold passages; answer support = correct answers (EM) whose "
    "text one of their cited passages states (older lines, without `answer_in_sentence`: a cited sentence), "
    "yes/no answers left out (n in brackets); each "
    "averaged over the questions where it is defined. cited/q = distinct passages cited per "
    "question; uncited = answers without a citation."
)


def citation_row(method: str, summary: CitationSummary) -> list[str]:
    """One method's row of the citations table."""

    def cell(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    return [
        method,
        str(summary.n),
        cell(summary.precision),
        cell(summary.recall),
        f"{cell(summary.answer_support)} ({summary.supported_n})",
        f"{summary.cited_per_question:.1f}",
        str(summary.uncited),
    ]
