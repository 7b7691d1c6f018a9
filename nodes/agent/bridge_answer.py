"""An inner hop's answer read from its evidence without a model call (`inner_hops=bridge`).

An inner hop's answer only fills the `#k` of the hops built on it: the reader, which writes the
final answer, reads passages, not hop answers. So the answer need not be a model's reading; it
is the entity its best unit names that the sub-question does not, of the type its question word
asks for (docs/experiments.md measured the reader's passages and answers either way).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from nodes.citations.text import content_words, normalise
from nodes.deps import NodeServices
from store.unit_entities import best_unit_in_passage

# The entity types each kind of question asks for, first match wins: the spaCy indexer's names,
# and the words an LLM extractor commonly writes for the same kinds.
_PLACES = frozenset(
    [
        "place",
        "location",
        "facility",
        "city",
        "country",
        "state",
        "county",
        "town",
        "region",
        "continent",
        "island",
        "river",
    ]
)
_AGENTS = frozenset({"person", "organization", "organisation", "group", "company", "band"})
_ASKS_FOR: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"\bwho(m|se)?\b"), _AGENTS),
    # "Which band …?" asks for what "who" asks for: spaCy types a band as a person or an
    # organization, so the noun narrows nothing further.
    (
        re.compile(
            r"\b(which|what) (\w+ )?(band|group|company|team|club|organi[sz]ation|label|firm"
            r"|publisher|studio|airline|agency|corporation|person|actor|actress|singer|author"
            r"|writer|player|director|composer|musician|artist|politician|founder|producer)s?\b"
        ),
        _AGENTS,
    ),
    (re.compile(r"\b(when|what year|which year|what date)\b"), frozenset({"date", "time", "year"})),
    (
        re.compile(
            r"^where\b|\b(where|which|what) ?(\w+ )?(country|city|state|county|place|town|region"
            r"|continent|province|nation|island|river)\b"
        ),
        _PLACES,
    ),
    (re.compile(r"\bhow (many|much)\b"), frozenset({"quantity", "money", "percent", "number"})),
)


#: The type "who" asks for last: a unit's other fitting entities go before it.
_LAST_RESORT = "group"

#: Words that introduce another name for what was just named ("Maiden Japan, also known as
#: "Heavy Metal Army", is a live EP by Iron Maiden").
_ALIAS_CUE = re.compile(
    r"\b(also known as|better known as|also called|formerly known as|previously known as"
    r"|known as|a\.k\.a\.?|aka|or simply)\s+(just\s+)?[\"“'(]?$",
    re.IGNORECASE,
)
#: A parenthesis opened right after a name, up to the name being read: the name opens it (after
#: an optional quote) or follows a comma in a list of short names with no digits, so
#: 'Aschenbrödel ("Cinderella")' and 'Izgoy (Изгой, Exile)' give other names, while "(born 1969 in
#: Frankfurt)" and "(born October 24, 1972, Nashville)" give facts. Group 1: the words before it.
_PARENTHESISED_NAME = re.compile(
    r"(\S+(?: \S+){0,5}) \((?:[^()\s,\d]+(?: [^()\s,\d]+){0,2}, )*[\"“]?$"
)
#: A sub-question with one of these words asks for a name itself, an alias included.
_ASKS_FOR_A_NAME = re.compile(r"\b(name|nickname|called|known|alias|title)\b")


def asked_types(sub_question: str) -> frozenset[str] | None:
    """The entity types the sub-question asks for; None when its words name no type."""
    lowered = sub_question.lower()
    return next((types for pattern, types in _ASKS_FOR if pattern.search(lowered)), None)


def alias_of_named(text: str, name: str, question: str) -> bool:
    """Whether `text` introduces `name` as another name of something the question names.

    "The Bubye River, also known as Bubi River, …": Bubi River is the river asked about, so it
    cannot be the answer of a question about that river. So is a name in parentheses right after
    one the question holds: "Aschenbrödel ("Cinderella") is a ballet by …".
    """
    asked = content_words(question)
    start = text.find(name)
    while start != -1:
        window = text[max(0, start - 80) : start]
        cue = _ALIAS_CUE.search(window)
        if cue is not None:
            clause = re.split(r"[.;]", window[: cue.start()])[-1]
            if content_words(clause) & asked:
                return True
        bracketed = _PARENTHESISED_NAME.search(window)
        if bracketed is not None and content_words(bracketed.group(1)) & asked:
            return True
        start = text.find(name, start + 1)
    return False


def pick_answer(sub_question: str, entities: Sequence[tuple[str, str]], text: str = "") -> str:
    """The first (name, type) the sub-question does not already name, of an asked type.

    "" when there is none: the evaluator then reads the hop's evidence (replayed on 140
    questions, joining every new name instead lost two more answers; docs/experiments.md).
    `text`, the unit the entities come from: a name it gives as an alias of a name the
    sub-question holds is not new, unless the sub-question asks for a name.
    """
    asked = set(normalise(sub_question).split())
    if text and not _ASKS_FOR_A_NAME.search(sub_question.lower()):
        entities = [e for e in entities if not alias_of_named(text, e[0], sub_question)]
    types = asked_types(sub_question)
    if types is not None and _LAST_RESORT in types:
        # spaCy's "group" is a nationality or creed ("American"): it answers "who" only when no
        # person or organization in the unit does (a stable sort keeps the text order otherwise).
        entities = sorted(entities, key=lambda entity: entity[1].lower() == _LAST_RESORT)
    return next(
        (
            name
            for name, kind in entities
            if set(normalise(name).split()) - asked and (types is None or kind.lower() in types)
        ),
        "",
    )


async def evidence_answer(
    services: NodeServices,
    *,
    corpus_id: int,
    sub_question: str,
    top_passage: int,
    ranked_units: Sequence[int],
) -> tuple[str, str]:
    """The hop's answer and the text of the unit it was read from ("", "" when none).

    The unit is the best of the search's units in the hop's top passage.
    """
    unit = await asyncio.to_thread(
        best_unit_in_passage, services.engine, corpus_id, top_passage, ranked_units
    )
    answer = pick_answer(sub_question, unit.entities, unit.text) if unit else ""
    return (answer, unit.text) if unit and answer else ("", "")
