"""The yes check: a "yes" stands only if each yes/no hop's subject passage states its predicate.

A small reader asked "Are Frozen and Escape from the Dark both animated features?" says "yes"
with both passages before it, though the second calls the film a family drama. The plan has
already split such a question into yes/no steps ("Is Escape from the Dark an animated
feature?"), one subject each. A step's subject is the title of one of its own passages; when
that passage says nothing of a content word of the step's predicate ("animated", "feature"),
the step is not borne out, and the answer is "no". Steps that name no passage title, or whose
predicate still joins several things, are not judged; nor are "same X" questions, which no
single passage can settle.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nodes.agent.plan_dag import SubQuestion
from nodes.citations.text import word_set
from store.retrieval import PassageText

_AUXILIARIES = word_set("is are was were does do did has have had can could")
_JOINERS = word_set("and or both either neither same")
# Words that carry no claim of their own, and verbs a passage states a fact without ("X is a
# city in Ohio" says where X is located): a passage need not say them.
_FUNCTION_WORDS = word_set(
    """a an the of in on at to for from by with as into about than that this these those
    it its his her their he she they one also ever still s any some all there
    be been being is are was were do does did have has had can could
    located situated based known considered called named"""
)
_WORD = re.compile(r"\w+")
_PARENTHESIS = re.compile(r"\s*\([^)]*\)")
_STEM = 4  # words share a stem when their first four letters agree ("British", "Britain")


def words(text: str) -> list[str]:
    """Lower-case word tokens, punctuation dropped, articles kept.

    Unlike citations' `normalise`: "the" before a name whose title has none stops the match
    (skipping it was rejected, docs/experiments.md).
    """
    return _WORD.findall(text.casefold())


def says_yes(answer: str) -> bool:
    """Whether `answer` is a bare "yes"."""
    return words(answer) == ["yes"]


def page_name(passage: PassageText) -> str:
    """A passage's title without its parenthesis: "Frozen (2013 film)" names Frozen."""
    return _PARENTHESIS.sub("", passage.title).strip()


def same_stem(a: str, b: str) -> bool:
    """Whether two words are one word's forms; short words must match exactly."""
    if len(a) < _STEM or len(b) < _STEM:
        return a == b
    return a[:_STEM] == b[:_STEM]


@dataclass(frozen=True)
class UnsupportedYes:
    """Step `hop`'s passage on `subject` leaves `missing`, words of the step's predicate, unsaid."""

    hop: int
    subject: str
    missing: tuple[str, ...]

    def why(self) -> str:
        """One line for the run's justification."""
        said = ", ".join(f'"{w}"' for w in self.missing)
        return (
            f"step {self.hop}'s passage on {self.subject} does not say {said}, so the answer is no"
        )


def subject_and_predicate(
    sub_question: str, passages: Sequence[PassageText]
) -> tuple[PassageText, list[str]] | None:
    """The step's subject page (the passage whose name opens it) and its predicate's words.

    None for a step that is not yes/no, names no passage, or whose predicate is not judged.
    """
    tokens = words(sub_question)
    if not tokens or tokens[0] not in _AUXILIARIES:
        return None
    rest = tokens[1:]
    best: tuple[PassageText, int] | None = None
    for passage in passages:
        name = words(page_name(passage))
        # An article before the name ("Is the Woman's Viewpoint …") is not skipped: measured,
        # skipping it judged more steps and turned right answers too (docs/experiments.md).
        if name and rest[: len(name)] == name and (best is None or len(name) > best[1]):
            best = (passage, len(name))
    if best is None:
        return None
    predicate = rest[best[1] :]
    if not predicate or "#" in sub_question or _JOINERS.intersection(predicate):
        return None
    return best[0], [w for w in predicate if w not in _FUNCTION_WORDS]


@dataclass(frozen=True)
class StepPage:
    """Yes/no step `hop`'s subject page, and the words of its predicate the page leaves unsaid."""

    hop: int
    page: PassageText
    missing: tuple[str, ...]


def step_pages(
    steps: Sequence[SubQuestion], pages: Mapping[int, Sequence[PassageText]]
) -> list[StepPage]:
    """Each judged yes/no step's subject page among `pages[step]`, in plan order."""
    found: list[StepPage] = []
    for sq in steps:
        read = pages.get(sq["index"], [])
        judged = subject_and_predicate(sq["text"], read)
        if judged is None or not judged[1]:
            continue
        page, predicate = judged
        stated = words(f"{page.title} {page.text}")
        missing = tuple(w for w in predicate if not any(same_stem(w, t) for t in stated))
        found.append(StepPage(sq["index"], page, missing))
    return found


def unsupported_yes(
    answer: str,
    sub_questions: Sequence[SubQuestion],
    hop_passages: Mapping[int, Sequence[int]],
    texts: Mapping[int, PassageText],
) -> UnsupportedYes | None:
    """The first yes/no step whose subject passage leaves its predicate unsaid; None otherwise."""
    if not says_yes(answer):
        return None
    pages = {k: [texts[i] for i in ids if i in texts] for k, ids in hop_passages.items()}
    for step in step_pages(sub_questions, pages):
        if step.missing:
            return UnsupportedYes(step.hop, page_name(step.page), step.missing)
    return None
