"""Failure attribution: which step lost a question, computed only from facts a result line keeps.

The facts are the gold steps (a question's gold hops, each with its supporting passage and, where
the dataset gives one, its answer), what the method showed its reader (a RAG baseline's passages,
or every round of every GRASP sub-agent), each sub-agent's answer, and whether the final answer is
right. From them one cause is chosen:

- correct: the final answer matches a gold answer or alias exactly (the EM metric, so the table's
  correct count always equals the questions EM counts as right);
- plan (GRASP only, and only where the dataset gives a gold decomposition: MuSiQue): the
  sub-questions cannot cover the gold decomposition: none at all, fewer than the gold hops, or a
  longest chain of `#k` links shorter than gold's (a link gold has is missing or broken);
- otherwise the gold hops are walked in order and the first one that fails decides: a hop whose
  gold answer some sub-agent gave passed; else, if its gold passage never reached the agent, the
  cause is retrieval; if it was shown, reading. A RAG baseline has no hop answers: any gold
  passage missing from its prompt is retrieval, else reading;
- when every hop passed: synthesis if some sub-agent's answer holds the final gold answer (the
  hop answers were right, the final answer is not), else reading.

"Hop answer right" is looser than EM on purpose (intermediate answers are not graded answers):
the normalised gold answer is a contiguous run of the answer's normalised tokens, or their token
F1 is at least HOP_F1. The last gold hop also accepts the question's answer aliases.

HotpotQA and 2Wiki records give no decomposition, only supporting-fact titles: each supporting
passage is a gold hop without a question or answer, so plan is never chosen there, a hop passes
only by having been shown, and reading vs synthesis is decided by the final-answer test above.

A gold passage is matched by its stored passage id when the corpus holds it and the evidence ids
are passage ids; otherwise (a gold passage missing from the corpus, or the propositions-evidence
ablation, whose ids are proposition ids) by its title.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from evals.metrics import normalize_answer, token_f1

Cause = Literal["correct", "plan", "retrieval", "reading", "synthesis"]
CAUSES: tuple[str, ...] = get_args(Cause)
HOP_F1 = 0.6

GoldKey = tuple[str, int | str]


@dataclass(frozen=True)
class GoldStep:
    """One gold hop: its supporting passage and, from a decomposition, its question and answers."""

    hop: int
    title: str
    passage_id: int | None
    question: str | None = None
    answers: tuple[str, ...] = ()
    depends_on: tuple[int, ...] = ()


@dataclass(frozen=True)
class Shown:
    """One evidence item a reader saw: its id and its passage's title."""

    id: int
    title: str


@dataclass(frozen=True)
class RoundFacts:
    """One search round of a sub-agent: what it searched, chose and was shown, and its decision."""

    iteration: int
    search: str
    entities: tuple[str, ...]
    evidence: tuple[Shown, ...]
    decision: str


@dataclass(frozen=True)
class HopFacts:
    """One GRASP sub-question as planned and resolved, its rounds and the answer it gave."""

    index: int
    text: str
    resolved: str
    depends_on: tuple[int, ...]
    answer: str
    rounds: tuple[RoundFacts, ...]

    def shown(self) -> list[Shown]:
        """Every evidence item of every round."""
        return [item for r in self.rounds for item in r.evidence]


@dataclass(frozen=True)
class Verdict:
    """The cause and the fact that decided it, in words."""

    cause: Cause
    why: str


def answer_matches(answer: str, golds: Iterable[str]) -> bool:
    """Whether an intermediate answer holds a gold answer (see the module's note)."""
    tokens = normalize_answer(answer).split()
    if not tokens:
        return False
    for gold in golds:
        expected = normalize_answer(gold).split()
        if not expected:
            continue
        width = len(expected)
        if any(tokens[i : i + width] == expected for i in range(len(tokens) - width + 1)):
            return True
        if token_f1(answer, [gold]) >= HOP_F1:
            return True
    return False


