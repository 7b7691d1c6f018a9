"""One chain-of-thought step for the iterative peers (IRCoT + PPR, SA-RAG + CoT).

Each call writes the next reasoning sentence from the passages retrieved so far; that sentence is
the next retrieval query, and `done` ends the loop early.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, field_validator

from nodes.llm.client import CallTag, LlmClient, LlmResult, system_and_user
from nodes.peers.answer import without_aside
from nodes.prompt_blocks import passages_block
from store.retrieval import PassageText

SYSTEM = """\
You work toward the answer of a question one reasoning sentence at a time. You get the \
question, the passages retrieved so far and your earlier sentences. Write the next sentence: a \
fact the passages state that brings the answer closer, or, when the passages lack the fact you \
need, a sentence saying what must be found next (it is searched for). Never repeat an earlier \
sentence and never state a fact the passages do not give. Once your sentences settle the \
answer, set "done" to true and give the short answer; until then "done" is false and "answer" \
is "".

Reply with a JSON object only, for example:
{"thought": "The Orla Bridge was designed by Petra Lund; next, where Petra Lund was born.", \
"done": false, "answer": ""}
"""


class ThoughtReply(BaseModel):
    """The next reasoning sentence, and the answer once it is settled."""

    model_config = ConfigDict(extra="ignore")

    thought: str
    done: bool = False
    answer: str = ""

    @field_validator("thought")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("thought is empty")
        return value.strip()

    @field_validator("answer")
    @classmethod
    def _short_span(cls, value: str) -> str:
        return without_aside(value)


def thought_prompt(
    question: str, passages: Sequence[PassageText], thoughts: Sequence[str], max_chars: int
) -> str:
    """The user message: passages, the reasoning so far, the question."""
    reasoning = " ".join(thoughts) if thoughts else "(none yet)"
    return (
        f"Passages:\n{passages_block(passages, max_chars)}\n\n"
        f"Reasoning so far: {reasoning}\n\nQuestion: {question}"
    )


async def next_thought(
    llm: LlmClient,
    *,
    question: str,
    passages: Sequence[PassageText],
    thoughts: Sequence[str],
    max_chars: int,
    tag: CallTag,
) -> tuple[ThoughtReply, list[LlmResult]]:
    """The next sentence of the chain (raises MalformedOutput with its calls)."""
    user = thought_prompt(question, passages, thoughts, max_chars)
    return await llm.complete_json(system_and_user(SYSTEM, user), ThoughtReply, tag)
