"""A prompt's anatomy: how many of a call's input tokens went to each part of it.

Parts: instructions (system prompts, the last-round rule), evidence (passages, candidates),
history (notes, earlier answers and turns, findings, a re-ask's earlier reply) and the question
itself; the reply is the call's output. A provider reports one input count per call, so each
part gets its share of it by characters: exact in total, close enough per part to show where
a cut would land.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from nodes.llm.reply import message_text

PARTS = ("instructions", "evidence", "history", "question")

#: A line starting with one of these opens a section of that part, up to the next heading.
HEADINGS: tuple[tuple[str, str], ...] = (
    ("New evidence:", "evidence"),
    ("Passages:", "evidence"),
    ("Candidates:", "evidence"),
    ("Notes so far:", "history"),
    ("Notes:", "history"),
    ("Answers found so far:", "history"),
    ("Earlier in this conversation", "history"),
    ("Findings:", "history"),
    ("Plan:", "history"),
    ("Reasoning so far:", "history"),
    ("A reviewer read an earlier plan", "history"),
    ("This is the last search round", "instructions"),
    ("That plan cannot be run", "instructions"),
    ("That reply was not usable", "instructions"),
    ("Question:", "question"),
    ("Sub-question:", "question"),
    ("Sub-questions:", "question"),
    ("Looking for:", "question"),
)


def _part_of_line(line: str, current: str) -> str:
    for heading, part in HEADINGS:
        if line.startswith(heading):
            return part
    return current


def prompt_chars(messages: Sequence[BaseMessage]) -> dict[str, int]:
    """Characters of the prompt in each part (system prompts are instructions, replies history)."""
    chars = dict.fromkeys(PARTS, 0)
    for message in messages:
        text = message_text(message)
        if isinstance(message, SystemMessage):
            chars["instructions"] += len(text)
            continue
        if isinstance(message, AIMessage):  # the model's own earlier reply, shown on a re-ask
            chars["history"] += len(text)
            continue
        part = "question"
        for line in text.split("\n"):
            part = _part_of_line(line, part)
            chars[part] += len(line) + 1
    return chars


def token_split(chars: Mapping[str, int], input_tokens: int) -> dict[str, int]:
    """`input_tokens` shared out by characters; the shares add up to it exactly."""
    total = sum(chars.values())
    if total <= 0 or input_tokens <= 0:
        return dict.fromkeys(PARTS, 0)
    shares = {part: input_tokens * chars.get(part, 0) // total for part in PARTS}
    # The rounding remainder goes to the largest part, so the sum is the reported count.
    largest = max(PARTS, key=lambda part: chars.get(part, 0))
    shares[largest] += input_tokens - sum(shares.values())
    return shares
