"""An answer's sources as the CLI prints them: numbered, with the sentence that supports each."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: The longest supporting sentence printed whole.
SENTENCE_CHARS = 200


def markers(citations: Sequence[Mapping[str, Any]]) -> str:
    """' [1] [2]' after an answer: one mark per source (empty when there is none)."""
    return "".join(f" [{n}]" for n in range(1, len(citations) + 1))


def where(citation: Mapping[str, Any]) -> str:
    """'passage 12, hop 2, round 1' — what found the cited text."""
    parts = [f"passage {citation['passage_id']}"]
    if citation.get("hop") is not None:
        parts.append(f"hop {citation['hop']}")
    if citation.get("round") is not None:
        parts.append(f"round {citation['round']}")
    return ", ".join(parts)


def source_lines(citations: Sequence[Mapping[str, Any]] | None) -> list[str]:
    """The numbered sources, each with its supporting sentence; a warning when none is verified.

    None (a run from before citations) prints nothing; an empty list says no evidence was read.
    """
    if citations is None:
        return []
    if not citations:
        return ["sources: none (no evidence was read)"]
    lines = ["sources:"]
    for n, c in enumerate(citations, start=1):
        origin = f" · {c['source']}" if c.get("source") else ""
        check = "" if c.get("verified") else " · unverified"
        text = " ".join(str(c["text"]).split())
        if len(text) > SENTENCE_CHARS:
            text = text[: SENTENCE_CHARS - 1] + "…"
        lines.append(f"  [{n}] {c['title']}{origin} ({where(c)}){check}")
        lines.append(f"      “{text}”")
    if not any(c.get("verified") for c in citations):
        lines.append("  no source states the answer: check it before you rely on it")
    return lines
