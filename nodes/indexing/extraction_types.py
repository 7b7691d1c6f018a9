"""What every extractor returns: per passage, propositions and typed entities, or a failure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class PassageInput:
    """A stored passage handed to an extractor."""

    id: int
    title: str
    text: str


@dataclass(frozen=True)
class EntityMention:
    """A named entity with a short type and the 0-based indices of its propositions."""

    name: str
    type: str
    propositions: tuple[int, ...]


@dataclass(frozen=True)
class Extraction:
    """Propositions and entities of one passage; `embed_texts` (if set) is what gets embedded."""

    passage_id: int
    propositions: tuple[str, ...]
    entities: tuple[EntityMention, ...]
    embed_texts: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ExtractionFailed:
    """A passage that could not be extracted; `retryable` failures stay pending for a re-run."""

    passage_id: int
    error: str
    raw_output: str | None = None
    retryable: bool = False


@dataclass
class BatchOutcome:
    """Results of one batch plus the tokens its calls used."""

    extractions: list[Extraction] = field(default_factory=list)
    failures: list[ExtractionFailed] = field(default_factory=list)
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class Extractor(Protocol):
    """Turns a batch of passages into extractions; must not raise for bad model output."""

    name: str
    default_batch_size: int

    async def extract(self, passages: Sequence[PassageInput], corpus_id: int) -> BatchOutcome:
        """Extract every passage of the batch (failures are reported, not raised)."""
        ...
