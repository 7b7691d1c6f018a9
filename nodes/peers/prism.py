"""PRISM's two evidence agents: the Selector (precision) and the Adder (recall).

Both see the question, its sub-questions and every candidate passage numbered 1..n, then the
numbers kept so far, and reply with numbers; a number not offered (kept already, or never shown) is
ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from nodes.llm.client import CallTag, LlmClient, LlmResult, system_and_user
from nodes.prompt_blocks import cut
from store.retrieval import PassageText

# Both agents see one prompt up to their task: the shared system text, then the question, its
# sub-questions and the whole candidate list in a fixed order (kept or not), and only then which are
# kept and what this agent is to do. The local llama.cpp model reuses its cache for a prompt's
# longest common prefix with the last one, so after a question's first Selector call its ≈3.4k
# tokens of passages are not read again (measured: 54–97 s a call before, 3–5 s after).
EVIDENCE_AGENTS = """\
You help gather the evidence for a question that needs several facts. You get the question, its \
sub-questions and candidate passages, each with a number, then the numbers kept so far and your \
task. Reply with a JSON object only.
"""

SELECTOR = """\
Your task: filter. Among the candidates not kept yet, pick those that directly state a fact \
needed to answer the question or one of its sub-questions. Be strict: a passage that is only on \
the same topic is left out.
Reply like {"keep": [3, 7]} ([] when none qualifies)."""

ADDER = """\
Your task: find gaps. Among the candidates not kept yet, add every one that supplies a fact the \
kept passages still lack, such as the next link of a chain of facts. Do not list kept passages.
Reply like {"add": [4]} ([] when nothing is missing)."""


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
    task: str,
    max_chars: int,
) -> str:
    """The user message: question, sub-questions, every candidate, the kept numbers, the task.

    Everything before "Kept so far" is the same for every call on one question, so consecutive
    calls share that prefix.
    """
    subs = "\n".join(f"{n}. {text}" for n, text in enumerate(sub_questions, start=1))
    lines = numbered(candidates, range(1, len(candidates) + 1), max_chars)
    kept_text = ", ".join(str(n) for n in kept) or "none yet"
    return (
        f"Question: {question}\nSub-questions:\n{subs}\n\n"
        "Candidates:\n" + "\n".join(lines) + f"\n\nKept so far: {kept_text}\n\n{task}"
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


#: Each agent's task, reply shape and the reply's key for the candidate numbers.
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
    task, reply_type, key = AGENTS[agent]
    user = evidence_prompt(question, sub_questions, candidates, kept, task, max_chars)
    reply, results = await llm.complete_json(
        system_and_user(EVIDENCE_AGENTS, user),
        reply_type,
        tag,
        json_schema=numbers_schema(key, offered, most),
    )
    return chosen(getattr(reply, key), offered, most), results
