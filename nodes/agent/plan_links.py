"""Repair of a linked plan's `#k` links: make every sub-question's text and its `needs` agree.

A small model often knows that a step needs an earlier answer but does not write `#k`, or writes
the earlier answer in words ("that state", "he", a guessed name). Each repair below has one
meaning; what has none (a `#k` naming a step that does not exist, a cycle) is left for
`build_dag` to reject, so the planner can ask again.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from nodes.agent.plan_dag import PLACEHOLDER, PlanError, SubQuestion, build_dag, placeholders

#: What a listed need the text has no place for becomes: appended as "(#k)", or dropped.
UnwrittenNeeds = Literal["append", "drop"]


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Models number their list items themselves ("1. Who …"); that prefix is not part of the step.
_LIST_NUMBER = re.compile(r"^\s*\d+\s*[.)]\s+")
_AUXILIARIES = _word_set(
    "is was are were be been did does do has had have can could will would should may might"
)
# "What is X?" / "Who was X?": X describes the answer itself.
_DESCRIBED = re.compile(r"^(?:who|what|which)\s+(?:is|was|are|were)\s+(?P<np>.+)$")
# "Which company …" / "In what year …": the words after the wh-word name the answer's kind.
_KIND = re.compile(r"^(?:(?:in|at|on|from|for|to|of|by|with)\s+)?(?:which|what)\s+(?P<rest>.+)$")
# Nouns a demonstrative ("that state", "this person") can point back with.
_REFERENT_NOUNS = (
    "person|man|woman|people|individual|artist|performer|singer|author|writer|player|actor|"
    "actress|director|company|firm|organization|organisation|group|band|team|club|"
    "institution|association|city|town|country|state|county|province|region|place|location|"
    "river|island|year|date|time|period|event|war|film|movie|book|album|song|work|university|"
    "school|college|language|entity|one|answer"
)
_DEMONSTRATIVE = re.compile(
    rf"\b(?:this|that|these|those|the same|said)\s+(?:{_REFERENT_NOUNS})\b", re.I
)
# "the director": weaker than a demonstrative, so only read as a link when the step lists the
# need itself, and only for people and groups ("the date" of something is no earlier answer).
_AGENT_NOUNS = (
    "person|man|woman|individual|artist|performer|singer|author|writer|player|actor|actress|"
    "director|composer|founder|creator|inventor|producer|band|group|team"
)
_DEFINITE = re.compile(rf"\bthe\s+(?:{_AGENT_NOUNS})\b", re.I)
_SUBJECT_PRONOUN = re.compile(r"\b(?:he|she|him|it)\b", re.I)
_POSSESSIVE_PRONOUN = re.compile(r"\b(?:his|its)\b", re.I)
_HER = re.compile(r"\bher\b(?P<next>\s+\w+)?", re.I)
_PLURAL_PRONOUN = re.compile(r"\b(?:they|them|their)\b", re.I)
# After "her", these words mean it is an object ("gave her the prize"), not a possessive.
_NOT_A_NOUN = _word_set(
    "the a an in on at to for from of by with and or as when where after before during"
)
# Capitalised runs, allowing the small words inside names ("Journal of Psychotherapy Integration").
_NAME = re.compile(
    r"\b[A-Z][\w.'&-]*(?:\s+(?:(?:of|the|de|del|la|le|von|van|and|for|on)\s+)*[A-Z][\w.'&-]*)*"
)
_SENTENCE_OPENERS = _word_set(
    "who what which where when why how in on at for from of by to is was are were did "
    "does do name list give the a an"
)


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
    detail: str

    def __str__(self) -> str:
        return f"sub-question {self.step}: {self.kind} ({self.detail})"


def _fold(text: str) -> str:
    """Lower case without accents, so "Tekezé" in a step matches "Tekeze" in the question."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def _words(text: str) -> list[str]:
    return re.findall(r"[\w#'-]+", _fold(text))


