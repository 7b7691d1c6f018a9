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

from nodes.citations.text import normalise
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
_ASKS_FOR: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (
        re.compile(r"\bwho(m|se)?\b"),
        frozenset({"person", "organization", "organisation", "group", "company", "band"}),
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


def asked_types(sub_question: str) -> frozenset[str] | None:
    """The entity types the sub-question asks for; None when its words name no type."""
    lowered = sub_question.lower()
    return next((types for pattern, types in _ASKS_FOR if pattern.search(lowered)), None)


def pick_answer(sub_question: str, entities: Sequence[tuple[str, str]]) -> str:
    """The first (name, type) the sub-question does not already name, of an asked type.

    "" when there is none: the evaluator then reads the hop's evidence (replayed on 140
    questions, joining every new name instead lost two more answers; docs/experiments.md).
    """
    asked = set(normalise(sub_question).split())
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
    answer = pick_answer(sub_question, unit.entities) if unit else ""
    return (answer, unit.text) if unit and answer else ("", "")
