"""Focused evidence: a passage cut to the sentences nearest the hop's search, within a budget.

The evaluator reads five passages a round and most of each says nothing about the sub-question;
keeping the sentences that share the most content words with the sub-question and its search
statement (text order kept, gaps marked "…") reads the same facts for fewer prompt tokens.
Token-free: the choice is word overlap, not a model call.
"""

from __future__ import annotations

from collections.abc import Sequence

from nodes.citations.text import content_words, sentences
from store.grasp_retrieval import Evidence
from store.retrieval import PassageText

GAP = " … "


def focused_text(text: str, query: str, budget: int, title: str = "") -> str:
    """`text` cut to its sentences sharing most words with `query`, within `budget` characters.

    Words of the passage's `title` count only to break ties: the reader sees the title anyway,
    and a query naming the subject ("Who is X's godfather?") would otherwise keep the sentence
    that names X most fully over the one holding the fact. The best sentence is always kept (cut
    to the budget if it alone is longer); remaining ties go to the earlier sentence, which in an
    encyclopaedia passage is the one that defines its subject. A text within the budget, or a
    budget of 0, is returned whole.
    """
    if budget <= 0 or len(text) <= budget:
        return text
    parts = sentences(text)
    wanted = content_words(query)
    beyond_title = wanted - content_words(title)
    words = [content_words(part) for part in parts]
    ranked = sorted(
        range(len(parts)),
        key=lambda i: (-len(beyond_title & words[i]), -len(wanted & words[i]), i),
    )
    kept: set[int] = set()
    used = 0
    for i in ranked:
        length = len(parts[i]) + len(GAP)
        if kept and used + length > budget:
            continue
        kept.add(i)
        used += length
    pieces: list[str] = []
    previous = -1
    for i in sorted(kept):
        if pieces and i != previous + 1:
            pieces.append(GAP.strip())
        pieces.append(parts[i])
        previous = i
    if min(kept) > 0:
        pieces.insert(0, GAP.strip())
    if max(kept) < len(parts) - 1:
        pieces.append(GAP.strip())
    joined = " ".join(pieces)
    # Only a lone best sentence longer than the budget overruns it: cut that one.
    return joined if used <= budget else joined[:budget] + "…"


def focus_query(sub_question: str, statement: str, keywords: Sequence[str]) -> str:
    """What a round searched for, as one text: the sentences nearest it are kept."""
    return " ".join([sub_question, statement, *keywords])


def focused_evidence(evidence: Sequence[Evidence], query: str, budget: int) -> list[Evidence]:
    """Each item's text focused on `query` (see `focused_text`); the items unchanged at budget 0."""
    if budget <= 0:
        return list(evidence)
    return [
        Evidence(
            id=item["id"],
            title=item["title"],
            text=focused_text(item["text"], query, budget, item["title"]),
            score=item["score"],
        )
        for item in evidence
    ]


def reader_query(question: str, chain: Sequence[tuple[str, str]]) -> str:
    """What the reader looks for: the question, each hop's sub-question and the answer it found."""
    return " ".join([question, *(part for hop in chain for part in hop)])


def focused_passages(passages: Sequence[PassageText], query: str, budget: int) -> list[PassageText]:
    """The reader's passages focused on `query` (see `focused_text`); unchanged at budget 0."""
    if budget <= 0:
        return list(passages)
    return [
        PassageText(p.id, p.title, focused_text(p.text, query, budget, p.title)) for p in passages
    ]
