"""A fast scripted extractor for benchmarks: sentences become propositions, capitalised words entities.

It costs no model call, so `grasp bench index` measures everything but the LLM.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from nodes.indexing.extraction_types import (
    BatchOutcome,
    EntityMention,
    Extraction,
    ExtractionFailed,
    PassageInput,
)


def extract_one(passage: PassageInput) -> Extraction:
    """Split on sentence ends; every capitalised token is an entity of its sentences."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", passage.text) if s.strip()]
    mentions: dict[str, set[int]] = {}
    for index, sentence in enumerate(sentences):
        for token in re.findall(r"\b[A-Z][a-z]+\b", sentence):
            mentions.setdefault(token, set()).add(index)
    entities = tuple(
        EntityMention(name, "thing", tuple(sorted(idx))) for name, idx in sorted(mentions.items())
    )
    return Extraction(passage.id, tuple(sentences), entities)


@dataclass
class SyntheticExtractor:
    """Instant, deterministic, no tokens."""

    name: str = "synthetic"
    default_batch_size: int = 64

    async def extract(self, passages: Sequence[PassageInput], corpus_id: int) -> BatchOutcome:
        """Extract every non-empty passage at once; empty ones fail, as with the other extractors."""
        return BatchOutcome(
            extractions=[extract_one(p) for p in passages if p.text.strip()],
            failures=[
                ExtractionFailed(p.id, "empty passage: nothing to extract")
                for p in passages
                if not p.text.strip()
            ],
        )
