"""What a citation shows of the passages (or propositions) an answer was read from: one read each."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Engine, text

from store.driver_rows import fetch_rows, id_list
from store.engine import transaction


@dataclass(frozen=True)
class CitedText:
    """A passage or proposition an answer may cite: its text, its passage and where it came from.

    `source` is the first (by name) of the files the passage was indexed from (a folder's file
    as the folder's path joined with the file's), "" when it was added without one (an eval
    corpus loaded from code, a test's passages).
    """

    id: int
    passage_id: int
    title: str
    text: str
    source: str


# The passage's smallest source name: a passage held by several files names one, always the same.
CITED_PASSAGES = text("""
SELECT p.id, p.id, p.title, p.text, coalesce(min(s.source || coalesce('/' || s.file, '')), '')
FROM passages p LEFT JOIN passage_sources s ON s.passage_id = p.id
WHERE p.corpus_id = :corpus AND p.id = ANY(:ids)
GROUP BY p.id
""")

CITED_PROPOSITIONS = text("""
SELECT u.id, p.id, p.title, u.text, coalesce(min(s.source || coalesce('/' || s.file, '')), '')
FROM propositions u
JOIN passages p ON p.id = u.passage_id
LEFT JOIN passage_sources s ON s.passage_id = p.id
WHERE u.corpus_id = :corpus AND u.id = ANY(:ids)
GROUP BY u.id, p.id
""")


def cited_texts(
    engine: Engine, corpus: int, passages: Sequence[int], propositions: Sequence[int] = ()
) -> tuple[dict[int, CitedText], dict[int, CitedText]]:
    """The corpus's passages and propositions of the given ids, each keyed by its own id.

    Ids of another corpus (or deleted since) are left out.
    """
    found: tuple[dict[int, CitedText], dict[int, CitedText]] = ({}, {})
    with transaction(engine) as session:
        for ids, statement, into in (
            (passages, CITED_PASSAGES, found[0]),
            (propositions, CITED_PROPOSITIONS, found[1]),
        ):
            if not ids:
                continue
            for row in fetch_rows(session, statement, {"corpus": corpus, "ids": id_list(ids)}):
                into[int(row[0])] = CitedText(int(row[0]), int(row[1]), row[2], row[3], row[4])
    return found
