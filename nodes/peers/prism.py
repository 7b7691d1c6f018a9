"""PRISM's two evidence agents: the Selector (precision) and the Adder (recall).

Both see the question, its sub-questions and candidate passages numbered 1..n over the whole
candidate list, and reply with numbers; numbers outside what they were shown are ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from nodes.llm.client import CallTag, LlmClient, LlmResult, system_and_user
from nodes.peers.answer import cut
from store.retrieval import PassageText

SELECTOR = """\
You filter evidence for a question that needs several facts. You get the question, its \
sub-questions, the passages kept so far and new candidate passages, each with a number. Pick \
the candidates that directly state a fact needed to answer the question or one of its \
sub-questions. Be strict: a passage that is only on the same topic is left out.

Reply with a JSON object only, for example: {"keep": [3, 7]} ([] when none qualifies)
"""

ADDER = """\
You look for gaps in an evidence set for a question that needs several facts. You get the \
question, its sub-questions, the passages kept so far and the remaining candidates, each with a \
number. Add every remaining candidate that supplies a fact the kept passages still lack, such as \
the next link of a chain of facts. Do not list kept passages again.

Reply with a JSON object only, for example: {"add": [4]} ([] when nothing is missing)
"""


Agent = Literal["select", "add"]


class SelectorReply(BaseModel):
    """The candidate numbers the Selector keeps."""

    model_config = ConfigDict(extra="ignore")

    keep: list[int] = Field(default_factory=list)


class AdderReply(BaseModel):
    """The candidate numbers the Adder adds."""

    model_config = ConfigDict(extra="ignore")

    add: list[int] = Field(default_factory=list)


def numbered(
    candidates: Sequence[PassageText], numbers: Sequence[int], max_chars: int
) -> list[str]:
    """Lines "[n] title: text" for the candidates with the given 1-based numbers."""
    return [
        f"[{n}] {candidates[n - 1].title}: {cut(candidates[n - 1].text, max_chars)}"
        for n in numbers
    ]


def evidence_prompt(
    question: str,
    sub_questions: Sequence[str],
    candidates: Sequence[PassageText],
    kept: Sequence[int],
    offered: Sequence[int],
    max_chars: int,
) -> str:
    """The user message of both agents: question, sub-questions, kept and offered passages."""
    subs = "\n".join(f"{n}. {text}" for n, text in enumerate(sub_questions, start=1))
    kept_lines = numbered(candidates, kept, max_chars) or ["(none yet)"]
    offered_lines = numbered(candidates, offered, max_chars) or ["(none)"]
    return (
        f"Question: {question}\nSub-questions:\n{subs}\n\n"
        f"Kept so far:\n" + "\n".join(kept_lines) + "\n\n"
        "Candidates:\n" + "\n".join(offered_lines)
    )


def chosen(numbers: Sequence[int], offered: Sequence[int], most: int) -> list[int]:
    """The first `most` offered numbers the reply named, in candidate order, each once."""
    allowed = set(offered)
    named = {n for n in list(dict.fromkeys(n for n in numbers if n in allowed))[:most]}
    return [n for n in offered if n in named]


def numbers_schema(key: str, offered: Sequence[int], most: int) -> dict[str, Any]:
    """JSON schema of a reply naming at most `most` of the offered numbers.

    llama.cpp turns it into a grammar. Without the bound the 1.5B local model listed number
    after number until its output cap, so every such reply was cut mid-list and unusable (and
    re-asked, at 1,024 output tokens each time).
    """
    numbers = {"type": "array", "items": {"type": "integer", "enum": list(offered)}}
    return {
        "type": "object",
        "properties": {key: {**numbers, "maxItems": most}},
        "required": [key],
    }


#: Each agent's instructions, reply shape and the reply's key for the candidate numbers.
AGENTS: dict[Agent, tuple[str, type[SelectorReply] | type[AdderReply], str]] = {
    "select": (SELECTOR, SelectorReply, "keep"),
    "add": (ADDER, AdderReply, "add"),
}


async def pick_evidence(
    llm: LlmClient,
    agent: Agent,
    *,
    question: str,
    sub_questions: Sequence[str],
    candidates: Sequence[PassageText],
    kept: Sequence[int],
    offered: Sequence[int],
    max_chars: int,
    most: int,
    tag: CallTag,
) -> tuple[list[int], list[LlmResult]]:
    """Ask the Selector or the Adder; the 1-based candidate numbers it names, at most `most`.

    The Selector keeps the offered candidates that directly support the question; the Adder adds
    the remaining ones that fill a gap the kept passages leave.
    """
    instructions, reply_type, key = AGENTS[agent]
    user = evidence_prompt(question, sub_questions, candidates, kept, offered, max_chars)
    reply, results = await llm.complete_json(
        system_and_user(instructions, user),
        reply_type,
        tag,
        json_schema=numbers_schema(key, offered, most),
    )
    return chosen(getattr(reply, key), offered, most), results
