"""Repair of a linked plan's `#k` links: make every sub-question's text and its `needs` agree.

A small model often knows that a step needs an earlier answer but does not write `#k`, or writes
the earlier answer in words ("that state", "he", a guessed name). Each repair below has one
meaning; what has none (a `#k` naming a step that does not exist, a cycle) is left for
`build_dag` to reject, so the planner can ask again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from nodes.agent.plan_dag import PLACEHOLDER, PlanError, SubQuestion, build_dag, placeholders
from nodes.agent.plan_prune import drop_identity_steps
from nodes.agent.plan_references import (
    DEFINITE,
    LIST_NUMBER,
    PLURAL_PRONOUN,
    answer_phrases,
    append_ref,
    new_names,
    replace_name,
    replace_phrase,
    replace_referring,
)

#: What a listed need the text has no place for becomes: appended as "(#k)", or dropped.
UnwrittenNeeds = Literal["append", "drop"]


@dataclass(frozen=True)
class DraftStep:
    """One sub-question as the model wrote it: its text and the earlier steps it says it needs."""

    question: str
    needs: tuple[int, ...] = ()


@dataclass(frozen=True)
class Repair:
    """One change made to a plan, for logs and the planner benchmark."""

    step: int
    kind: str  # dropped_need | renamed_ref | listed_ref | phrase | pronoun | guess | appended
    #           | identity (the step was dropped: nodes/agent/plan_prune.py)
    detail: str

    def __str__(self) -> str:
        return f"sub-question {self.step}: {self.kind} ({self.detail})"


def _link(
    text: str, refs: Sequence[int], steps: Sequence[str], known: Sequence[str], *, append: bool
) -> tuple[str, str, str] | None:
    """Write #k for `refs` into `text`: (new text, repair kind, what was replaced), or None."""
    for ref in sorted(refs, reverse=True):
        for phrase in answer_phrases(steps[ref - 1]):
            replaced = replace_phrase(text, phrase, ref)
            if replaced is not None:
                return replaced, "phrase", f"{phrase!r} → #{ref}"
    replaced = replace_referring(text, refs)
    if replaced is not None:
        return replaced, "pronoun", f"{', '.join(f'#{r}' for r in refs)} written in"
    if len(refs) == 1 and (definite := DEFINITE.search(text)) is not None:
        replaced = f"{text[: definite.start()]}#{refs[0]}{text[definite.end() :]}"
        return replaced, "phrase", f"{definite.group(0)!r} → #{refs[0]}"
    guesses = new_names(text, known)
    if len(guesses) == 1 and len(refs) == 1:
        return replace_name(text, guesses[0], refs[0]), "guess", f"{guesses[0]!r} → #{refs[0]}"
    if append:
        return append_ref(text, refs), "appended", ", ".join(f"#{r}" for r in refs)
    return None


def _clean(drafts: Sequence[DraftStep]) -> list[DraftStep]:
    """Drop blank steps and the model's own list numbers, renumbering the links after them."""
    kept: list[DraftStep] = []
    mapping: dict[int, int] = {}
    for original, draft in enumerate(drafts, start=1):
        text = LIST_NUMBER.sub("", draft.question).strip()
        if text:
            kept.append(DraftStep(text, draft.needs))
            mapping[original] = len(kept)

    def renumber(match: re.Match[str]) -> str:
        ref = int(match[1])
        if ref in mapping:
            return f"#{mapping[ref]}"
        if 1 <= ref <= len(drafts):
            raise PlanError(f"a sub-question refers to #{ref}, which is empty")
        return match[0]  # a step that never existed: build_dag names it

    return [
        DraftStep(
            PLACEHOLDER.sub(renumber, d.question),
            tuple(mapping[k] for k in d.needs if k in mapping),
        )
        for d in kept
    ]


