"""Gold passages of a question located in an indexed corpus (title + text → passage id)."""

from __future__ import annotations

from sqlalchemy import Engine

from evals.attribution import GoldStep
from evals.loaders import (
    GoldPassage,
    GoldPassageMissing,
    QAExample,
    resolve_gold_passages,
    step_links,
)
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


def passage_titles(index: PassageIndex) -> dict[int, str]:
    """Each stored passage's title by id (the index's keys begin with the title)."""
    return {pid: key[0] for key, pid in index.items()}


def gold_steps(example: QAExample, index: PassageIndex) -> list[GoldStep]:
    """The example's gold hops for attribution, each with its stored passage id if the corpus has it.

    A decomposition whose every step names its supporting paragraph (MuSiQue) gives one hop per
    step with its question, answer and #k links; the last step also accepts the question's
    answers and aliases. Otherwise (HotpotQA, 2Wiki: supporting-fact titles only) each gold
    passage is a hop without question or answer.
    """

    def stored(passage: GoldPassage) -> int | None:
        return index.get(passage_match_key(passage.title, passage.text))

    steps = example.decomposition
    if steps and all(step.passage is not None for step in steps):
        found = []
        for hop, step in enumerate(steps, start=1):
            assert step.passage is not None
            answers = [step.answer, *(example.answers if hop == len(steps) else [])]
            found.append(
                GoldStep(
                    hop=hop,
                    title=step.passage.title,
                    passage_id=stored(step.passage),
                    question=step.question,
                    answers=tuple(dict.fromkeys(a for a in answers if a.strip())),
                    depends_on=step_links(step.question),
                )
            )
        return found
    return [
        GoldStep(hop=hop, title=passage.title, passage_id=stored(passage))
        for hop, passage in enumerate(example.gold_passages, start=1)
    ]
