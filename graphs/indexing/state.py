"""The index graph's state: its input, the counters parallel batches add to, and one batch's task."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


def add_reports(left: dict[str, int], right: dict[str, int]) -> dict[str, int]:
    """Sum counters key by key (parallel batches write here)."""
    return {key: left.get(key, 0) + right.get(key, 0) for key in {*left, *right}}


class IndexInput(TypedDict, total=False):
    """What a client sends: the corpus, its passages, their source label, an optional limit."""

    corpus: str
    passages: list[dict[str, str]]
    source: str
    limit: int


class IndexState(TypedDict, total=False):
    """Input: corpus and passages. Output: counters and the summary.

    The graph reads no file: its passages are all in the input (`grasp index` reads the file
    first). `source` is a label saying where they come from (the CLI gives the file's resolved
    path), never opened; a passage's optional `file` names it inside a folder source (the CLI
    gives the file's path relative to the folder), a label too. With a source and no `limit`,
    the corpus is made to mirror it: passages the source held before but no longer has are
    removed (see `store.source_writes`).
    """

    corpus: str
    passages: list[dict[str, str]]
    source: str
    limit: int
    corpus_id: int
    started_at: float
    batches: list[list[dict[str, Any]]]
    counters: Annotated[dict[str, int], add_reports]
    errors: Annotated[list[str], operator.add]
    summary: dict[str, Any]


class BatchTask(TypedDict):
    """What one parallel batch receives."""

    corpus_id: int
    passages: list[dict[str, Any]]
