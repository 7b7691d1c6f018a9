"""A text's layout ends sentences: blank lines and Markdown blocks, in the indexer and citations."""

from __future__ import annotations

from nodes.citations.text import sentences
from nodes.indexing.extract_spacy import extract_sync
from nodes.indexing.extraction_types import PassageInput
from nodes.text_layout import blocks, layout

NOTE = (
    "# Blue Harbor\n\n"
    "Blue Harbor is a 1994 drama film directed by Mara Velten. It was shot in Gdansk in six weeks\n"
    "\n"
    "## Cast\n"
    "- Anna Lis plays his wife\n"
    "1. Piotr Zielinski plays a sailor\n"
    "> Quoted line"
)
#: The note's sentences, cut alike by the citations and by spaCy.
NOTE_SENTENCES = (
    "Blue Harbor",
    "Blue Harbor is a 1994 drama film directed by Mara Velten.",
    "It was shot in Gdansk in six weeks",
    "Cast",
    "Anna Lis plays his wife",
    "Piotr Zielinski plays a sailor",
    "Quoted line",
)


def test_layout_blanks_block_marks_and_keeps_offsets() -> None:
    plain, starts = layout(NOTE)
    assert len(plain) == len(NOTE)
    assert plain.startswith("  Blue Harbor\n\n")
    assert [plain[s : plain.index("\n", s) if "\n" in plain[s:] else None] for s in starts] == [
        "Blue Harbor",
        "Blue Harbor is a 1994 drama film directed by Mara Velten. It was shot in Gdansk in six weeks",
        "Cast",
        "Anna Lis plays his wife",
        "Piotr Zielinski plays a sailor",
        "Quoted line",
    ]


def test_a_mark_inside_a_paragraph_is_words() -> None:
    text = "The league is the 2. Bundesliga.\nA line - with a dash. And 3) a count."
    assert layout(text) == (text, [0])
    assert blocks(text) == [text]


def test_texts_without_layout_are_unchanged() -> None:
    assert layout("  Plain text. Two sentences.") == ("  Plain text. Two sentences.", [2])
    assert layout("") == ("", [])
    assert blocks(" \n\n ") == []


def test_citation_sentences_never_cross_a_block() -> None:
    assert sentences(NOTE) == list(NOTE_SENTENCES)


def test_spacy_units_follow_the_layout() -> None:
    outcome = extract_sync(
        [
            PassageInput(1, "notes", NOTE),
            PassageInput(
                2,
                "Maiden Japan",
                "Maiden Japan is a live EP by Iron Maiden.\nIt was recorded in Nagoya.",
            ),
        ]
    )
    assert not outcome.failures
    note, prose = outcome.extractions
    assert note.propositions == NOTE_SENTENCES
    # Every unit is the passage's own text, so a citation's sentence can be found in it.
    assert all(unit in NOTE for unit in note.propositions)
    assert prose.propositions == (
        "Maiden Japan is a live EP by Iron Maiden.",
        "It was recorded in Nagoya.",
    )
