"""The pieces prompts are built from: passages, evidence, notes, findings and earlier answers.

One home for them, so the agent and the peers show the model the same thing the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from store.grasp_retrieval import Evidence
from store.retrieval import PassageText


def cut(text: str, limit: int) -> str:
    """`text` cut to `limit` characters (0: no cut); an ellipsis marks the cut."""
    return text if limit <= 0 or len(text) <= limit else text[: limit - 1].rstrip() + "…"


def passages_block(passages: Sequence[PassageText], max_chars: int = 0) -> str:
    """Numbered passages, title then text on its own line, each cut to `max_chars`."""
    if not passages:
        return "(no passages were found)"
    return "\n\n".join(
        f"[{n}] {p.title}\n{cut(p.text, max_chars)}" for n, p in enumerate(passages, start=1)
    )


def evidence_block(evidence: Sequence[Evidence], max_chars: int) -> str:
    """Numbered evidence, `[n] title: text`, each cut to `max_chars`; a line when there is none."""
    if not evidence:
        return "(nothing new was found)"
    return "\n".join(
        f"[{n}] {item['title']}: {cut(item['text'], max_chars)}"
        if item["title"]
        else f"[{n}] {cut(item['text'], max_chars)}"
        for n, item in enumerate(evidence, start=1)
    )


def notes_block(notes: Sequence[str], heading: str = "Notes so far:", gap: str = "") -> str:
    """The notes under `heading`, one bullet each, then `gap`; nothing when there are none."""
    if not notes:
        return ""
    return f"{heading}\n" + "".join(f"- {note}\n" for note in notes) + gap


def known_answers(dependencies: Sequence[tuple[str, str]]) -> str:
    """The answered sub-questions a step builds on, as prompt lines ("" when none)."""
    if not dependencies:
        return ""
    lines = "".join(f"- {question} → {answer}\n" for question, answer in dependencies)
    return f"Answers found so far:\n{lines}"


def findings_block(chain: Sequence[tuple[str, str]]) -> str:
    """The ordered (sub-question, answer) chain, one numbered line each."""
    return "\n".join(
        f"{n}. {question} → {answer}" for n, (question, answer) in enumerate(chain, start=1)
    )
