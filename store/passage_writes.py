"""Passage writes: add passages idempotently, keyed by content hash, in a form PostgreSQL holds."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlalchemy import (
    ColumnElement,
    Engine,
    String,
    and_,
    any_,
    bindparam,
    func,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session

from store.bulk_copy import copy_rows
from store.corpora import CorpusNotFound
from store.corpus_lock import lock_corpus
from store.engine import transaction
from store.models import Corpus, Passage
from store.postings import add_passage_postings


@dataclass(frozen=True)
class PassageRow:
    """A stored passage as the indexer sees it."""

    id: int
    title: str
    text: str
    status: str
    #: Whether this call inserted it (False: it was stored before, or is a duplicate input).
    added: bool = False


def content_hash(title: str, text: str) -> str:
    """The key that makes re-indexing the same passage a no-op."""
    # surrogatepass: a lone surrogate (valid in JSON, not in UTF-8) still hashes, so the
    # passage that holds it can be stored and reported instead of stopping the whole file.
    return hashlib.sha256(f"{title}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()


#: A code point PostgreSQL text cannot hold, and what stands for it in the stored copy.
NUL = "\x00"
REPLACEMENT = "\ufffd"
#: Lone UTF-16 surrogates: JSON may hold them ("\\ud800"), UTF-8 and PostgreSQL cannot.
SURROGATE = re.compile("[\ud800-\udfff]")


def unstorable_reason(title: str, text: str) -> str | None:
    """Why PostgreSQL cannot store this passage as given (NUL, lone surrogate), or None."""
    for part, value in (("title", title), ("text", text)):
        # Surrogates first: a file that is not UTF-8 (binary, UTF-16) often holds NULs too,
        # and its encoding is what to fix.
        if found := SURROGATE.search(value):
            return (
                f"the {part} holds a lone surrogate (U+{ord(found.group()):04X}) at offset "
                f"{found.start()}, which is not text; fix the file's encoding"
            )
        if NUL in value:
            return (
                f"the {part} holds a NUL character (U+0000) at offset {value.index(NUL)}; "
                "remove it from the file"
            )
    return None


def storable(value: str) -> str:
    """`value` with NUL characters and lone surrogates replaced by U+FFFD, so it can be stored."""
    return SURROGATE.sub(REPLACEMENT, value.replace(NUL, REPLACEMENT))


# New passages are staged by binary COPY and inserted by one statement: a multi-row VALUES
# statement is compiled in Python row by row (1.4 s of CPU for 11,656 passages).
STAGE_PASSAGES = text("""
CREATE TEMP TABLE passage_intake (title text, text text, content_hash text, position int)
ON COMMIT DROP
""")
INTAKE_COLUMNS = ("title", "text", "content_hash", "position")
INTAKE_TYPES = ("text", "text", "text", "int4")
# In position order, so ids rise with positions as they always have.
INSERT_STAGED_PASSAGES = text("""
INSERT INTO passages (corpus_id, title, text, content_hash, position)
SELECT :corpus, title, text, content_hash, position FROM passage_intake ORDER BY position
ON CONFLICT ON CONSTRAINT uq_passages_corpus_hash DO NOTHING
RETURNING content_hash, id, n_lexemes
""")


def _hash_filter(corpus: int, hashes: Sequence[str]) -> ColumnElement[bool]:
    # One array parameter instead of one per hash, so a 100k-passage corpus fits one statement.
    wanted = bindparam("hashes", value=list(set(hashes)), type_=ARRAY(String(64)))
    return and_(Passage.corpus_id == corpus, Passage.content_hash == any_(wanted))


def add_passages(
    engine: Engine,
    corpus: int,
    passages: Sequence[tuple[str, str]],
    source: str | None = None,
    files: Sequence[str | None] | None = None,
) -> list[PassageRow]:
    """Insert passages not yet in the corpus and return every given passage's row, in order.

    New passages' BM25 postings are written in the same transaction. Duplicates (same title and
    text) inside the input or already stored map to one row. With a `source`, every given passage
    is recorded as held by it (see store.deletion.prune_source), with its `files` entry (its file
    inside a folder source, the first given for a duplicate) when given.
    A passage PostgreSQL cannot hold as given (see `unstorable_reason`) is stored with the
    offending characters replaced, under the hash of what was given.
    """
    with transaction(engine) as session:
        lock_corpus(session, corpus)
        return insert_passages(session, corpus, passages, source, files)


def insert_passages(
    session: Session,
    corpus: int,
    passages: Sequence[tuple[str, str]],
    source: str | None,
    files: Sequence[str | None] | None = None,
) -> list[PassageRow]:
    """`add_passages` in the caller's transaction, which holds the corpus's lock."""
    if session.execute(select(Corpus.id).where(Corpus.id == corpus)).first() is None:
        raise CorpusNotFound("the corpus was dropped while passages were being added to it")
    hashes = [content_hash(title, body) for title, body in passages]
    existing = set(
        session.execute(select(Passage.content_hash).where(_hash_filter(corpus, hashes))).scalars()
    )
    base = session.execute(
        select(func.coalesce(func.max(Passage.position), -1)).where(Passage.corpus_id == corpus)
    ).scalar_one()
    fresh: dict[str, tuple[str, str, str, int]] = {}
    for (title, body), digest in zip(passages, hashes, strict=True):
        if digest not in existing and digest not in fresh:
            # The key is the given text; the stored copy is one PostgreSQL can hold.
            position = base + 1 + len(fresh)
            fresh[digest] = (storable(title), storable(body), digest, position)
    lexemes: list[int] = []
    inserted: set[str] = set()
    inserted_ids: list[int] = []
    if fresh:
        session.execute(STAGE_PASSAGES)
        copy_rows(session, "passage_intake", INTAKE_COLUMNS, INTAKE_TYPES, fresh.values())
        for digest, passage, n_lexemes in session.execute(
            INSERT_STAGED_PASSAGES, {"corpus": corpus}
        ):
            inserted.add(digest)
            inserted_ids.append(passage)
            lexemes.append(n_lexemes)
    add_passage_postings(session, corpus, inserted_ids)
    if lexemes:
        session.execute(
            update(Corpus)
            .where(Corpus.id == corpus)
            .values(
                n_passages=Corpus.n_passages + len(lexemes),
                n_passage_lexemes=Corpus.n_passage_lexemes + sum(lexemes),
            )
        )
    rows = session.execute(
        select(Passage.content_hash, Passage.id, Passage.title, Passage.text, Passage.status).where(
            _hash_filter(corpus, hashes)
        )
    ).all()
    by_hash = {row[0]: PassageRow(row[1], row[2], row[3], row[4]) for row in rows}
    if source is not None:
        file_of: dict[int, str | None] = {}
        for digest, file in zip(hashes, files or [None] * len(hashes), strict=True):
            file_of.setdefault(by_hash[digest].id, None if file is None else storable(file))
        _link_source(session, corpus, source, file_of)
    first = {digest: index for index, digest in reversed(list(enumerate(hashes)))}
    return [
        replace(by_hash[digest], added=digest in inserted and first[digest] == index)
        for index, digest in enumerate(hashes)
    ]


# One array parameter per column: a 100k-passage file is one short statement. A passage the
# source already holds takes its file as now given (a file renamed inside a folder).
LINK_SOURCE = text("""
INSERT INTO passage_sources (corpus_id, passage_id, source, file)
SELECT :corpus, id, :source, file
FROM unnest(CAST(:ids AS bigint[]), CAST(:files AS text[])) AS given(id, file)
ON CONFLICT (passage_id, source) DO UPDATE SET file = excluded.file
WHERE passage_sources.file IS DISTINCT FROM excluded.file
""")


def _link_source(
    session: Session, corpus: int, source: str, file_of: dict[int, str | None]
) -> None:
    ids = sorted(file_of)
    session.execute(
        LINK_SOURCE,
        {"corpus": corpus, "source": source, "ids": ids, "files": [file_of[i] for i in ids]},
    )
