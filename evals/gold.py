"""Gold passages of a question located in an indexed corpus (title + text → passage id)."""

from __future__ import annotations

from sqlalchemy import Engine

from evals.loaders import GoldPassageMissing, QAExample, resolve_gold_passages
from graphs.indexing.corpus_files import passage_match_key
from store.corpus_reads import corpus_passages

PassageIndex = dict[tuple[str, str], int]


def corpus_passage_index(engine: Engine, corpus: int) -> PassageIndex:
    """Every passage of a corpus keyed by `passage_match_key(title, text)`."""
    index: PassageIndex = {}
    for passage in corpus_passages(engine, corpus):
        # Duplicates cannot be stored twice, but whitespace variants can: the first one stands.
        index.setdefault(passage_match_key(passage.title, passage.text), passage.id)
    return index


def gold_passage_ids(example: QAExample, index: PassageIndex, corpus_name: str) -> list[int]:
    """The stored ids of the example's gold passages, in hop order, without repeats."""
    try:
        ids = resolve_gold_passages(example, index)
    except GoldPassageMissing as exc:
        raise GoldPassageMissing(
            f"{exc} {corpus_name!r}; was it indexed from this split's corpus file "
            "(and without --limit)?"
        ) from exc
    return list(dict.fromkeys(ids))
