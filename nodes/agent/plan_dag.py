"""The planner's #k placeholders as a dependency DAG: parse, validate, schedule, substitute.

Its steps are the SubQuestion records the agent keeps in its state, so they are a TypedDict of plain
values; TypedDict comes from typing_extensions because pydantic (which builds the schemas Studio
shows) refuses typing.TypedDict before Python 3.12.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from typing_extensions import TypedDict

PLACEHOLDER = re.compile(r"#(\d+)")
# Models often number their list items themselves ("1. Who …"); that prefix is not part of the step.
_LIST_NUMBER = re.compile(r"^\s*\d+\s*[.)]\s+")


class PlanError(ValueError):
    """A plan that cannot be run: a reference to a missing step, a self-reference or a cycle."""


class SubQuestion(TypedDict):
    """One plan step, numbered from 1; `text` may hold #k placeholders, `depends_on` has those k."""

    index: int
    text: str
    depends_on: list[int]


def inner_hops(sub_questions: Sequence[SubQuestion]) -> set[int]:
    """The sub-questions a later one builds on: their answers fill its `#k`."""
    return {k for sq in sub_questions for k in sq["depends_on"]}


def final_hops(sub_questions: Sequence[SubQuestion]) -> set[int]:
    """The sub-questions no other one builds on: the final answer comes from theirs."""
    return {sq["index"] for sq in sub_questions} - inner_hops(sub_questions)


def placeholders(text: str) -> list[int]:
    """The step numbers referenced by `#k` in `text`, sorted and without repeats."""
    return sorted({int(match) for match in PLACEHOLDER.findall(text)})


def _renumber(text: str, mapping: Mapping[int, int]) -> str:
    return PLACEHOLDER.sub(
        lambda m: f"#{mapping[int(m.group(1))]}" if int(m.group(1)) in mapping else m.group(0),
        text,
    )


def find_cycle(depends_on: Mapping[int, Sequence[int]]) -> list[int] | None:
    """A dependency cycle as a closed path [a, b, …, a], or None when the graph is acyclic."""
    state: dict[int, int] = {}  # 1 = on the current path, 2 = finished
    path: list[int] = []

    def visit(node: int) -> list[int] | None:
        state[node] = 1
        path.append(node)
        for dep in sorted(depends_on.get(node, ())):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state and (found := visit(dep)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(depends_on):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def build_dag(sub_questions: Sequence[str]) -> list[SubQuestion]:
    """Validate the planner's sub-questions and return them as numbered steps.

    Repairs what has one meaning: list numbering the model added is stripped, and blank entries
    are dropped with the placeholders after them renumbered. Raises PlanError, whose message says
    what is wrong, for no steps, a reference to a step that does not exist (or was blank), a step
    that refers to itself, or steps that depend on each other in a cycle.
    """
    kept: list[str] = []
    mapping: dict[int, int] = {}
    for original, raw in enumerate(sub_questions, start=1):
        text = _LIST_NUMBER.sub("", raw).strip()
        if text:
            kept.append(text)
            mapping[original] = len(kept)
    if not kept:
        raise PlanError("the plan has no sub-questions")
    steps: list[SubQuestion] = []
    for index, raw in enumerate(kept, start=1):
        original = next(o for o, new in mapping.items() if new == index)
        for ref in placeholders(raw):
            if ref not in mapping:
                raise PlanError(
                    f"sub-question {original} refers to #{ref}, but the plan has no "
                    f"sub-question {ref} (it has {len(sub_questions)})"
                    if ref < 1 or ref > len(sub_questions)
                    else f"sub-question {original} refers to #{ref}, which is empty"
                )
            if ref == original:
                raise PlanError(f"sub-question {original} refers to its own answer (#{ref})")
        text = _renumber(raw, mapping)
        steps.append(SubQuestion(index=index, text=text, depends_on=placeholders(text)))
    cycle = find_cycle({step["index"]: step["depends_on"] for step in steps})
    if cycle is not None:
        chain = " → ".join(f"#{node}" for node in cycle)
        raise PlanError(f"sub-questions depend on each other in a cycle: {chain}")
    return steps


def ready(steps: Sequence[SubQuestion], answered: Collection[int]) -> list[int]:
    """Unanswered steps whose dependencies are all answered: these can run now, concurrently."""
    return [
        step["index"]
        for step in steps
        if step["index"] not in answered and all(dep in answered for dep in step["depends_on"])
    ]


def stranded(
    steps: Sequence[SubQuestion], answered: Collection[int], empty: Collection[int]
) -> list[int]:
    """Unanswered steps that build, directly or through other such steps, on an `empty` one.

    An empty step found nothing ("unknown"): a step built on it would search for that word.
    """
    skipped: list[int] = []
    for _ in steps:  # as many passes as steps: enough for a chain of skips in any order
        for step in steps:
            k = step["index"]
            built_on_nothing = any(dep in empty or dep in skipped for dep in step["depends_on"])
            if built_on_nothing and k not in answered and k not in skipped:
                skipped.append(k)
    return skipped


def substitute(text: str, answers: Mapping[int, str]) -> str:
    """Replace every answered `#k` in `text` by its answer; unanswered ones stay as they are."""
    return PLACEHOLDER.sub(
        lambda m: answers.get(int(m.group(1)), m.group(0)),
        text,
    )
