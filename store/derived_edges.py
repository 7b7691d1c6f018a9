"""Removal of the graph layer's derived edges, which no foreign key cascades to (store/models.py).

Called in the deleting transaction, before the units, passages or corpus the edges hang on go:
each statement finds its rows through an index from the rows being removed, never by a scan.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

# A passage's units are found by ix_propositions_passage; their rows by each table's index on
# the unit (or passage) id.
DELETE_PASSAGE_COOCCURRENCES = text("""
DELETE FROM entity_cooccurrences c USING propositions u
WHERE u.corpus_id = :corpus AND u.passage_id = ANY(:ids) AND c.proposition_id = u.id
""")
DELETE_PASSAGE_CONTAINMENT = text("""
DELETE FROM entity_passages WHERE corpus_id = :corpus AND passage_id = ANY(:ids)
""")
DELETE_PASSAGE_UNIT_EDGES = text("""
DELETE FROM entity_propositions ep USING propositions u
WHERE u.corpus_id = :corpus AND u.passage_id = ANY(:ids) AND ep.proposition_id = u.id
""")

DELETE_CORPUS_COOCCURRENCES = text("DELETE FROM entity_cooccurrences WHERE corpus_id = :corpus")
DELETE_CORPUS_CONTAINMENT = text("DELETE FROM entity_passages WHERE corpus_id = :corpus")
# The edge table has no corpus column: its rows are found from the corpus's entities (the key's
# first column).
DELETE_CORPUS_UNIT_EDGES = text("""
DELETE FROM entity_propositions ep USING entities e
WHERE e.corpus_id = :corpus AND ep.entity_id = e.id
""")


def remove_passage_edges(session: Session, corpus: int, passages: Sequence[int]) -> None:
    """Remove the derived edges of `passages` and their units; call before deleting the rows."""
    if passages:
        given = {"corpus": corpus, "ids": list(passages)}
        for statement in (
            DELETE_PASSAGE_COOCCURRENCES,
            DELETE_PASSAGE_CONTAINMENT,
            DELETE_PASSAGE_UNIT_EDGES,
        ):
            session.execute(statement, given)


def remove_corpus_edges(session: Session, corpus: int) -> None:
    """Remove every derived edge of the corpus; call before deleting its entities."""
    for statement in (
        DELETE_CORPUS_COOCCURRENCES,
        DELETE_CORPUS_CONTAINMENT,
        DELETE_CORPUS_UNIT_EDGES,
    ):
        session.execute(statement, {"corpus": corpus})
