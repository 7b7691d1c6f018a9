"""A sub-agent's observation log and its reducer: notes de-duplicated and capped in any write order."""

from __future__ import annotations

import re
from typing import NotRequired

from typing_extensions import TypedDict


class Observation(TypedDict):
    """A short entity-level note a sub-agent made in one search round."""

    iteration: int
    text: str


class ObservationLog(TypedDict):
    """A sub-agent's observations with the cap its reducer keeps them under."""

    cap: NotRequired[int]
    items: list[Observation]


def _observation_key(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def merge_observations(left: ObservationLog, right: ObservationLog) -> ObservationLog:
    """Merge observation writes, de-duplicated and capped, independently of write order.

    Notes equal up to case and spacing count once (the latest round's copy wins). Items are kept
    in (iteration, text) order and, over the cap, the oldest round's items go first. The cap is
    the smaller of the two sides' caps (a side without one has none). Keeping the top `cap` items
    of one total order is commutative and associative, so parallel writes may arrive in any order.
    """
    caps = [side["cap"] for side in (left, right) if "cap" in side]
    best: dict[str, Observation] = {}
    for side in (left, right):
        for item in side.get("items", []):
            text = item["text"].strip()
            if not text:
                continue
            key = _observation_key(text)
            candidate = Observation(iteration=item["iteration"], text=text)
            seen = best.get(key)
            if seen is None or (candidate["iteration"], text) > (seen["iteration"], seen["text"]):
                best[key] = candidate
    items = sorted(best.values(), key=lambda o: (o["iteration"], o["text"]))
    if not caps:
        return ObservationLog(items=items)
    cap = max(min(caps), 0)
    return ObservationLog(cap=cap, items=items[max(len(items) - cap, 0) :])