def link_plan(
    question: str, drafts: Sequence[DraftStep], unwritten_needs: UnwrittenNeeds = "append"
) -> tuple[list[SubQuestion], list[Repair]]:
    """Repair the links of a linked plan, validate it as a DAG and say what was changed.

    For step j: needs that are not earlier steps are dropped; a `#k` in the text that names no
    earlier step is renamed when exactly one listed need is missing from the text; a listed
    need missing from the text is written in (over the earlier step's answer phrase, a pronoun
    or demonstrative, or a name found in neither the question nor the earlier steps; else
    appended as "(#k)", or with `unwritten_needs="drop"` dropped: the text stands alone); a
    `#k` in the text that is not listed counts as listed; and a later step with no link at all
    that plainly points back (the earlier answer's phrase, a pronoun, a guessed name) is linked.
    Last, a step that only asks who or what a name of the question is goes, its name written
    where later steps used its answer (`drop_identity_steps`).
    Raises PlanError (from build_dag) for what none of this can mend.
    """
    steps = _clean(drafts)
    texts = [s.question for s in steps]
    repairs: list[Repair] = []
    consumed: set[int] = set()
    for j, step in enumerate(steps, start=1):
        text = texts[j - 1]
        needs = sorted({k for k in step.needs if 1 <= k < j})
        for dropped in sorted(set(step.needs) - set(needs)):
            repairs.append(Repair(j, "dropped_need", f"#{dropped} is not an earlier step"))
        written = placeholders(text)
        missing = [k for k in needs if k not in written]
        # A self or forward #k where the needs name one earlier step that the text lacks: a slip.
        wrong = [r for r in written if r >= j or r < 1]
        if len(wrong) == 1 and len(missing) == 1:
            text = re.sub(rf"#{wrong[0]}(?!\d)", f"#{missing[0]}", text)
            repairs.append(Repair(j, "renamed_ref", f"#{wrong[0]} → #{missing[0]}"))
            missing = []
        for ref in sorted(set(written) - set(needs)):
            if 1 <= ref < j:
                repairs.append(Repair(j, "listed_ref", f"#{ref} added to needs"))
        known = [question, *texts[: j - 1]]
        if missing:
            linked = _link(text, missing, texts, known, append=unwritten_needs == "append")
            if linked is None:
                # The 1.5B planner lists the step before as a need on most steps, comparisons
                # included; appended, its answer lands in a question that was whole ("What is the
                # name of Alexandria International Airport (New York)?").
                detail = ", ".join(f"#{k}" for k in missing)
                repairs.append(Repair(j, "dropped_need", f"{detail} listed, unused by the text"))
            else:
                text, kind, detail = linked
                repairs.append(Repair(j, kind, detail))
        elif j > 1 and not written and not needs:
            linked = _back_reference(text, j, texts, known, consumed)
            if linked is not None:
                text, kind, detail = linked
                repairs.append(Repair(j, kind, detail))
        texts[j - 1] = text
        consumed.update(placeholders(text))
    texts, identities = drop_identity_steps(question, texts)
    repairs += [Repair(k, "identity", f"asked only what {name!r} is") for k, name in identities]
    return build_dag(texts), repairs


def _back_reference(
    text: str, j: int, texts: Sequence[str], known: Sequence[str], consumed: set[int]
) -> tuple[str, str, str] | None:
    """Link an unlinked step that plainly refers to an earlier answer, or None."""
    earlier = list(range(1, j))
    for ref in reversed(earlier):
        for phrase in answer_phrases(texts[ref - 1]):
            replaced = replace_phrase(text, phrase, ref)
            if replaced is not None:
                return replaced, "phrase", f"{phrase!r} → #{ref}"
    # Steps nobody has used yet are what a pronoun most likely means; the last of them if singular.
    open_steps = [k for k in earlier if k not in consumed] or [j - 1]
    plural = PLURAL_PRONOUN.search(text) is not None
    refs = open_steps if plural else [open_steps[-1]]
    replaced = replace_referring(text, refs)
    if replaced is not None:
        return replaced, "pronoun", f"{', '.join(f'#{r}' for r in refs)} written in"
    guesses = new_names(text, known)
    if len(guesses) == 1:
        ref = open_steps[-1]
        return replace_name(text, guesses[0], ref), "guess", f"{guesses[0]!r} → #{ref}"
    return None
