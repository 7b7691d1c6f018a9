"""Entity de-duplication: equal canonical names AND type embeddings at least `threshold` alike."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

DEFAULT_TYPE_THRESHOLD = 0.80


def canonical_name(name: str) -> str:
    """Case-fold, strip accents' compatibility forms, drop punctuation, collapse whitespace."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    no_punct = re.sub(r"[^\w\s]", " ", folded)
    return re.sub(r"\s+", " ", no_punct).strip()


@dataclass(frozen=True)
class EntityCandidate:
    """An existing entity that a new mention could merge into."""

    id: int
    canonical_name: str
    type_embedding: npt.NDArray[np.float32] | None


def choose_match(
    canonical: str,
    type_embedding: npt.NDArray[np.float32] | None,
    candidates: Sequence[EntityCandidate],
    threshold: float = DEFAULT_TYPE_THRESHOLD,
) -> int | None:
    """Return the id of the candidate to merge into, or None to create a new entity.

    Among candidates with the same canonical name, the one whose type embedding is most similar
    wins if that cosine reaches `threshold`; without type embeddings only the names decide.
    """
    best_id: int | None = None
    best = -2.0
    for candidate in candidates:
        if candidate.canonical_name != canonical:
            continue
        if type_embedding is None or candidate.type_embedding is None:
            similarity = 1.0
        else:
            similarity = float(np.dot(type_embedding, candidate.type_embedding))
        if similarity >= threshold and similarity > best:
            best_id, best = candidate.id, similarity
    return best_id
