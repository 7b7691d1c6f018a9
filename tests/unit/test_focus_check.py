"""The zero-token focus check counts gold facts kept, with and without the title's words."""

from evals.focus_check import kept_counts

TEXT = (
    "Anna Maria Weber (1714-1788) was a German painter and engraver, the second daughter of "
    "Johann Weber. Her middle name honours her godmother Maria Klee, a friend of Johann Weber."
)
MUSIQUE = [
    {
        "question_decomposition": [
            {
                "question": "Who painted the Blue Door?",
                "answer": "Anna Maria Weber",
                "paragraph_support_idx": None,
            },
            {
                "question": "Who is the godmother of #1?",
                "answer": "Maria Klee",
                "paragraph_support_idx": 0,
            },
            {"question": "Where was #2 born?", "answer": "Ulm", "paragraph_support_idx": 0},
        ],
        "paragraphs": [{"title": "Anna Maria Weber", "paragraph_text": TEXT}],
    }
]
HOTPOT = [
    {
        "question": "Who is Anna Maria Weber's godmother?",
        "context": [["Anna Maria Weber", [TEXT[:100], TEXT[100:]]]],
        "supporting_facts": [["Anna Maria Weber", 1], ["Missing", 0]],
    }
]


def test_a_fact_lost_to_the_title_s_words_is_kept_when_they_only_break_ties() -> None:
    # Step 1 has no passage and step 3's answer is not in its passage: one fact per set counts.
    assert kept_counts(100, MUSIQUE, HOTPOT) == {"musique": [1, 0, 1], "hotpotqa": [1, 0, 1]}


def test_a_budget_holding_the_whole_passage_keeps_every_fact() -> None:
    assert kept_counts(1000, MUSIQUE, HOTPOT) == {"musique": [1, 1, 1], "hotpotqa": [1, 1, 1]}
