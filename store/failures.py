"""Extraction failures: a passage marked failed keeps its error and the model's raw output."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, delete, select, update

from store.engine import transaction
from store.models import ExtractionFailure, Passage
from store.passage_writes import storable


def record_failure(
    engine: Engine, corpus: int, passage_id: int, error: str, raw_output: str | None
) -> None:
    """Mark a passage failed, keeping the model's raw output so nothing is lost.

    A passage deleted while it was being extracted stays deleted: nothing is recorded for it.
    """
    with transaction(engine) as session:
        marked = session.execute(
            update(Passage)
            .where(Passage.id == passage_id, Passage.corpus_id == corpus)
            .values(status="failed")
            .returning(Passage.id)
        ).scalar()
        if marked is not None:
            session.add(
                ExtractionFailure(
                    corpus_id=corpus,
                    passage_id=passage_id,
                    error=storable(error),
                    raw_output=None if raw_output is None else storable(raw_output),
                )
            )


def reset_failures(engine: Engine, corpus: int, passage_ids: Sequence[int]) -> int:
    """Make failed passages pending again and drop their failure rows (before a retry).

    A retried passage then has at most its latest failure recorded, or none once it succeeds.
    Returns how many passages were reset.
    """
    if not passage_ids:
        return 0
    wanted = list(set(passage_ids))
    with transaction(engine) as session:
        session.execute(
            delete(ExtractionFailure).where(
                ExtractionFailure.corpus_id == corpus, ExtractionFailure.passage_id.in_(wanted)
            )
        )
        reset = session.execute(
            update(Passage)
            .where(Passage.corpus_id == corpus, Passage.id.in_(wanted), Passage.status == "failed")
            .values(status="pending")
            .returning(Passage.id)
        ).all()
    return len(reset)


@dataclass(frozen=True)
class FailureRow:
    """One recorded failure of a passage, for `grasp corpus failures`."""

    passage_id: int
    title: str
    error: str
    raw_output: str | None
    created_at: datetime


def list_failures(engine: Engine, corpus: int, limit: int | None = None) -> list[FailureRow]:
    """The corpus's recorded failures, oldest passage first."""
    query = (
        select(
            ExtractionFailure.passage_id,
            Passage.title,
            ExtractionFailure.error,
            ExtractionFailure.raw_output,
            ExtractionFailure.created_at,
        )
        .join(Passage, Passage.id == ExtractionFailure.passage_id)
        .where(ExtractionFailure.corpus_id == corpus)
        .order_by(Passage.position, ExtractionFailure.id)
        .limit(limit)
    )
    with transaction(engine) as session:
        return [FailureRow(*row) for row in session.execute(query).all()]
