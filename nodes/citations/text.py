"""Text matching for citations: normalised words, sentences, and whether a text states an answer.

Pure and token-free: a citation is verified by reading, not by asking a model.
"""

from __future__ import annotations

import re
import unicodedata

from nodes.text_layout import blocks


def word_set(words: str) -> frozenset[str]:
    """The words of a space-separated list, as a set (word lists kept readable in the source)."""
    return frozenset(words.split())


_ARTICLES = re.compile(r"\b(a|an|the)\b")
# A possessive's "'s", so that "Finland's" states "Finland".
_POSSESSIVE = re.compile(r"['’]s\b")
# A sentence ends at . ! or ? followed by space and something a sentence starts with, but not
# after an initial ("G. Stanley Hall") or a title that precedes a name ("St. Louis", "Dr. Who"):
# cut there, the sentence stating "G. Stanley Hall" held neither half of the name.
_NOT_AFTER = "".join(rf"(?<!\b{word}\.)" for word in ("[A-Z]", "St", "Mt", "Mr", "Mrs", "Ms", "Dr"))
_SENTENCE_END = re.compile(rf"(?<=[.!?]){_NOT_AFTER}\s+(?=[\"'“‘(\[]?[A-Z0-9])")
# Words that say nothing about which passage holds a fact: left out of overlaps.
_STOP_WORDS = (
    "a an and are as at be by did do does for from had has have he her his how in is it its "
    "of on or she that the their them they this to was were what when where which who whom "
    "whose why with"
)
_STOP = word_set(_STOP_WORDS)
YES_NO = frozenset({"yes", "no"})


def normalise(text: str) -> str:
    """Lower case, accents, possessives and punctuation dropped, articles removed, spaces collapsed.

    SQuAD's answer normalisation, with accents folded ("Malmö" is found in "Malmo") and a
    possessive's "'s" dropped ("Norway" in "Norway's").
    """
    folded = unicodedata.normalize("NFKD", _POSSESSIVE.sub("", text.lower()))
    kept = "".join(
        ch
        for ch in folded
        if not unicodedata.combining(ch) and not unicodedata.category(ch).startswith("P")
    )
    return " ".join(_ARTICLES.sub(" ", kept).split())


def content_words(text: str) -> set[str]:
    """The normalised words of `text` that are not stop words."""
    return {w for w in normalise(text).split() if w not in _STOP}


def sentences(text: str) -> list[str]:
    """`text` cut into sentences (the whole text when it has no sentence end).

    No sentence runs across a blank line or into a heading or list item (`nodes.text_layout`).
    """
    parts = [
        part.strip()
        for block in blocks(text)
        for part in _SENTENCE_END.split(block)
        if part.strip()
    ]
    return parts or [text.strip()]


def is_yes_no(answer: str) -> bool:
    """Whether `answer` is a bare yes or no, which no passage states in so many words."""
    return normalise(answer) in YES_NO


def states(text: str, answer: str) -> bool:
    """Whether `text` states `answer`: its normalised words in a row, or all its content words.

    The second form accepts an answer whose words the passage writes apart ("Leyton, East
    London" in "Leyton, in East London"); a yes/no answer is never stated.
    """
    wanted = normalise(answer)
    if not wanted or wanted in YES_NO:
        return False
    found = normalise(text)
    if f" {wanted} " in f" {found} ":
        return True
    words = {w for w in wanted.split() if w not in _STOP}
    return len(words) > 1 and words <= set(found.split())


def overlap(query: str, text: str) -> int:
    """How many content words of `query` occur in `text`."""
    return len(content_words(query) & content_words(text))
