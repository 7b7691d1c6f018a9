"""The index graph's run settings: what `grasp index`, the Python API and Studio can set."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from nodes.indexing.extract import LLM_BATCH_SIZE, MAX_PASSAGE_CHARS
from nodes.indexing.extract_spacy import SPACY_BATCH_SIZE
from store.entities import DEFAULT_TYPE_THRESHOLD
from store.entity_graph_links import SYNONYM_THRESHOLD

ExtractorName = Literal["llm", "spacy", "synthetic"]
#: Smallest load that drops the vector indexes and builds them after (see store.vector_indexes).
BULK_LOAD_MIN_PASSAGES = 1000


@dataclass(kw_only=True)
class IndexContext:
    """Indexing settings (LangGraph Studio shows and edits these)."""

    extractor: ExtractorName = field(
        default="llm",
        metadata={
            "description": "llm (joint propositions + entities), spacy (sentences + NER, no tokens) or synthetic (benchmarks)"
        },
    )
    batch_size: int = field(
        default=0,
        metadata={
            "description": "passages per extraction call; 0 = the extractor's default "
            f"(llm {LLM_BATCH_SIZE}, spacy {SPACY_BATCH_SIZE})"
        },
    )
    type_threshold: float = field(
        default=DEFAULT_TYPE_THRESHOLD,
        metadata={"description": "type-embedding cosine needed to merge same-named entities"},
    )
    synonym_threshold: float = field(
        default=SYNONYM_THRESHOLD,
        metadata={"description": "name-embedding cosine from which two entities are synonyms"},
    )
    embed_passages: bool = field(
        default=True,
        metadata={"description": "also embed whole passages (the dense baselines need them)"},
    )
    retry_failed: bool = field(
        default=False, metadata={"description": "extract passages that failed before once more"}
    )
    max_passage_chars: int = field(
        default=MAX_PASSAGE_CHARS,
        metadata={"description": "longer passages are extracted alone, in sentence-aligned pieces"},
    )
    chat_model: str | None = field(
        default=None, metadata={"description": "override GRASP_CHAT_MODEL for the llm extractor"}
    )
    bulk_load_min_passages: int = field(
        default=BULK_LOAD_MIN_PASSAGES,
        metadata={
            "description": "a load of at least this many passages (and at least half as many "
            "as the store held) builds the vector indexes once at the end instead of row by "
            "row; 0 = never"
        },
    )

    def __post_init__(self) -> None:
        """Refuse a synonym threshold that is not a cosine, and a negative batch size."""
        if self.batch_size < 0:
            raise ValueError(
                f"batch_size must be 0 (the default) or positive, got {self.batch_size}"
            )
        if not 0.0 < self.synonym_threshold <= 1.0:
            raise ValueError(f"synonym_threshold must be in (0, 1], got {self.synonym_threshold}")
