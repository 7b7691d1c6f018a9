"""Citations picked from what an answer was read from, and verified, without a model call.

A claim (a hop's answer, or the final answer) is cited by the sentence, among the texts its
answering step read, that states it (`states`) and shares the most words with its question
(ties: the passage whose title shares more, then the text read first); that citation is
verified. When no sentence states it (a paraphrase, a yes/no answer) the
sentence sharing the most words with question + answer is cited, unverified. A hop's citation
whose sentence and title name too little of its question is then left out (`on_topic`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from typing_extensions import TypedDict

from nodes.citations.text import content_words, is_yes_no, normalise, overlap, sentences, states

#: What a sub-agent answers when its evidence does not settle the sub-question.
UNANSWERED = frozenset({"", "unknown"})
#: The share of its hop question's content words a citation's sentence and title must name.
#: Chosen on MuSiQue 21-40 (docs/experiments.md): the best precision that kept recall within
#: 0.025 and every supported answer supported.
ON_TOPIC_SHARE = 0.3


class Citation(TypedDict):
    """One source of an answer: the passage, the sentence (or proposition) and who read it.

    `hop` and `round` say which sub-question and which search round of GRASP read it (None for
    the peers' single readers); `verified`: the text states the answer it is cited for.
    """

    passage_id: int
    title: str
    source: str
    text: str
    hop: int | None
    round: int | None
    verified: bool


@dataclass(frozen=True)
class ReadText:
    """A text the answering step read: a passage, or a proposition of one."""

    passage_id: int
    title: str
    source: str
    text: str
    hop: int | None = None
    round: int | None = None


@dataclass(frozen=True)
class Claim:
    """An answer to cite, the question it answers and what it was read from (best first)."""

    question: str
    answer: str
    read: tuple[ReadText, ...]
    hop: int | None = None


def support(claim: Claim) -> Citation | None:
    """The claim's best sentence (see the module), or None when nothing read is related to it."""
    if normalise(claim.answer) in UNANSWERED:
        return None
    query = f"{claim.question} {claim.answer}"
    best: tuple[bool, int, int, int] | None = None
    chosen: tuple[ReadText, str] | None = None
    order = 0
    for item in claim.read:
        titled = overlap(query, item.title)
        for sentence in sentences(item.text):
            order -= 1  # earlier texts and sentences win ties
            key = (states(sentence, claim.answer), overlap(query, sentence), titled, order)
            if best is None or key > best:
                best, chosen = key, (item, sentence)
    if best is None or chosen is None or not (best[0] or best[1]):
        return None
    item, sentence = chosen
    return Citation(
        passage_id=item.passage_id,
        title=item.title,
        source=item.source,
        text=sentence,
        hop=claim.hop if claim.hop is not None else item.hop,
        round=item.round,
        verified=best[0],
    )


def cite_answer(final: Claim, hops: Sequence[Claim] = ()) -> list[Citation]:
    """The citations of an answer: each hop's best sentence, then the final answer's own.

    The final answer adds a citation only when no hop citation states it and a text read
    does, or when nothing else was cited (so an answer with evidence always has a source).
    """
    cited: list[Citation] = []

    def add(citation: Citation | None) -> None:
        if citation is None:
            return
        if any(
            (c["passage_id"], c["text"]) == (citation["passage_id"], citation["text"])
            for c in cited
        ):
            return
        cited.append(citation)

    for hop in hops:
        add(support(hop))
    stated = False
    for citation in cited:
        # A hop may word its answer longer than the final one ("Leyton, East London, England"):
        # a sentence stating the answer the reader sees verifies that answer.
        states_final = states(citation["text"], final.answer)
        citation["verified"] = citation["verified"] or states_final
        stated = stated or states_final
    if not stated:
        own = support(final)
        if own is not None and (own["verified"] or not cited):
            add(own)
    questions = {h.hop: h.question for h in hops if h.hop is not None}
    return _drop_off_topic(cited, questions, final.answer)


def on_topic(citation: Citation, question: str) -> bool:
    """Whether the cited sentence and its title name `ON_TOPIC_SHARE` of `question`'s words."""
    wanted = content_words(question)
    if not wanted:
        return True
    named = wanted & content_words(f"{citation['title']} {citation['text']}")
    return bool(named) and len(named) >= ON_TOPIC_SHARE * len(wanted)


def _drop_off_topic(
    cited: list[Citation], questions: dict[int, str], answer: str
) -> list[Citation]:
    """The citations that name their hop's question, in order.

    A hop that read the wrong passage still cites its best sentence (a side step "Who is the
    oldest person?" cited "Henry FitzRoy (born c."); such a source only misleads. Two
    guards: the first citation stating `answer` stays when no kept one states it (the answer
    keeps its support), and when every citation is off topic all stay.
    """
    keep = [c["hop"] not in questions or on_topic(c, questions[c["hop"]]) for c in cited]
    if not any(keep):
        return cited
    if not any(k and states(c["text"], answer) for c, k in zip(cited, keep, strict=True)):
        first = next((i for i, c in enumerate(cited) if states(c["text"], answer)), None)
        if first is not None:
            keep[first] = True
    return [c for c, k in zip(cited, keep, strict=True) if k]


def answer_supported(answer: str, citations: Sequence[Citation]) -> bool:
    """Whether the citations back the answer: one states it (yes/no: every one is verified)."""
    if is_yes_no(answer):
        return bool(citations) and all(c["verified"] for c in citations)
    return any(states(c["text"], answer) for c in citations)
