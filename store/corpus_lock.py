"""The one write lock of a corpus, taken first by every transaction that writes or deletes in it.

Adding passages and their source links, a batch's graph write, synonym linking, every deletion
and dropping the corpus all start by taking this transaction-scoped advisory lock, and take no
other corpus lock after it, so writers and deleters of one corpus run one after the other in the
same order and never deadlock. Without it a deletion could remove, through the cascade, source
links an indexer had just added (a corpus emptied), and an indexer could link a passage a
deletion had just removed (a foreign-key error). The slow parts (reading, extraction,
embedding) run outside it. Passage vectors are written without it: their update of a passage
deleted meanwhile finds no row, so it commutes with every deletion.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

#: First key of the advisory lock; the second is the corpus id.
CORPUS_LOCK_KEY = 7_140_512
#: Held to the end of the transaction.
CORPUS_LOCK = text("SELECT pg_advisory_xact_lock(:key, :corpus)")


def lock_corpus(session: Session, corpus: int) -> None:
    """Wait for, then hold to the end of the session's transaction, the corpus's write lock."""
    session.execute(CORPUS_LOCK, {"key": CORPUS_LOCK_KEY, "corpus": corpus})
