"""Joint LLM extraction: one call per batch returns propositions and typed entities per passage.

A malformed batch is asked again once (the client shows the model its error), then split into
single passages; a passage that still fails is reported with the raw output, and indexing goes on.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from nodes.indexing.extraction_types import (
    BatchOutcome,
    EntityMention,
    Extraction,
    ExtractionFailed,
    PassageInput,
)
from nodes.llm.client import CallTag, LlmCallError, LlmClient, MalformedOutput, system_and_user

EXTRACTION_SYSTEM = """You build a search index from encyclopedia passages.
For every passage you are given, write:
1. "propositions": the passage's content as a list of short, standalone factual statements.
   Each statement carries one fact and must make sense on its own: use full names instead of
   pronouns or partial names (the passage title is usually the subject), and keep dates,
   numbers and qualifiers.
2. "entities": the named things the statements mention (people, places, organisations,
   works, events, dates, ...). Give each as [name, short type, [indices of the statements
   that mention it, counting from 0]].
Reply with JSON only, shaped like this example:
{"passages": [{"id": 1, "propositions": ["Ada Lovelace was an English mathematician.",
 "Ada Lovelace wrote the first published algorithm in 1843."],
 "entities": [["Ada Lovelace", "person", [0, 1]], ["1843", "year", [1]]]}]}"""


#: Most propositions (and entities) one passage may yield; encyclopedia paragraphs give 3–15.
MAX_ITEMS = 30
#: Passages per extraction call: five replies fit the local model's output cap.
LLM_BATCH_SIZE = 5
#: Longer passages are extracted alone, in sentence-aligned pieces of at most this many characters.
MAX_PASSAGE_CHARS = 6000


class PassageJson(BaseModel):
    """One passage of the model's reply."""

    model_config = ConfigDict(extra="ignore")

    id: int
    propositions: list[str] = Field(min_length=1)
    entities: list[tuple[str, str, list[int]]] = Field(default_factory=list)


class ExtractionJson(BaseModel):
    """The whole reply."""

    model_config = ConfigDict(extra="ignore")

    passages: list[PassageJson]


def render_batch(passages: Sequence[PassageInput]) -> str:
    """The user message: numbered passages with their titles."""
    blocks = [
        f"Passage {number}\nTitle: {p.title}\n{p.text}" for number, p in enumerate(passages, 1)
    ]
    return "\n\n".join(blocks) + f"\n\nReturn exactly {len(passages)} passage object(s)."


def output_schema(passages: int) -> dict[str, Any]:
    """JSON schema of a reply for exactly `passages` passages (a grammar where the model allows)."""
    entity: dict[str, Any] = {
        "type": "array",
        "prefixItems": [
            {"type": "string"},
            {"type": "string"},
            {"type": "array", "items": {"type": "integer"}},
        ],
        "minItems": 3,
        "maxItems": 3,
    }
    item: dict[str, Any] = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            # Upper bounds stop a small model that starts repeating itself from running to
            # max_tokens (seen with Qwen-1.5B on long passages).
            "propositions": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "maxItems": MAX_ITEMS,
            },
            "entities": {"type": "array", "items": entity, "maxItems": MAX_ITEMS},
        },
        "required": ["id", "propositions", "entities"],
    }
    numbered = [
        {**item, "properties": {**item["properties"], "id": {"const": number}}}
        for number in range(1, passages + 1)
    ]
    return {
        "type": "object",
        "properties": {
            "passages": {
                "type": "array",
                "prefixItems": numbered,
                "minItems": passages,
                "maxItems": passages,
            }
        },
        "required": ["passages"],
    }


def validator(expected: int) -> Callable[[ExtractionJson], None]:
    """Check the reply covers passages 1..expected once each, with in-range indices."""

    def check(reply: ExtractionJson) -> None:
        ids = sorted(p.id for p in reply.passages)
        if ids != list(range(1, expected + 1)):
            raise ValueError(f"expected passage ids 1..{expected}, got {ids}")
        for passage in reply.passages:
            if any(not s.strip() for s in passage.propositions):
                raise ValueError(f"passage {passage.id} has an empty proposition")
            linked = [
                i
                for _, _, indices in passage.entities
                for i in indices
                if 0 <= i < len(passage.propositions)
            ]
            if passage.entities and not linked:
                raise ValueError(f"passage {passage.id}: no entity points at an existing statement")

    return check


def to_extraction(passage: PassageInput, reply: PassageJson) -> Extraction:
    """Convert one validated passage reply; entities without a name are dropped."""
    # A stray index (a statement the model did not write) loses one edge, not the passage.
    count = len(reply.propositions)
    entities = tuple(
        EntityMention(
            name.strip(),
            (kind or "thing").strip(),
            tuple(sorted({i for i in indices if 0 <= i < count})),
        )
        for name, kind, indices in reply.entities
        if name.strip() and any(0 <= i < count for i in indices)
    )
    propositions = tuple(s.strip() for s in reply.propositions)
    return Extraction(passage.id, propositions, entities)


