"""A tiny two-hop corpus and the scripted replies that answer one question over it.

The corpus is written straight through the store (hash embeddings, fixed entities) so the ask
cases need no extractor. The scripted entity selections pick nothing, so the replies need no
entity ids: the faults cases test what happens around each call, not what the search finds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from graphs.models.scripted_model import ScriptedReply
from nodes.embedding import HashingEmbedder
from store.corpora import ensure_corpus
from store.graph_writes import (
    ExtractedEntity,
    ExtractedPassage,
    set_passage_embeddings,
    write_extracted,
)
from store.passage_writes import add_passages

CORPUS = "faults-ask"
QUESTION = "Where was the builder of the Harbor Mill born?"
ANSWER = "Kestrel Bay"
FIRST, SECOND = "Who built the Harbor Mill?", "Where was Sela Varn born?"
FIRST_STATEMENT = "The Harbor Mill was built by someone."
SECOND_STATEMENT = "Sela Varn was born somewhere."

# title, units, entities (name, type, indices of the units they occur in)
PASSAGES: list[tuple[str, list[str], list[tuple[str, str, tuple[int, ...]]]]] = [
    (
        "Harbor Mill",
        ["The Harbor Mill was built by Sela Varn.", "The Harbor Mill grinds rye for the town."],
        [("Harbor Mill", "Building", (0, 1)), ("Sela Varn", "Person", (0,))],
    ),
    (
        "Sela Varn",
        ["Sela Varn is an engineer.", "Sela Varn was born in Kestrel Bay in 1901."],
        [("Sela Varn", "Person", (0, 1)), ("Kestrel Bay", "City", (1,))],
    ),
    (
        "Odo Brack",
        ["Odo Brack is a baker.", "Odo Brack was born in Fennick in 1899."],
        [("Odo Brack", "Person", (0, 1)), ("Fennick", "City", (1,))],
    ),
]

# Each prompt's distinctive opening (see nodes/agent), and the tokens a reply to it costs.
PLAN, REWRITE = "You split a question", "You prepare a search"
SELECT, EVALUATE = "You steer a search", "You answer one sub-question"
SYNTHESIZE = "You give the final answer"
TOKENS = {PLAN: (300, 40), REWRITE: (120, 15), SELECT: (150, 8), EVALUATE: (200, 25)}
TOKENS[SYNTHESIZE] = (180, 12)

#: Where a kill lands: (name, the ledger call that must be done first, the reply made slow).
KILL_POINTS = {
    "after the planner": (("plan", None, None), "rewrite 1"),
    "mid sub-agent": (("rewrite", "sq1", 1), "select 1"),
    "before synthesis": (("evaluate", "sq2", 1), "synthesize"),
}


def build_corpus(engine: Engine) -> None:
    """Write the corpus (a no-op once written)."""
    embedder = HashingEmbedder()
    corpus = ensure_corpus(engine, CORPUS, embedder.name)
    rows = add_passages(engine, corpus, [(t, " ".join(units)) for t, units, _ in PASSAGES])
    todo = [(row, p) for row, p in zip(rows, PASSAGES, strict=True) if row.status != "done"]
    if todo:
        write_extracted(
            engine,
            corpus,
            [
                ExtractedPassage(
                    row.id,
                    units,
                    embedder.embed(units),
                    [ExtractedEntity(n, t, ix, embedder.embed([t])[0]) for n, t, ix in entities],
                )
                for row, (_, units, entities) in todo
            ],
        )
        set_passage_embeddings(
            engine, [r.id for r, _ in todo], embedder.embed([r.text for r, _ in todo])
        )


def _rule(node: str, *texts: str, reply: dict[str, Any], delay_s: float = 0.0) -> ScriptedReply:
    tokens_in, tokens_out = TOKENS[node]
    return ScriptedReply(
        when=[re.escape(node), *(re.escape(t) for t in texts)],
        reply=json.dumps(reply),
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        delay_s=delay_s,
    )


def replies(slow: str | None = None, delay_s: float = 3.0) -> list[ScriptedReply]:
    """Every reply of the uninterrupted run; the one named `slow` waits `delay_s` first."""

    def wait(name: str) -> float:
        return delay_s if name == slow else 0.0

    return [
        _rule(
            PLAN,
            f"Question: {QUESTION}",
            reply={
                "plan": "Find who built the mill, then where that person was born.",
                "sub_questions": [FIRST, "Where was #1 born?"],
            },
        ),
        _rule(
            REWRITE,
            f"Sub-question: {FIRST}",
            reply={"search_statement": FIRST_STATEMENT, "keywords": ["Harbor Mill", "built"]},
            delay_s=wait("rewrite 1"),
        ),
        _rule(
            SELECT,
            f"Looking for: {FIRST_STATEMENT}",
            reply={"entity_ids": []},
            delay_s=wait("select 1"),
        ),
        _rule(
            EVALUATE,
            f"Sub-question: {FIRST}",
            reply={
                "observations": ["The Harbor Mill was built by Sela Varn."],
                "action": "DONE",
                "answer": "Sela Varn",
            },
        ),
        _rule(
            REWRITE,
            f"Sub-question: {SECOND}",
            reply={"search_statement": SECOND_STATEMENT, "keywords": ["Sela Varn", "born"]},
        ),
        _rule(SELECT, f"Looking for: {SECOND_STATEMENT}", reply={"entity_ids": []}),
        _rule(
            EVALUATE,
            f"Sub-question: {SECOND}",
            reply={
                "observations": ["Sela Varn was born in Kestrel Bay."],
                "action": "DONE",
                "answer": ANSWER,
            },
        ),
        _rule(
            SYNTHESIZE,
            f"{SECOND} → {ANSWER}",
            reply={"answer": ANSWER, "justification": "Sela Varn built it and was born there."},
            delay_s=wait("synthesize"),
        ),
    ]


def write_rules(path: Path, rules: list[ScriptedReply]) -> str:
    """Save rules where GRASP_CHAT_MODEL=scripted:PATH reads them; returns that spec."""
    path.write_text(json.dumps([rule.model_dump() for rule in rules]))
    return f"scripted:{path}"
