import math

import pytest

from evals.metrics import (
    closed_book_probability,
    exact_match,
    normalize_answer,
    precision,
    recall_at_k,
    success_economy,
    token_f1,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # lower -> "the  quick, brown fox!" -> no punctuation -> drop "the" -> collapse spaces
        ("The  Quick, Brown Fox!", "quick brown fox"),
        ("An apple a day", "apple day"),
        # articles are whole words only
        ("Theatre of Anna", "theatre of anna"),
        ("U.S.", "us"),
        ("  \tA  \n", ""),
        ("", ""),
    ],
)
def test_normalize_answer(raw: str, expected: str) -> None:
    assert normalize_answer(raw) == expected


def test_exact_match_takes_the_best_alias() -> None:
    # "the United States" -> "united states" equals the second alias
    assert exact_match("the United States", ["U.S.", "United States"]) == 1.0
    assert exact_match("USA", ["United States", "U.S."]) == 0.0
    # normalisation on both sides: "Paris!" -> "paris", "the paris" -> "paris"
    assert exact_match("Paris!", ["the paris"]) == 1.0


def test_exact_match_takes_a_bare_string_as_one_gold() -> None:
    assert exact_match("Paris", "paris") == 1.0
    # not matched letter by letter
    assert exact_match("p", "paris") == 0.0


def test_metrics_need_a_gold_answer() -> None:
    with pytest.raises(ValueError):
        exact_match("x", [])
    with pytest.raises(ValueError):
        token_f1("x", [])


def test_token_f1_partial_overlap() -> None:
    # pred  "cat sat on mat" (4 tokens), gold "cat sat on hat" (4 tokens), common 3
    # P = 3/4, R = 3/4, F1 = 2 * 9/16 / (6/4) = 0.75
    assert token_f1("the cat sat on the mat", ["a cat sat on a hat"]) == 0.75


def test_token_f1_counts_repeated_tokens_once_per_gold_occurrence() -> None:
    # pred [new, new, york], gold [new, york]: common = min(2,1) + 1 = 2
    # P = 2/3, R = 1, F1 = 2 * (2/3) / (5/3) = 4/5
    assert token_f1("new new york", ["New York"]) == pytest.approx(0.8, abs=1e-15)


def test_token_f1_max_over_aliases() -> None:
    # vs "michelle obama": common 1, P = R = 1/2 -> F1 = 1/2
    # vs "obama": common 1, P = 1/2, R = 1 -> F1 = 2 * 1/2 / (3/2) = 2/3
    assert token_f1("Barack Obama", ["Michelle Obama", "Obama"]) == pytest.approx(2 / 3, abs=1e-15)
    assert token_f1("Barack Obama", ["Michelle Obama"]) == 0.5
    assert token_f1("Barack Obama", ["Michelle", "barack obama."]) == 1.0
    assert token_f1("Paris", ["London"]) == 0.0


def test_token_f1_empty_edge_cases() -> None:
    assert token_f1("", [""]) == 1.0
    # "the" normalises to nothing, so both sides are empty
    assert token_f1("the", [""]) == 1.0
    assert token_f1("", ["Paris"]) == 0.0
    assert token_f1("Paris", ["a"]) == 0.0


def test_closed_book_probability_add_one_smoothing() -> None:
    # (c + 1) / (n + 2) with n = 5
    assert closed_book_probability(0, 5) == 1 / 7
    assert closed_book_probability(2, 5) == 3 / 7
    assert closed_book_probability(5, 5) == 6 / 7
    assert closed_book_probability(0, 0) == 0.5
    for correct, samples in [(6, 5), (-1, 5), (0, -1)]:
        with pytest.raises(ValueError):
            closed_book_probability(correct, samples)


def test_success_economy_exact_with_six_samples() -> None:
    # n = 6: p = 1/8 (3 bits), 1/4 (2 bits), 1/2 (1 bit, but wrong -> 0 bits)
    # SE = (1000 + 2000 + 3000) / (3 + 2 + 0) = 6000 / 5 = 1200
    probabilities = [closed_book_probability(c, 6) for c in (0, 1, 3)]
    assert probabilities == [0.125, 0.25, 0.5]
    assert success_economy([1000, 2000, 3000], [1, 1, 0], probabilities) == 1200.0


def test_success_economy_with_five_samples() -> None:
    # n = 5, c = 0, 2, 5 -> p = 1/7, 3/7, 6/7; the third is wrong
    # bits = log2(7) + log2(7/3) = 2*2.807354922057604 - 1.584962500721156 = 4.029747343394052
    # SE = (700 + 1400 + 2100) / 4.029747343394052 = 1042.2489655300703
    probabilities = [closed_book_probability(c, 5) for c in (0, 2, 5)]
    value = success_economy([700, 1400, 2100], [True, True, False], probabilities)
    assert value == pytest.approx(1042.2489655300703, rel=1e-12)


def test_success_economy_without_bits_is_infinite() -> None:
    assert success_economy([100, 200], [0, 0], [0.5, 0.25]) == math.inf
    # a question the base model always answers earns no bits: -log2(1) = 0
    assert success_economy([100], [1], [1.0]) == math.inf
    assert success_economy([], [], []) == math.inf


@pytest.mark.parametrize(
    ("tokens", "correct", "probabilities"),
    [([1, 2], [1], [0.5]), ([1], [1], [0.0]), ([1], [1], [1.5]), ([1], [2], [0.5])],
)
def test_success_economy_rejects_bad_input(
    tokens: list[int], correct: list[int], probabilities: list[float]
) -> None:
    with pytest.raises(ValueError):
        success_economy(tokens, correct, probabilities)


def test_recall_at_k() -> None:
    retrieved = ["a", "b", "c", "d", "e"]
    gold = {"b", "e", "z"}
    # top-2 {a, b} ∩ gold = {b} -> 1/3; top-5 and top-10 hold {b, e} -> 2/3
    assert recall_at_k(retrieved, gold, 2) == 1 / 3
    assert recall_at_k(retrieved, gold, 5) == 2 / 3
    assert recall_at_k(retrieved, gold, 10) == 2 / 3
    assert recall_at_k([], gold, 5) == 0.0
    # a passage retrieved twice counts once: top-2 {b} -> 1/2
    assert recall_at_k(["b", "b", "e"], ["b", "e"], 2) == 0.5


def test_recall_at_k_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        recall_at_k(["a"], set(), 2)
    with pytest.raises(ValueError):
        recall_at_k(["a"], {"a"}, 0)


def test_precision() -> None:
    # {b, d} of 4 distinct retrieved are gold -> 2/4
    assert precision(["a", "b", "c", "d"], {"b", "d", "x"}) == 0.5
    assert precision(["b", "b"], {"b"}) == 1.0
    assert precision([], {"b"}) == 0.0
