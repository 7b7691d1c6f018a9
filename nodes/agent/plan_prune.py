"""Dropping a plan's identity steps: "Who is Christopher Nolan?" when the question names him.

The 1.5B planner opens many plans with a step that only asks who or what a name from the
question is. Its sub-agent searches and reads for it (≈ 500 tokens) and answers with the name
itself ("Christopher Nolan") or a description nobody uses; a later step that builds on it gets
the name back. Such a step is dropped and the name written where later steps wrote its `#k`.
Token-free: a pattern and the question's own words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nodes.agent.plan_dag import PLACEHOLDER
from nodes.agent.plan_references import fold, is_name

#: "Who is X?", "What was the X?": a step asking only what a name is.
_IDENTITY = re.compile(
    r"^(?:who|what)\s+(?:is|was|are|were)\s+(?:the\s+)?(?P<name>[^#?]+?)\s*\?$", re.I
)


def identity_name(step: str, question: str) -> str | None:
    """The name `step` only asks about, when the question writes that name; else None."""
    match = _IDENTITY.match(step.strip())
    if match is None:
        return None
    name = match["name"].strip()
    if "'" in name or "’" in name or not is_name(name):
        return None  # "Barry Wesson's team" asks for a fact, not who Barry Wesson is
    if re.search(rf"(?<!\w){re.escape(fold(name))}(?!\w)", fold(question)) is None:
        return None
    return name


def drop_identity_steps(
    question: str, texts: Sequence[str]
) -> tuple[list[str], list[tuple[int, str]]]:
    """The plan's step texts without its identity steps, and each dropped step with its name.

    A dropped step's `#k` in later steps becomes its name, and later step numbers close the gap.
    A step that builds on another (`#k` in its text) is never an identity step, and a plan keeps
    at least one step.
    """
    names: dict[int, str] = {}
    for k, text in enumerate(texts, start=1):
        if PLACEHOLDER.search(text):
            continue
        name = identity_name(text, question)
        if name is not None:
            names[k] = name
    if not names or len(names) == len(texts):
        return list(texts), []
    kept = [k for k in range(1, len(texts) + 1) if k not in names]
    number = {old: new for new, old in enumerate(kept, start=1)}

    def rewrite(match: re.Match[str]) -> str:
        ref = int(match[1])
        if ref in names:
            return names[ref]
        return f"#{number[ref]}" if ref in number else match[0]

    return [PLACEHOLDER.sub(rewrite, texts[k - 1]) for k in kept], sorted(names.items())
