"""The token budget per question (`max_tokens`), one rule for every method.

Once a run's tally has reached it, no LLM call that searches or iterates is made; the answer is
written from what was found so far.

The answer call itself is always made: a budget never leaves a question unanswered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def spent(*tallies: Mapping[str, Any] | None) -> int:
    """Input plus output tokens of the given tallies (None or {} count nothing)."""
    return sum(int(t.get("input_tokens", 0)) + int(t.get("output_tokens", 0)) for t in tallies if t)


def reached(max_tokens: int, used: int) -> bool:
    """Whether `used` tokens exhaust the budget; 0 means no budget."""
    return max_tokens > 0 and used >= max_tokens


def either(left: bool, right: bool) -> bool:
    """Reducer of `budget_stopped`: concurrent hops may each report it in one superstep."""
    return bool(left) or bool(right)