def answer_phrases(question: str) -> list[str]:
    """Phrases a later step could use for this step's answer, longest first.

    "Who was the first president of #1?" → "first president of #1"; "Which record label
    signed X?" → "record label", "record"… (only the words before the first verb-like word).
    """
    text = re.sub(r"[?.!]+$", "", question.strip()).strip()
    folded = _fold(text)
    phrases: list[str] = []
    if described := _DESCRIBED.match(folded):
        np = re.sub(r"^(?:the|a|an)\s+", "", described["np"]).strip()
        # "What is the Tekeze River?" asks about a name, whose later mentions are not its answer.
        as_written = text[len(text) - len(np) :] if len(folded) == len(text) else np
        if np and len(np.split()) <= 8 and not as_written[:1].isupper():
            phrases.append(np)
    if kind := _KIND.match(folded):
        head: list[str] = []
        for word in kind["rest"].split()[:3]:
            if word in _AUXILIARIES or not word.isalpha():
                break
            head.append(word)
            phrases.append(" ".join(head))
    return sorted(set(phrases), key=lambda p: (-len(p), p))


def _replace_phrase(text: str, phrase: str, ref: int) -> str | None:
    """`text` with "the/that/this <phrase>" (or the bare described phrase) replaced by #ref.

    A name's possessive counts as the determiner too: "Hans Edler's country" is the answer of
    "Which country did Hans Edler live in?".
    """
    # _fold keeps the length of plain text; when accents changed it, give up rather than cut badly.
    if len(_fold(text)) != len(text):
        return None
    words = r"\s+".join(re.escape(w) for w in phrase.split())
    determiner = r"(?:the|that|this|these|those|said)\s+"
    # A one-word kind ("state") needs its determiner; a longer described phrase may stand bare.
    pattern = (
        rf"\b{determiner}{words}\b"
        if len(phrase.split()) == 1
        else rf"\b(?:{determiner})?{words}\b"
    )
    match = re.search(pattern, _fold(text))
    if match is None:
        possessive = rf"\b(?:[A-Z][\w.-]*\s+){{0,3}}[A-Z][\w.-]*'s\s+(?i:{words})\b"
        match = re.search(possessive, text)
    if match is None:
        return None
    return f"{text[: match.start()]}#{ref}{text[match.end() :]}"


def _replace_referring(text: str, refs: Sequence[int]) -> str | None:
    """`text` with its first pronoun or demonstrative ("that city") replaced by #k; None if none.

    Plural forms take every ref ("#1 and #2"); singular forms take the last one. A pronoun after
    a name or a #k in the same text most likely means that one ("Where did Ann Lee live when
    she died?"), so only pronouns before any name count.
    """
    joined = " and ".join(f"#{ref}" for ref in refs)
    single = f"#{refs[-1]}"
    names = [m.start() for m in PLACEHOLDER.finditer(text)]
    names += [m.start() for m in _NAME.finditer(text) if _fold(m.group(0)) not in _SENTENCE_OPENERS]
    first_name = min(names, default=len(text))
    candidates: list[tuple[int, int, str]] = [
        (m.start(), m.end(), single if len(refs) == 1 else joined)
        for m in _DEMONSTRATIVE.finditer(text)
    ]
    for pattern, replacement in (
        (_SUBJECT_PRONOUN, single),
        (_POSSESSIVE_PRONOUN, f"{single}'s"),
        (_PLURAL_PRONOUN, joined),
    ):
        for match in pattern.finditer(text):
            word = match.group(0).lower()
            value = f"{joined}'s" if word == "their" else replacement
            if match.start() < first_name:
                candidates.append((match.start(), match.end(), value))
    for match in _HER.finditer(text):
        following = (match["next"] or "").strip().lower()
        possessive = bool(following) and following not in _NOT_A_NOUN
        if match.start() < first_name:
            candidates.append(
                (match.start(), match.start() + 3, f"{single}'s" if possessive else single)
            )
    if not candidates:
        return None
    start, end, value = min(candidates)
    return f"{text[:start]}{value}{text[end:]}"


