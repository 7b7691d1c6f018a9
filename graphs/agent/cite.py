"""A GRASP turn's citations: each hop's answer and the final answer, cited from what the hops read.

First the page each hop's question names (`named_page_citations`), then the answers' best
sentences (nodes/citations) in what the hops that named no page read, one citation per
passage (a second only for the sentence stating the final answer); a yes/no answer cites its
judged steps' pages instead. A passage a round showed below its first three is not cited
(`near_the_top`). One store read for the texts behind the hops' evidence ids; the picking is
token-free.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping, Sequence

from graphs.agent.hop_reads import HopRead, reading_rounds
from graphs.agent.state import GraspState, SubQuestion
from graphs.runtime.services import Services
from nodes.agent.evaluate import UNKNOWN
from nodes.agent.plan_dag import substitute
from nodes.agent.yes_check import page_name, says_yes, step_pages
from nodes.citations.attribution import (
    UNANSWERED,
    Citation,
    Claim,
    ReadText,
    cite_answer,
    support,
)
from nodes.citations.text import is_yes_no, normalise, states
from store.citation_reads import CitedText, cited_texts
from store.retrieval import PassageText


def hop_texts(
    hop: int,
    read: HopRead,
    passages: Mapping[int, CitedText],
    propositions: Mapping[int, CitedText],
) -> tuple[ReadText, ...]:
    """What hop `hop` read, its answering round first (`reading_rounds`), best first in each."""
    found: list[ReadText] = []
    for rounds in reading_rounds(read):
        texts = passages if rounds["kind"] == "passages" else propositions
        for item_id in rounds["ids"]:
            cited = texts.get(item_id)
            if cited is not None:
                found.append(
                    ReadText(
                        cited.passage_id,
                        cited.title,
                        cited.source,
                        cited.text,
                        hop=hop,
                        round=rounds["round"],
                    )
                )
    return tuple(found)


def turn_claims(
    question: str,
    answer: str,
    sub_questions: Sequence[SubQuestion],
    answers: Mapping[int, str],
    reads: Mapping[int, HopRead],
    passages: Mapping[int, CitedText],
    propositions: Mapping[int, CitedText],
    question_best: CitedText | None = None,
) -> tuple[Claim, list[Claim]]:
    """The final answer's claim and each hop's, with the texts each was read from.

    The final answer may stand in any hop's reading, the last hop's first (it most often
    answers the question), and last in the whole question's best passage, which the reader
    read beside the hops' (no hop and no round found it).
    """
    hops = []
    for sq in sub_questions:
        k = sq["index"]
        read = hop_texts(k, reads[k], passages, propositions) if k in reads else ()
        resolved = substitute(sq["text"], answers)
        hops.append(Claim(resolved, answers.get(k, UNKNOWN), read, hop=k))
    every = tuple(text for hop in reversed(hops) for text in hop.read)
    if question_best is not None:
        q = question_best
        every += (ReadText(q.passage_id, q.title, q.source, q.text),)
    return Claim(question=question, answer=answer, read=every), hops


def pages_read(read: Sequence[ReadText]) -> list[PassageText]:
    """The passages a hop read, once each, their texts read joined (a passage, or its units)."""
    texts: dict[int, list[str]] = {}
    titles: dict[int, str] = {}
    for item in read:
        texts.setdefault(item.passage_id, []).append(item.text)
        titles.setdefault(item.passage_id, item.title)
    return [PassageText(i, titles[i], " ".join(parts)) for i, parts in texts.items()]


def page_citation(hop: Claim, page: int, answer: str) -> Citation | None:
    """The hop's citation for `answer` from passage `page` alone: its sentence nearest the hop."""
    texts = tuple(text for text in hop.read if text.passage_id == page)
    return support(Claim(hop.question, answer, texts, hop=hop.hop))


def step_citations(
    answer: str, sub_questions: Sequence[SubQuestion], hops: Sequence[Claim]
) -> list[Citation]:
    """A yes/no answer's sources: each judged yes/no step's subject page (nodes/agent/yes_check).

    Each is cited by its sentence nearest the step, verified when the page agrees with the
    answer: it states the step's predicate for "yes", it leaves a word of it unsaid for "no".
    """
    if not is_yes_no(answer):
        return []
    by_hop = {h.hop: h for h in hops}
    pages = {k: pages_read(h.read) for k, h in by_hop.items() if k is not None}
    cited: list[Citation] = []
    for step in step_pages(sub_questions, pages):
        citation = page_citation(by_hop[step.hop], step.page.id, answer)
        if citation is not None:
            citation["verified"] = (not step.missing) == says_yes(answer)
            cited.append(citation)
    return cited


