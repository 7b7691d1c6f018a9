"""How a plan step's text refers to an earlier step's answer: phrases, pronouns, guessed names.

The text-level recognisers `plan_links` repairs a plan with; each returns the rewritten text, or
None when the text holds no such reference.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from nodes.agent.plan_dag import PLACEHOLDER
from nodes.citations.text import word_set

# Models number their list items themselves ("1. Who …"); that prefix is not part of the step.
LIST_NUMBER = re.compile(r"^\s*\d+\s*[.)]\s+")
_AUXILIARIES = word_set(
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
DEFINITE = re.compile(rf"\bthe\s+(?:{_AGENT_NOUNS})\b", re.I)
_SUBJECT_PRONOUN = re.compile(r"\b(?:he|she|him|it)\b", re.I)
_POSSESSIVE_PRONOUN = re.compile(r"\b(?:his|its)\b", re.I)
_HER = re.compile(r"\bher\b(?P<next>\s+\w+)?", re.I)
PLURAL_PRONOUN = re.compile(r"\b(?:they|them|their)\b", re.I)
# After "her", these words mean it is an object ("gave her the prize"), not a possessive.
_NOT_A_NOUN = word_set(
    "the a an in on at to for from of by with and or as when where after before during"
)
# Capitalised runs, allowing the small words inside names ("Journal of Psychotherapy Integration").
_NAME = re.compile(
    r"\b[A-Z][\w.'&-]*(?:\s+(?:(?:of|the|de|del|la|le|von|van|and|for|on)\s+)*[A-Z][\w.'&-]*)*"
)
_SENTENCE_OPENERS = word_set(
    "who what which where when why how in on at for from of by to is was are were did "
    "does do name list give the a an"
)


def fold(text: str) -> str:
    """Lower case without accents, so "Tekezé" in a step matches "Tekeze" in the question."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def words_of(text: str) -> list[str]:
    """The folded words of `text`, #k placeholders kept whole."""
    return re.findall(r"[\w#'-]+", fold(text))


def answer_phrases(question: str) -> list[str]:
    """Phrases a later step could use for this step's answer, longest first.

    "Who was the first president of #1?" → "first president of #1"; "Which record label
    signed X?" → "record label", "record"… (only the words before the first verb-like word).
    """
    text = re.sub(r"[?.!]+$", "", question.strip()).strip()
    folded = fold(text)
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


def replace_phrase(text: str, phrase: str, ref: int) -> str | None:
    """`text` with "the/that/this <phrase>" (or the bare described phrase) replaced by #ref.

    A name's possessive counts as the determiner too: "Hans Edler's country" is the answer of
    "Which country did Hans Edler live in?".
    """
    # fold keeps the length of plain text; when accents changed it, give up rather than cut badly.
    if len(fold(text)) != len(text):
        return None
    words = r"\s+".join(re.escape(w) for w in phrase.split())
    determiner = r"(?:the|that|this|these|those|said)\s+"
    # A one-word kind ("state") needs its determiner; a longer described phrase may stand bare.
    pattern = (
        rf"\b{determiner}{words}\b"
        if len(phrase.split()) == 1
        else rf"\b(?:{determiner})?{words}\b"
    )
    match = re.search(pattern, fold(text))
    if match is None:
        possessive = rf"\b(?:[A-Z][\w.-]*\s+){{0,3}}[A-Z][\w.-]*'s\s+(?i:{words})\b"
        match = re.search(possessive, text)
    if match is None:
        return None
    return f"{text[: match.start()]}#{ref}{text[match.end() :]}"


def replace_referring(text: str, refs: Sequence[int]) -> str | None:
    """`text` with its first pronoun or demonstrative ("that city") replaced by #k; None if none.

    Plural forms take every ref ("#1 and #2"); singular forms take the last one. A pronoun after
    a name or a #k in the same text most likely means that one ("Where did Ann Lee live when
    she died?"), so only pronouns before any name count.
    """
    joined = " and ".join(f"#{ref}" for ref in refs)
    single = f"#{refs[-1]}"
    names = [m.start() for m in PLACEHOLDER.finditer(text)]
    names += [m.start() for m in _NAME.finditer(text) if fold(m.group(0)) not in _SENTENCE_OPENERS]
    first_name = min(names, default=len(text))
    candidates: list[tuple[int, int, str]] = [
        (m.start(), m.end(), single if len(refs) == 1 else joined)
        for m in _DEMONSTRATIVE.finditer(text)
    ]
    for pattern, replacement in (
        (_SUBJECT_PRONOUN, single),
        (_POSSESSIVE_PRONOUN, f"{single}'s"),
        (PLURAL_PRONOUN, joined),
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


def is_name(span: str) -> bool:
    """Whether `span` is one capitalised run as `_NAME` reads names ("Haymo of Faversham")."""
    return _NAME.fullmatch(span.strip()) is not None


def new_names(text: str, known: Sequence[str]) -> list[str]:
    """Capitalised names in `text` that no `known` text mentions: likely guessed answers."""
    known_words = set(words_of(" ".join(known)))
    found: list[str] = []
    for match in _NAME.finditer(text):
        name = match.group(0)
        first, _, rest = name.partition(" ")
        if match.start() == 0 and fold(first) in _SENTENCE_OPENERS:
            name = rest.strip()
        words = [w for w in words_of(name) if w not in _SENTENCE_OPENERS]
        # A name counts as new when most of its words occur nowhere in the question or steps.
        if words and sum(w not in known_words for w in words) * 2 > len(words):
            found.append(name)
    return found


def replace_name(text: str, name: str, ref: int) -> str:
    """`text` with `name` (and an article before it: "the #1", not "the Acme Company") as #ref."""
    return re.sub(rf"(?:\b(?:the|a|an)\s+)?{re.escape(name)}", f"#{ref}", text, count=1, flags=re.I)


def append_ref(text: str, refs: Sequence[int]) -> str:
    """`text` with the refs appended as "(#k)" before its question mark."""
    joined = " and ".join(f"#{ref}" for ref in refs)
    stem = text.rstrip().rstrip("?.!").rstrip()
    return f"{stem} ({joined})?"
