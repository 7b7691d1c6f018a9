"""QA and retrieval metrics: EM, token F1, closed-book probability, success economy, recall."""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Collection, Hashable, Sequence

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD/MuSiQue normalisation: lower-case, drop punctuation and articles, collapse spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _gold_list(golds: Sequence[str]) -> list[str]:
    # A bare string is a Sequence[str] too; iterating it would score against single letters.
    gold_list = [golds] if isinstance(golds, str) else list(golds)
    if not gold_list:
        raise ValueError("at least one gold answer is needed")
    return gold_list


def exact_match(prediction: str, golds: Sequence[str]) -> float:
    """1.0 if the normalised prediction equals any normalised gold answer or alias, else 0.0."""
    predicted = normalize_answer(prediction)
    return max(float(predicted == normalize_answer(gold)) for gold in _gold_list(golds))


def _f1(prediction: str, gold: str) -> float:
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(gold).split()
    if not predicted or not expected:
        # As in the official MuSiQue/SQuAD v2 scripts: two empty answers agree fully.
        return float(predicted == expected)
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision = common / len(predicted)
    recall = common / len(expected)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, golds: Sequence[str]) -> float:
    """SQuAD token-level F1 of the prediction, maximised over the gold answer and its aliases."""
    return max(_f1(prediction, gold) for gold in _gold_list(golds))


def closed_book_probability(correct: int, samples: int) -> float:
    """Add-one smoothed probability (c + 1) / (n + 2) that the base model answers closed-book."""
    if samples < 0 or not 0 <= correct <= samples:
        raise ValueError(f"need 0 <= correct <= samples, got correct={correct}, samples={samples}")
    return (correct + 1) / (samples + 2)


def success_economy(
    tokens: Sequence[int],
    correct: Sequence[int | bool],
    probabilities: Sequence[float],
) -> float:
    """Tokens per bit of surprise solved: sum(T_i) / sum(correct_i * -log2 p_i); lower wins."""
    if not len(tokens) == len(correct) == len(probabilities):
        raise ValueError(
            "tokens, correct and probabilities must have the same length, got "
            f"{len(tokens)}, {len(correct)}, {len(probabilities)}"
        )
    bits = 0.0
    for is_correct, p in zip(correct, probabilities, strict=True):
        if not 0.0 < p <= 1.0:
            raise ValueError(f"probabilities must lie in (0, 1], got {p}")
        if is_correct not in (0, 1):
            raise ValueError(f"correct values must be 0 or 1, got {is_correct}")
        bits += int(is_correct) * -math.log2(p)
    if bits == 0.0:
        # Nothing solved that the base model could not already answer: no bits earned.
        return math.inf
    return sum(tokens) / bits


def recall_at_k(retrieved: Sequence[Hashable], gold: Collection[Hashable], k: int) -> float:
    """Fraction of the gold passages found among the first k retrieved: |top-k ∩ gold| / |gold|."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("recall is undefined without gold passages")
    return len(set(retrieved[:k]) & gold_set) / len(gold_set)


def precision(retrieved: Sequence[Hashable], gold: Collection[Hashable]) -> float:
    """Fraction of the distinct retrieved passages that are gold; 0.0 when nothing is retrieved."""
    retrieved_set = set(retrieved)
    if not retrieved_set:
        return 0.0
    return len(retrieved_set & set(gold)) / len(retrieved_set)