def named_page(question: str, read: Sequence[ReadText]) -> PassageText | None:
    """The page read whose name the question holds whole (the longest such name), or None.

    "What is the height of the Pterocarya plant?" names the page Pterocarya, not "Cryptantha
    pterocarya", which it also read.
    """
    asked = question.casefold()
    named = [
        (len(name), page)
        for page in pages_read(read)
        if (name := page_name(page).casefold())
        and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", asked)
    ]
    return max(named, key=lambda found: found[0])[1] if named else None


def named_page_citations(answer: str, hops: Sequence[Claim]) -> list[Citation]:
    """Each hop's source in the page its question names: the page a step asks about.

    Cited by its sentence nearest the hop's question and answer (the final answer for a hop
    left to the reader), verified when that sentence states either answer (as `cite_answer`).
    """
    cited: list[Citation] = []
    for hop in hops:
        page = named_page(hop.question, hop.read)
        if page is None:
            continue
        claimed = answer if normalise(hop.answer) in UNANSWERED else hop.answer
        citation = page_citation(hop, page.id, claimed)
        if citation is not None:
            citation["verified"] = citation["verified"] or states(citation["text"], answer)
            cited.append(citation)
    return cited


def named_first(answer: str, named: Sequence[Citation], rest: Sequence[Citation]) -> list[Citation]:
    """The named-page citations, then `rest`'s citations of the hops that named no page.

    A hop that read the page its question names adds no other sentence: its second source
    was most often a passage beside the point (on the choice lines 21 of 54 such were gold
    pages, docs/experiments.md). The answer keeps its support: when no citation kept states
    `answer`, the first of `rest` that does is added, even from a passage already cited for
    another sentence (the reader is shown the sentence that states the answer).
    """
    naming = {c["hop"] for c in named}
    kept = one_per_passage([*named, *(c for c in rest if c["hop"] not in naming)])
    if not any(states(c["text"], answer) for c in kept):
        stating = next((c for c in rest if states(c["text"], answer)), None)
        if stating is not None:
            kept.append(stating)
    return kept


def one_per_passage(citations: Iterable[Citation]) -> list[Citation]:
    """The citations in order, the first of each passage kept."""
    seen: set[int] = set()
    kept = []
    for citation in citations:
        if citation["passage_id"] not in seen:
            seen.add(citation["passage_id"])
            kept.append(citation)
    return kept


TOP_PLACES = 3
"""A hop's citation must come from the first three passages its round showed (see near_the_top)."""


def near_the_top(citations: Sequence[Citation], hops: Sequence[Claim]) -> list[Citation]:
    """The citations whose passage stood among the first TOP_PLACES of its round; all when none did.

    A hop that answers from the fourth or fifth passage it read has most often read the wrong
    page: on the choice lines such citations were gold 6 times in 20, where those above them
    were gold 268 times in 343 (docs/experiments.md). A citation no hop read (the question's
    best passage) is kept.
    """
    places: dict[tuple[int | None, int | None], list[int]] = {}
    for hop in hops:
        for text in hop.read:
            shown = places.setdefault((hop.hop, text.round), [])
            if text.passage_id not in shown:
                shown.append(text.passage_id)

    def place(citation: Citation) -> int:
        shown = places.get((citation["hop"], citation["round"]), [])
        pid = citation["passage_id"]
        return shown.index(pid) if pid in shown else 0

    kept = [citation for citation in citations if place(citation) < TOP_PLACES]
    return kept or list(citations)


def pick_citations(
    answer: str, sub_questions: Sequence[SubQuestion], final: Claim, hops: Sequence[Claim]
) -> list[Citation]:
    """The answer's citations from the turn's claims, in the order the module gives."""
    return near_the_top(
        step_citations(answer, sub_questions, hops)
        or named_first(answer, named_page_citations(answer, hops), cite_answer(final, hops)),
        hops,
    )


async def turn_citations(
    services: Services, state: GraspState, answer: str, question_best: int | None = None
) -> list[Citation]:
    """The citations of the turn's final answer `answer` (none when the hops read nothing).

    `question_best`: the whole question's best passage, when the reader read it too.
    """
    reads = {int(k): v for k, v in state.get("hop_reads", {}).items()}
    corpus = state.get("corpus_id")
    if corpus is None or not reads:
        return []
    ids: dict[str, set[int]] = {"passages": set(), "propositions": set()}
    for read in reads.values():
        for rounds in read.get("rounds", []):
            ids[rounds["kind"]].update(rounds["ids"])
    if question_best is not None:
        ids["passages"].add(question_best)
    passages, propositions = await asyncio.to_thread(
        cited_texts, services.engine, corpus, sorted(ids["passages"]), sorted(ids["propositions"])
    )
    answers = {int(k): v for k, v in state.get("answers", {}).items()}
    sub_questions = state.get("sub_questions", [])
    final, hops = turn_claims(
        state["question"],
        answer,
        sub_questions,
        answers,
        reads,
        passages,
        propositions,
        passages.get(question_best) if question_best is not None else None,
    )
    return pick_citations(answer, sub_questions, final, hops)
