"""Hops not searched because they build on a hop that found nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from graphs.agent.progress import emit
from nodes.agent.evaluate import found_nothing
from nodes.agent.plan_dag import SubQuestion, stranded


def skipped_hops(sub_questions: Sequence[SubQuestion], answers: Mapping[int, str]) -> list[int]:
    """The hops to skip now, each announced by a `hop_skipped` event; their answer is "unknown".

    "Who ruled #2?" after #2 found nothing would search for "Who ruled unknown?" and hand the
    reader (and the citations) whatever that finds; the reader reads the hops done instead.
    """
    empty = [k for k, answer in answers.items() if found_nothing(answer)]
    skipped = stranded(sub_questions, answers, empty)
    by_index = {sq["index"]: sq for sq in sub_questions}
    for k in skipped:
        after = [d for d in by_index[k]["depends_on"] if d in empty or d in skipped]
        emit(
            "hop_skipped", index=k, of=len(sub_questions), question=by_index[k]["text"], after=after
        )
    return skipped
