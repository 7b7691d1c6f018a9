"""What the index graph's first step does with a run's passages besides storing them.

The passages checked as given (the input is all a client sends: the graph never reads a file),
the label a source's passages are recorded under, what an edited source no longer holds counted,
and passages PostgreSQL cannot store turned away.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine

from graphs.indexing.state import IndexState
from store.deletion import DeletionReport
from store.failures import record_failure
from store.passage_writes import PassageRow, storable, unstorable_reason

#: The longest source label a run may give (a path, a URL or a name).
MAX_SOURCE_CHARS = 1000


class BadIndexInput(ValueError):
    """The index graph's input is malformed; the server passes the message on to the client."""


def given_passages(state: IndexState) -> list[tuple[str, str]]:
    """The input's passages as (title, text), refused in one line unless each is such a pair."""
    given: Any = state.get("passages")
    if given is None:
        raise BadIndexInput(
            "the index graph takes its passages in the input: "
            '{"corpus": NAME, "passages": [{"title": ..., "text": ...}, ...]}'
        )
    if not isinstance(given, list):
        raise BadIndexInput(f"passages must be a list of objects, got {type(given).__name__}")
    pairs = []
    for number, passage in enumerate(given):
        if not isinstance(passage, dict) or not set(passage) <= {"title", "text", "file"}:
            raise BadIndexInput(
                f"passage {number}: expected an object with 'title' and 'text' (and 'file')"
            )
        title, text = passage.get("title", ""), passage.get("text", "")
        if not isinstance(title, str) or not isinstance(text, str):
            raise BadIndexInput(f"passage {number}: 'title' and 'text' must be strings")
        pairs.append((title, text))
    return pairs


def given_files(state: IndexState) -> list[str | None]:
    """Each input passage's file inside its folder source (a label, never opened), or None.

    Read once `given_passages` has checked the passages. Refused in one line when a file is
    not a short string, or is given without a source.
    """
    files: list[str | None] = []
    for number, passage in enumerate(state.get("passages") or []):
        file: Any = passage.get("file")
        if file is not None and (not isinstance(file, str) or len(file) > MAX_SOURCE_CHARS):
            raise BadIndexInput(
                f"passage {number}: 'file' must be a label of at most {MAX_SOURCE_CHARS} characters"
            )
        files.append(file or None)
    if any(files) and source_key(state) is None:
        raise BadIndexInput("a passage's 'file' names it inside a source: give the 'source' too")
    return files


def source_key(state: IndexState) -> str | None:
    """The label the run's passages are recorded under, if any (never opened as a file)."""
    source: Any = state.get("source")
    if source is None or source == "":
        return None
    if not isinstance(source, str) or len(source) > MAX_SOURCE_CHARS:
        raise BadIndexInput(f"source must be a label of at most {MAX_SOURCE_CHARS} characters")
    # storable: a path with undecodable bytes (surrogate escapes) must not stop the index.
    return storable(source)


def sync_counts(rows: Sequence[PassageRow], pruned: DeletionReport) -> dict[str, int]:
    """How many of the passages a mirrored source let go were edited, and how many dropped.

    A passage is its content (title and text): an edited passage is a new passage, and its old
    version left with everything derived from it. An old version whose title the new read still
    has counts as changed; the rest as removed.
    """
    added = Counter(row.title for row in rows if row.added)
    changed = sum((Counter(pruned.titles) & added).values())
    return {"passages_changed": changed, "passages_removed": pruned.passages - changed}


def reject_unstorable(
    engine: Engine, corpus: int, pairs: Sequence[tuple[str, str]], rows: Sequence[PassageRow]
) -> dict[int, str]:
    """Record as failed every passage whose text PostgreSQL cannot hold; return id → reason.

    Such a passage is stored with its bad characters replaced (see
    store.passage_writes.storable), so extracting that copy would index text the file does not
    have: it is never extracted, and its failure is recorded once, however often the file is
    indexed or retried.
    """
    rejected: dict[int, str] = {}
    for (title, text), row in zip(pairs, rows, strict=True):
        reason = unstorable_reason(title, text)
        if reason is None or row.id in rejected:
            continue
        rejected[row.id] = reason
        if row.status != "failed":
            record_failure(engine, corpus, row.id, f"unstorable passage: {reason}", None)
    return rejected