def new_names(text: str, known: Sequence[str]) -> list[str]:
    """Capitalised names in `text` that no `known` text mentions: likely guessed answers."""
    known_words = set(_words(" ".join(known)))
    found: list[str] = []
    for match in _NAME.finditer(text):
        name = match.group(0)
        first, _, rest = name.partition(" ")
        if match.start() == 0 and _fold(first) in _SENTENCE_OPENERS:
            name = rest.strip()
        words = [w for w in _words(name) if w not in _SENTENCE_OPENERS]
        # A name counts as new when most of its words occur nowhere in the question or steps.
        if words and sum(w not in known_words for w in words) * 2 > len(words):
            found.append(name)
    return found


def _replace_name(text: str, name: str, ref: int) -> str:
    """`text` with `name` (and an article before it: "the #1", not "the Acme Company") as #ref."""
    return re.sub(rf"(?:\b(?:the|a|an)\s+)?{re.escape(name)}", f"#{ref}", text, count=1, flags=re.I)


def _append_ref(text: str, refs: Sequence[int]) -> str:
    joined = " and ".join(f"#{ref}" for ref in refs)
    stem = text.rstrip().rstrip("?.!").rstrip()
    return f"{stem} ({joined})?"


def _link(
    text: str, refs: Sequence[int], steps: Sequence[str], known: Sequence[str], *, append: bool
) -> tuple[str, str, str] | None:
    """Write #k for `refs` into `text`: (new text, repair kind, what was replaced), or None."""
    for ref in sorted(refs, reverse=True):
        for phrase in answer_phrases(steps[ref - 1]):
            replaced = _replace_phrase(text, phrase, ref)
            if replaced is not None:
                return replaced, "phrase", f"{phrase!r} → #{ref}"
    replaced = _replace_referring(text, refs)
    if replaced is not None:
        return replaced, "pronoun", f"{', '.join(f'#{r}' for r in refs)} written in"
    if len(refs) == 1 and (definite := _DEFINITE.search(text)) is not None:
        replaced = f"{text[: definite.start()]}#{refs[0]}{text[definite.end() :]}"
        return replaced, "phrase", f"{definite.group(0)!r} → #{refs[0]}"
    guesses = new_names(text, known)
    if len(guesses) == 1 and len(refs) == 1:
        return _replace_name(text, guesses[0], refs[0]), "guess", f"{guesses[0]!r} → #{refs[0]}"
    if append:
        return _append_ref(text, refs), "appended", ", ".join(f"#{r}" for r in refs)
    return None


def _clean(drafts: Sequence[DraftStep]) -> list[DraftStep]:
    """Drop blank steps and the model's own list numbers, renumbering the links after them."""
    kept: list[DraftStep] = []
    mapping: dict[int, int] = {}
    for original, draft in enumerate(drafts, start=1):
        text = _LIST_NUMBER.sub("", draft.question).strip()
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
    return build_dag(texts), repairs


def _back_reference(
    text: str, j: int, texts: Sequence[str], known: Sequence[str], consumed: set[int]
) -> tuple[str, str, str] | None:
    """Link an unlinked step that plainly refers to an earlier answer, or None."""
    earlier = list(range(1, j))
    for ref in reversed(earlier):
        for phrase in answer_phrases(texts[ref - 1]):
            replaced = _replace_phrase(text, phrase, ref)
            if replaced is not None:
                return replaced, "phrase", f"{phrase!r} → #{ref}"
    # Steps nobody has used yet are what a pronoun most likely means; the last of them if singular.
    open_steps = [k for k in earlier if k not in consumed] or [j - 1]
    plural = _PLURAL_PRONOUN.search(text) is not None
    refs = open_steps if plural else [open_steps[-1]]
    replaced = _replace_referring(text, refs)
    if replaced is not None:
        return replaced, "pronoun", f"{', '.join(f'#{r}' for r in refs)} written in"
    guesses = new_names(text, known)
    if len(guesses) == 1:
        ref = open_steps[-1]
        return _replace_name(text, guesses[0], ref), "guess", f"{guesses[0]!r} → #{ref}"
    return None
