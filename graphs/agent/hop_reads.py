"""What each hop read: the ids of its rounds' evidence, which the turn's citations are picked from.

Ids only, never texts: only answers (and these ids) leave a sub-agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from typing_extensions import TypedDict

ReadKind = Literal["passages", "propositions"]


class RoundRead(TypedDict):
    """The evidence one search round showed the evaluator, best first."""

    round: int
    kind: ReadKind
    ids: list[int]


class HopRead(TypedDict):
    """A sub-question's rounds of evidence and the round its answer was given in."""

    answered_in: int
    rounds: list[RoundRead]


def append_rounds(left: list[RoundRead], right: list[RoundRead]) -> list[RoundRead]:
    """Rounds in the order they ran (a sub-agent's rounds run one after another)."""
    return [*left, *right]


def merge_hop_reads(left: dict[int, HopRead], right: dict[int, HopRead]) -> dict[int, HopRead]:
    """Union of the hops' reads (each hop is written by one sub-agent), keys as in merge_answers."""
    merged = {int(k): v for side in (left, right) for k, v in side.items()}
    return dict(sorted(merged.items()))


def reading_rounds(read: HopRead) -> list[RoundRead]:
    """A hop's rounds, the one it answered in first, then the others latest first.

    The answer most likely stands in what the evaluator read last; an earlier round's evidence
    reached it only through its notes.
    """
    rounds: Sequence[RoundRead] = read.get("rounds", [])
    answered = [r for r in rounds if r["round"] == read.get("answered_in")]
    others = sorted((r for r in rounds if r not in answered), key=lambda r: -r["round"])
    return [*answered, *others]
