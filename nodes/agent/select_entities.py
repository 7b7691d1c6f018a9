"""Entity selection: the LLM picks which candidate entities to traverse (possibly none)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from nodes.llm.client import CallTag, LlmClient, LlmResult, system_and_user
from nodes.prompt_blocks import notes_block
from store.grasp_retrieval import ScoredEntity

log = logging.getLogger(__name__)

SYSTEM = """\
You steer a search through a graph of entities. You are given the fact being looked for, the \
notes made so far, and candidate entities, each shown with an id, its name, its type and a few \
statements that mention it.

Choose the entities whose statements are likely to lead to the fact: usually one to three. \
Choose none when no candidate is related.

Reply with a JSON object only: {"entity_ids": [ids of the chosen entities]}
"""

USER = """\
Sub-question: {sub_question}
Looking for: {statement}
{notes}Candidates:
{candidates}"""


class SelectionReply(BaseModel):
    """The selector's reply."""

    model_config = ConfigDict(extra="ignore")

    entity_ids: list[int] = Field(default_factory=list, description="ids of chosen candidates")


def candidates_block(candidates: Sequence[ScoredEntity]) -> str:
    """Each candidate as `[id] name (type)` with its statements indented below."""
    lines: list[str] = []
    for entity in candidates:
        lines.append(f"[{entity['id']}] {entity['name']} ({entity['type']})")
        lines.extend(f"    - {text}" for text in entity["propositions"])
    return "\n".join(lines)


async def select_entities(
    llm: LlmClient,
    *,
    sub_question: str,
    statement: str,
    observations: Sequence[str],
    candidates: Sequence[ScoredEntity],
    tag: CallTag,
) -> tuple[list[int], list[LlmResult]]:
    """The chosen candidate ids, in candidate order; ids the model made up are ignored."""
    if not candidates:
        return [], []
    user = USER.format(
        sub_question=sub_question,
        statement=statement,
        notes=notes_block(observations),
        candidates=candidates_block(candidates),
    )
    reply, results = await llm.complete_json(system_and_user(SYSTEM, user), SelectionReply, tag)
    chosen = set(reply.entity_ids)
    unknown = chosen - {entity["id"] for entity in candidates}
    if unknown:
        log.warning("entity selection named ids that were not offered: %s", sorted(unknown))
    return [entity["id"] for entity in candidates if entity["id"] in chosen], results
