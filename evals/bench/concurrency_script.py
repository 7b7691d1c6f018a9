"""`grasp bench concurrency`'s material: a made-up corpus of firms and a scripted GRASP run per question.

Every question compares two firms ("Which was founded first, A or B?"), so its plan has two
independent steps. The scripted replies follow the real GRASP prompts: a plan with two
sub-questions, per hop a rewrite, then `rounds` rounds of entity selection and evaluation (all but
the last ask to search again), and a synthesis that compares the two years.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from graphs.models.scripted_model import ScriptedReply
from nodes.agent import evaluate, plan_prompts, rewrite, select_entities, synthesize
from nodes.embedding import Embedder
from store.graph_writes import (
    ExtractedEntity,
    ExtractedPassage,
    set_passage_embeddings,
    write_extracted,
)
from store.grasp_retrieval import RetrievalParams, search_entities
from store.passage_writes import add_passages

_ONSETS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_CITIES = ("Velmar", "Osterlund", "Quarrow", "Brenfield", "Tallisk", "Morvane")


def _name(index: int) -> str:
    """A made-up two-word firm name, distinct for every index below 70**3."""
    syllables = []
    for _ in range(3):
        index, digit = divmod(index, len(_ONSETS) * len(_VOWELS))
        syllables.append(_ONSETS[digit // len(_VOWELS)] + _VOWELS[digit % len(_VOWELS)])
    return f"{''.join(syllables).capitalize()}n Works"


@dataclass(frozen=True)
class Firm:
    """One firm of the corpus and the three facts its passage states."""

    name: str
    year: int
    city: str
    founder: str

    def propositions(self) -> list[str]:
        """The passage's statements, one fact each."""
        return [
            f"{self.name} was founded in {self.year}.",
            f"{self.name} is based in {self.city}.",
            f"{self.name} was started by {self.founder}.",
        ]


def firms(count: int) -> list[Firm]:
    """`count` firms, deterministic, no two of a compared pair founded in the same year."""
    return [
        Firm(
            name=_name(i),
            year=1900 + (i * 37) % 120,
            city=_CITIES[i % len(_CITIES)],
            founder=f"{_name(i + 5000).split()[0]} Arden",
        )
        for i in range(count)
    ]


def build_corpus(engine: Engine, corpus: int, corpus_firms: list[Firm], embedder: Embedder) -> None:
    """Write one passage per firm through the normal write path, with passage embeddings."""
    rows = add_passages(
        engine, corpus, [(firm.name, " ".join(firm.propositions())) for firm in corpus_firms]
    )
    todo = [
        (row, firm) for row, firm in zip(rows, corpus_firms, strict=True) if row.status != "done"
    ]
    if not todo:
        return
    types = dict(
        zip(
            ("Organisation", "City", "Person"),
            embedder.embed(["Organisation", "City", "Person"]),
            strict=True,
        )
    )
    items = []
    for row, firm in todo:
        props = firm.propositions()
        entities = [
            ExtractedEntity(firm.name, "Organisation", (0, 1, 2), types["Organisation"]),
            ExtractedEntity(firm.city, "City", (1,), types["City"]),
            ExtractedEntity(firm.founder, "Person", (2,), types["Person"]),
        ]
        items.append(ExtractedPassage(row.id, props, embedder.embed(props), entities))
    write_extracted(engine, corpus, items)
    set_passage_embeddings(
        engine, [row.id for row, _ in todo], embedder.embed([row.text for row, _ in todo])
    )


@dataclass(frozen=True)
class Comparison:
    """A question about two firms and the answer the script leads to."""

    first: Firm
    second: Firm

    @property
    def question(self) -> str:
        """The question as asked."""
        return f"Which was founded first, {self.first.name} or {self.second.name}?"

    @property
    def answer(self) -> str:
        """The firm founded earlier."""
        return min(self.first, self.second, key=lambda firm: firm.year).name


def comparisons(corpus_firms: list[Firm], count: int) -> list[Comparison]:
    """`count` questions over distinct pairs of firms with different founding years."""
    pairs = []
    for i in range(0, len(corpus_firms) - 1, 2):
        first, second = corpus_firms[i], corpus_firms[i + 1]
        if first.year != second.year:
            pairs.append(Comparison(first, second))
    return pairs[:count]


def entity_id(engine: Engine, corpus: int, name: str, embedder: Embedder) -> int | None:
    """The id of the entity called `name`, found the way a sub-agent's search finds it."""
    found = search_entities(
        engine,
        corpus=corpus,
        query=embedder.embed([name])[0],
        keywords=name,
        params=RetrievalParams(),
    )
    return next((entity["id"] for entity in found.entities if entity["name"] == name), None)


def _opening(system_prompt: str) -> str:
    """A pattern for a prompt's first words: they tell which GRASP step is asking."""
    return re.escape(" ".join(system_prompt.split()[:5]))


def _reply(when: list[str], reply: dict[str, Any], times: int | None = None) -> ScriptedReply:
    return ScriptedReply(when=when, reply=json.dumps(reply), times=times)


def hop_rules(firm: Firm, firm_id: int | None, rounds: int) -> list[ScriptedReply]:
    """One hop's replies: rewrite, then `rounds` rounds of selection and evaluation.

    The first round follows the firm's entity; later rounds follow none (the firm is visited by
    then, and which other entities are offered depends on the corpus), as a model may.
    """
    sub_question = f"Sub-question: When was {firm.name} founded?"
    first, later = f"{firm.name} was founded in a year.", f"{firm.name} founding year."
    selecting, evaluating = _opening(select_entities.SYSTEM), _opening(evaluate.SYSTEM)
    rules = [
        _reply(
            [_opening(rewrite.SYSTEM), re.escape(sub_question)],
            {"search_statement": first, "keywords": [firm.name]},
        ),
        _reply(
            [selecting, re.escape(f"Looking for: {first}")],
            {"entity_ids": [firm_id] if firm_id is not None else []},
        ),
        _reply([selecting, re.escape(f"Looking for: {later}")], {"entity_ids": []}),
    ]
    if rounds > 1:
        again = {
            "observations": [],
            "action": "QUERY_AGAIN",
            "search_statement": later,
            "keywords": [firm.name, "founded"],
        }
        rules.append(_reply([evaluating, re.escape(sub_question)], again, times=rounds - 1))
    done = {
        "observations": [f"{firm.name} was founded in {firm.year}."],
        "action": "DONE",
        "answer": str(firm.year),
    }
    rules.append(_reply([evaluating, re.escape(sub_question)], done))
    return rules


def question_rules(
    comparison: Comparison, ids: tuple[int | None, int | None], rounds: int
) -> list[ScriptedReply]:
    """Every reply one GRASP run of `comparison` asks for, in the GRASP prompts' terms."""
    first, second = comparison.first, comparison.second
    steps = [f"When was {first.name} founded?", f"When was {second.name} founded?"]
    findings = f"1. {steps[0]} → {first.year}\n2. {steps[1]} → {second.year}"
    return [
        _reply(
            [_opening(plan_prompts.LINKED_SYSTEM), re.escape(f"Question: {comparison.question}")],
            {"plan": "Find both founding years and compare them.", "sub_questions": steps},
        ),
        *hop_rules(first, ids[0], rounds),
        *hop_rules(second, ids[1], rounds),
        _reply(
            [_opening(synthesize.SYSTEM), re.escape(findings)],
            {"answer": comparison.answer, "justification": "The earlier year wins."},
        ),
    ]
