"""The plan of "Are A and B both X?", written from the question's words without a model call.

For this form the plan is fixed by the words: one yes/no step per name, "Is A X?" and "Is B X?",
which is what the yes check judges (`nodes/agent/yes_check.py`). The planner's call is about
400 tokens, near half of what such a question costs, so it is skipped. A question this module
cannot split for sure (more than one "and", a pronoun, "same X", which no single page settles)
goes to the planner as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nodes.agent.plan_dag import SubQuestion
from nodes.citations.text import word_set

#: "Are A and B both X?"
_PAIR_BOTH = re.compile(r"^(?P<verb>are|were) (?P<pair>.+?),? both (?P<what>[^?]+?)\s*\?$", re.I)
#: "Are both magazines, A and B, X?": the pair set off by commas.
_BOTH_PAIR = re.compile(
    r"^(?P<verb>are|were) both (?:[a-z][\w-]*(?: [a-z][\w-]*)*, )?(?P<pair>[^,]+), "
    r"(?P<what>[^,?]+?)\s*\?$",
    re.I,
)
#: "the films Nandhi", "the actress Zoe Levin": a common noun before the name is not the name.
_APPOSITIVE = re.compile(r"^the (?:[a-z][\w-]* )+(?=[A-Z0-9])")
_PRONOUNS = word_set("it he she they him her them this that these those its his their")
#: Predicates that open with these words name no thing to be ("located in Senegal").
_NO_NOUN = word_set("located situated based born in from of on at by part")
_PREPOSITIONS = word_set("in of from by for at on with to")
#: Vowel letters that sound as "y" or "w", so take "a": "a university", "a one-act play".
_A_BEFORE = ("uni", "use", "usu", "eu", "one")


@dataclass(frozen=True)
class FixedPlan:
    """A plan written without a model call: its sentence and its steps."""

    text: str
    sub_questions: list[SubQuestion]


def _singular(word: str) -> str:
    lowered = word.lower()
    if lowered.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if lowered.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]
    return word[:-1]


def _is_plural(word: str) -> bool:
    # "famous", "Swiss", "Paris" end in s and are one thing.
    lowered = word.lower()
    return len(word) > 3 and lowered.endswith("s") and not lowered.endswith(("ss", "us", "is"))


def _article(phrase: str) -> str:
    lowered = phrase.lower()
    vowel = lowered[:1] in set("aeiou") and not lowered.startswith(_A_BEFORE)
    return "an" if vowel else "a"


def predicate(what: str) -> str | None:
    """What each of the two is said to be, as one thing: "a film director", "located in Peru".

    A plural noun phrase becomes one of its kind (its head noun singular, with its article); an
    adjective or a phrase opening with a preposition or participle stays as written.
    """
    words = what.split()
    if not words or "same" in (w.lower() for w in words):
        return None
    if words[0] in _NO_NOUN:
        return what
    head = next((i - 1 for i, w in enumerate(words) if i and w in _PREPOSITIONS), len(words) - 1)
    if not _is_plural(words[head]):
        return what
    noun = [*words[:head], _singular(words[head]), *words[head + 1 :]]
    phrase = " ".join(noun)
    return f"{_article(phrase)} {phrase}"


def _name(text: str) -> str | None:
    name = _APPOSITIVE.sub("", text.strip())
    first = name.split()[0].lower() if name.split() else ""
    if not name or first in _PRONOUNS or " and " in name:
        return None
    return name


def both_plan(question: str) -> FixedPlan | None:
    """The two yes/no steps of a "both" question; None when the question is not one for sure."""
    text = " ".join(question.split())
    found = _PAIR_BOTH.match(text) or _BOTH_PAIR.match(text)
    if found is None or found["pair"].count(" and ") != 1:
        return None
    first, second = (_name(part) for part in found["pair"].split(" and "))
    being = predicate(found["what"])
    if first is None or second is None or being is None:
        return None
    verb = "Is" if found["verb"].lower() == "are" else "Was"
    steps = [
        SubQuestion(index=i, text=f"{verb} {name} {being}?", depends_on=[])
        for i, name in enumerate((first, second), start=1)
    ]
    return FixedPlan(f"Ask of {first} and of {second} whether each is {being}.", steps)