def chain_depth(depends_on: Mapping[int, Sequence[int]]) -> int:
    """Steps on the longest chain of `#k` links (1 for independent steps, 0 for none).

    A reference to a step that does not exist counts as no step; a cycle is cut where it closes.
    """
    memo: dict[int, int] = {}

    def depth(node: int, path: frozenset[int]) -> int:
        if node not in memo:
            inner = path | {node}
            below = [
                depth(d, inner) for d in depends_on[node] if d in depends_on and d not in inner
            ]
            memo[node] = 1 + max(below, default=0)
        return memo[node]

    return max((depth(n, frozenset()) for n in depends_on), default=0)


def plan_gap(hops: Sequence[HopFacts], gold: Sequence[GoldStep]) -> str | None:
    """Why the sub-questions cannot cover the gold decomposition, or None when they can."""
    if not hops:
        return "the plan has no sub-questions"
    if len(hops) < len(gold):
        return f"{len(hops)} sub-question(s) for {len(gold)} gold hops"
    planned = chain_depth({h.index: h.depends_on for h in hops})
    needed = chain_depth({s.hop: s.depends_on for s in gold})
    if planned < needed:
        return f"the longest #k chain has {planned} step(s), gold's has {needed}: a link is missing"
    return None


def gold_key(step: GoldStep, by_title: bool) -> GoldKey:
    """How a gold passage is recognised among evidence: by id where possible, else by title."""
    if step.passage_id is not None and not by_title:
        return ("id", step.passage_id)
    return ("title", step.title)


def shown_keys(items: Iterable[Shown], by_title: bool) -> set[GoldKey]:
    """Evidence items as keys comparable with `gold_key` (both id and title keys)."""
    keys: set[GoldKey] = set()
    for item in items:
        if not by_title:
            keys.add(("id", item.id))
        keys.add(("title", item.title))
    return keys


def recall(gold: Sequence[GoldStep], seen: set[GoldKey], by_title: bool) -> float | None:
    """The share of distinct gold passages among the keys seen (None without gold passages)."""
    wanted = {gold_key(step, by_title) for step in gold}
    return len(wanted & seen) / len(wanted) if wanted else None


def is_decomposed(gold: Sequence[GoldStep]) -> bool:
    """Whether the gold hops come from a decomposition (questions and answers), not titles only."""
    return bool(gold) and all(step.question is not None and step.answers for step in gold)


def label(
    correct: bool,
    gold: Sequence[GoldStep],
    seen: set[GoldKey],
    hops: Sequence[HopFacts] | None,
    final_answers: Sequence[str],
    by_title: bool = False,
) -> Verdict | None:
    """The cause of a question's outcome; `hops` is None for a method without sub-agents.

    None when the question is wrong and has no gold passages to attribute it by.
    """
    if correct:
        return Verdict("correct", "the final answer matches a gold answer")
    if not gold:
        return None
    missing = [s for s in gold if gold_key(s, by_title) not in seen]
    if hops is None:
        if missing:
            return Verdict("retrieval", f"gold passage {missing[0].title!r} was not shown")
        return Verdict("reading", "every gold passage was shown, the answer is wrong")
    if is_decomposed(gold):
        gap = plan_gap(hops, gold)
        if gap is not None:
            return Verdict("plan", gap)
    answers = [h.answer for h in hops]
    for step in gold:
        if step.answers and any(answer_matches(a, step.answers) for a in answers):
            continue
        where = f"gold hop {step.hop} ({step.title!r})"
        if step in missing:
            return Verdict("retrieval", f"{where} never reached the agent")
        if step.answers:
            return Verdict(
                "reading", f"{where} was shown, no sub-agent answered {step.answers[0]!r}"
            )
    if any(answer_matches(a, final_answers) for a in answers):
        return Verdict("synthesis", "a sub-agent's answer holds the gold answer, the final one not")
    return Verdict(
        "reading", "the gold passages were shown, no sub-agent's answer holds the answer"
    )
