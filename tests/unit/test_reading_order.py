"""The order the reader reads the hops' passages in, and the limit it stops at."""

from nodes.agent.synthesize import answer_first, reading_order, unique_ids


def test_hops_are_read_in_turn_each_passage_once_up_to_the_limit() -> None:
    hops = {2: [20, 21, 22], 1: [10, 20, 11]}
    assert reading_order(hops, 5) == [10, 20, 21, 11, 22]
    assert reading_order(hops, 2) == [10, 20]
    assert reading_order({}, 5) == []


def test_unique_ids_lists_every_hop_passage_once_in_hop_order() -> None:
    assert unique_ids({2: [7, 3], 1: [3, 5]}) == [3, 5, 7]


def test_a_passage_stating_the_hop_answer_moves_ahead_of_better_ranked_ones() -> None:
    hops = {1: [10, 11, 12], 2: [20, 21, 22]}
    texts = {
        10: "Paris. Paris is the capital of France.",
        11: "Seine. The Seine flows through Paris.",
        12: "Louvre. The Louvre opened in 1793 in Paris.",
        20: "Eiffel Tower. The tower is in Paris.",
        21: "Gustave Eiffel. Gustave Eiffel was born in Dijon.",
        22: "Dijon. Dijon lies in Burgundy.",
    }
    answers = {1: "1793", 2: "Dijon"}
    ordered = answer_first(hops, answers, texts)
    # Hop 1's answer is in 12 only; hop 2's in 21 and 22, which keep their rank between them.
    assert ordered == {1: [12, 10, 11], 2: [21, 22, 20]}
    assert reading_order(ordered, 2) == [12, 21]
    assert reading_order(hops, 2) == [10, 20]


def test_an_unknown_or_missing_answer_keeps_the_retrieval_rank() -> None:
    hops = {1: [10, 11], 2: [20, 21]}
    texts = {10: "A. Nothing here.", 11: "B. Unknown origin.", 20: "C. x", 21: "D. y"}
    assert answer_first(hops, {1: "unknown"}, texts) == {1: [10, 11], 2: [20, 21]}