def split_long_text(text: str, max_chars: int) -> list[str]:
    """Cut an oversized passage at sentence ends into pieces of at most `max_chars`."""
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    pieces: list[str] = []
    current = ""
    for sentence in sentences:
        while len(sentence) > max_chars:  # one giant "sentence": hard cut
            pieces.append(sentence[:max_chars])
            sentence = sentence[max_chars:]
        if current and len(current) + 1 + len(sentence) > max_chars:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        pieces.append(current)
    return pieces


def merge_pieces(passage_id: int, parts: Sequence[Extraction]) -> Extraction:
    """Join the extractions of an oversized passage's pieces, shifting proposition indices."""
    propositions: list[str] = []
    entities: list[EntityMention] = []
    for part in parts:
        offset = len(propositions)
        propositions.extend(part.propositions)
        entities.extend(
            EntityMention(e.name, e.type, tuple(i + offset for i in e.propositions))
            for e in part.entities
        )
    return Extraction(passage_id, tuple(propositions), tuple(entities))


@dataclass
class LlmExtractor:
    """The paper's extractor: propositions + typed entities in one call per batch."""

    llm: LlmClient
    name: str = "llm"
    default_batch_size: int = LLM_BATCH_SIZE
    max_passage_chars: int = MAX_PASSAGE_CHARS

    async def extract(self, passages: Sequence[PassageInput], corpus_id: int) -> BatchOutcome:
        """Extract the batch in one call; empty passages fail, oversized ones go piece by piece."""
        outcome = BatchOutcome()
        normal: list[PassageInput] = []
        for passage in passages:
            if not passage.text.strip():
                outcome.failures.append(
                    ExtractionFailed(passage.id, "empty passage: nothing to extract")
                )
            elif len(passage.text) > self.max_passage_chars:
                await self._extract_oversized(passage, corpus_id, outcome)
            else:
                normal.append(passage)
        if normal:
            await self._extract_group(normal, corpus_id, outcome)
        return outcome

    async def _extract_group(
        self, passages: Sequence[PassageInput], corpus_id: int, outcome: BatchOutcome
    ) -> None:
        messages = system_and_user(EXTRACTION_SYSTEM, render_batch(passages))
        try:
            reply, results = await self.llm.complete_json(
                messages,
                ExtractionJson,
                CallTag(node="extract", corpus_id=corpus_id),
                validate=validator(len(passages)),
                json_schema=output_schema(len(passages)),
            )
        except MalformedOutput as exc:
            for result in exc.results:
                outcome.llm_calls += 1
                outcome.input_tokens += result.input_tokens
                outcome.output_tokens += result.output_tokens
            if len(passages) == 1:
                outcome.failures.append(
                    ExtractionFailed(passages[0].id, f"malformed model output: {exc}", exc.raw)
                )
                return
            # The batch as a whole confused the model; each passage gets its own chance.
            await asyncio.gather(*(self._extract_group([p], corpus_id, outcome) for p in passages))
            return
        except LlmCallError as exc:
            outcome.failures.extend(
                ExtractionFailed(p.id, str(exc), None, retryable=True) for p in passages
            )
            return
        for result in results:
            outcome.llm_calls += 1
            outcome.input_tokens += result.input_tokens
            outcome.output_tokens += result.output_tokens
        by_id = {p.id: p for p in reply.passages}
        outcome.extractions.extend(
            to_extraction(passage, by_id[number]) for number, passage in enumerate(passages, 1)
        )

    async def _extract_oversized(
        self, passage: PassageInput, corpus_id: int, outcome: BatchOutcome
    ) -> None:
        pieces = split_long_text(passage.text, self.max_passage_chars)
        sub = BatchOutcome()
        fake_ids = [PassageInput(i, passage.title, piece) for i, piece in enumerate(pieces)]
        for piece in fake_ids:
            await self._extract_group([piece], corpus_id, sub)
        outcome.llm_calls += sub.llm_calls
        outcome.input_tokens += sub.input_tokens
        outcome.output_tokens += sub.output_tokens
        if sub.failures:
            first = sub.failures[0]
            outcome.failures.append(
                ExtractionFailed(
                    passage.id,
                    f"oversized passage ({len(passage.text)} chars, {len(pieces)} pieces): "
                    f"piece {first.passage_id + 1} failed: {first.error}",
                    first.raw_output,
                    first.retryable,
                )
            )
            return
        ordered = sorted(sub.extractions, key=lambda e: e.passage_id)
        outcome.extractions.append(merge_pieces(passage.id, ordered))
