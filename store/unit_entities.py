"""A passage's best unit (proposition) among given ones, with the entities it names."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Engine, text

from store.driver_rows import fetch_rows, id_list
from store.engine import transaction


@dataclass(frozen=True)
class NamedUnit:
    """A unit's text and its entities as (name, type), in the order the text names them."""

    id: int
    text: str
    entities: list[tuple[str, str]]


# The units of `ids` in passage `passage` (of the corpus), each with every entity it links.
UNITS_IN_PASSAGE = text("""
SELECT u.id, u.text, e.name, e.type
FROM propositions u
LEFT JOIN entity_propositions ep ON ep.proposition_id = u.id
LEFT JOIN entities e ON e.id = ep.entity_id
WHERE u.corpus_id = :corpus AND u.passage_id = :passage AND u.id = ANY(:ids)
""")


def best_unit_in_passage(
    engine: Engine, corpus: int, passage: int, ranked_units: Sequence[int]
) -> NamedUnit | None:
    """The first of `ranked_units` (best first) that lies in `passage`; None when none does.

    Its entities come in the order the text names them (one it does not name verbatim last,
    by name), so the pick that reads them is the same on every run.
    """
    with transaction(engine) as session:
        rows = fetch_rows(
            session,
            UNITS_IN_PASSAGE,
            {"corpus": corpus, "passage": passage, "ids": id_list(ranked_units)},
        )
    if not rows:
        return None
    texts = {int(row[0]): row[1] for row in rows}
    best = next(int(u) for u in ranked_units if int(u) in texts)
    body = texts[best]
    named = {(row[2], row[3]) for row in rows if int(row[0]) == best and row[2] is not None}
    order = sorted(named, key=lambda e: (body.find(e[0]) % (len(body) + 1), e[0]))
    return NamedUnit(best, body, order)
