"""The zero-token focus check counts gold facts kept, with and without the title's words."""

import json
from pathlib import Path

from evals.focus_check import kept_counts

FIRST = (
    "Anna Maria Weber (1714-1788) was a German painter and engraver, the second daughter of "
    "Johann Weber."
)
SECOND = "Her middle name honours her godmother Maria Klee, a friend of Johann Weber."
TEXT = f"{FIRST} {SECOND}"
MUSIQUE = [
    {
        "id": "3hop1__1_2_3",
        "question": "Where was the godmother of the Blue Door's painter born?",
        "answer": "Ulm",
        "question_decomposition": [
            {"question": "Who painted the Blue Door?", "answer": "Anna Maria Weber"},
            {
                "question": "Who is the godmother of #1?",
                "answer": "Maria Klee",
                "paragraph_support_idx": 0,
            },
            {"question": "Where was #2 born?", "answer": "Ulm", "paragraph_support_idx": 0},
        ],
        "paragraphs": [
            {
                "idx": 0,
                "title": "Anna Maria Weber",
                "paragraph_text": TEXT,
                "is_supporting": True,
            }
        ],
    }
]
HOTPOT = [
    {
        "_id": "h1",
        "level": "easy",
        "question": "Who is Anna Maria Weber's godmother?",
        "answer": "Maria Klee",
        "context": [["Anna Maria Weber", [FIRST, f" {SECOND}"]]],
        "supporting_facts": [["Anna Maria Weber", 1], ["Missing", 0]],
    }
]


def files(tmp_path: Path) -> tuple[Path, Path]:
    musique, hotpot = tmp_path / "musique.json", tmp_path / "hotpot.json"
    musique.write_text(json.dumps(MUSIQUE))
    hotpot.write_text(json.dumps(HOTPOT))
    return musique, hotpot


def test_a_fact_lost_to_the_title_s_words_is_kept_when_they_only_break_ties(
    tmp_path: Path,
) -> None:
    # Step 1 has no passage and step 3's answer is not in its passage: one fact per set counts.
    assert kept_counts(100, *files(tmp_path)) == {"musique": [1, 0, 1], "hotpotqa": [1, 0, 1]}


def test_a_budget_holding_the_whole_passage_keeps_every_fact(tmp_path: Path) -> None:
    assert kept_counts(1000, *files(tmp_path)) == {"musique": [1, 1, 1], "hotpotqa": [1, 1, 1]}
