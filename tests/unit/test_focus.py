"""Focused evidence: which sentences of a passage the evaluator reads, within a budget."""

from nodes.agent.focus import focus_query, focused_evidence, focused_text

TEXT = (
    "Alpha Corp is a firm. It was founded in 1990 in Paris. The chief is Bob Stone. "
    "Bob Stone was born in Lyon. Its logo is red."
)
QUERY = "Where was Bob Stone born?"


def test_the_sentence_sharing_most_words_is_kept_and_the_cuts_are_marked() -> None:
    assert focused_text(TEXT, QUERY, 40) == "… Bob Stone was born in Lyon. …"


def test_a_wider_budget_adds_the_next_best_sentence_in_text_order() -> None:
    assert (
        focused_text(TEXT, QUERY, 70) == "… The chief is Bob Stone. Bob Stone was born in Lyon. …"
    )


def test_gaps_between_kept_sentences_are_marked() -> None:
    query = "Alpha Corp chief born"
    assert focused_text(TEXT, query, 80) == (
        "Alpha Corp is a firm. … The chief is Bob Stone. Bob Stone was born in Lyon. …"
    )


def test_a_text_within_the_budget_or_a_zero_budget_is_whole() -> None:
    assert focused_text(TEXT, QUERY, len(TEXT)) == TEXT
    assert focused_text(TEXT, QUERY, 0) == TEXT


def test_a_lone_best_sentence_longer_than_the_budget_is_cut() -> None:
    assert focused_text(TEXT, QUERY, 10) == "… Bob Ston…"


def test_ties_keep_the_earlier_sentence() -> None:
    text = "Nothing here matches. Neither does this. Nor this one."
    assert focused_text(text, "Bob", 25) == "Nothing here matches. …"


PERSON = (
    "Anna Maria Weber (1714-1788) was a German painter and engraver, the second daughter of "
    "Johann Weber. Her middle name honours her godmother Maria Klee, a friend of Johann Weber."
)


def test_the_title_s_words_only_break_ties() -> None:
    question = "Who is Anna Maria Weber's godmother?"
    # Counted in full, the name wins the first sentence the budget; beyond the title, the fact.
    assert focused_text(PERSON, question, 100).startswith("Anna Maria Weber (1714-1788)")
    assert focused_text(PERSON, question, 100, "Anna Maria Weber") == (
        "… Her middle name honours her godmother Maria Klee, a friend of Johann Weber."
    )
    # Among sentences equal beyond the title, the one sharing more title words is kept.
    text = "A tree grows here. Anna Weber grows here too. Nothing else."
    assert focused_text(text, "Where does Anna Weber grow?", 30, "Anna Weber") == (
        "… Anna Weber grows here too. …"
    )


def test_evidence_items_keep_their_ids_titles_and_scores() -> None:
    item = {"id": 7, "title": "Alpha Corp", "text": TEXT, "score": 0.5}
    assert focused_evidence([item], QUERY, 40) == [
        {"id": 7, "title": "Alpha Corp", "text": "… Bob Stone was born in Lyon. …", "score": 0.5}
    ]
    assert focused_evidence([item], QUERY, 0) == [item]


def test_the_focus_query_joins_what_the_round_searched() -> None:
    assert focus_query("Who?", "X was born.", ["X", "born"]) == "Who? X was born. X born"
