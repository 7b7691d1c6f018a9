"""Failure causes computed from hand-made facts: one case per cause, and the rules behind them."""

import pytest

from evals.attribution import (
    GoldStep,
    HopFacts,
    RoundFacts,
    Shown,
    answer_matches,
    chain_depth,
    label,
    shown_keys,
)
from evals.attribution_record import agent_attribution, passages_attribution

# "Where was the director of Blue Harbor born?" as MuSiQue decomposes it.
GOLD = [
    GoldStep(1, "Blue Harbor", 11, "Who directed Blue Harbor?", ("Tomas Reyd",)),
    GoldStep(2, "Tomas Reyd", 12, "Where was #1 born?", ("Lisbon",), (1,)),
]
FINAL = ["Lisbon"]
BLUE = Shown(11, "Blue Harbor")
REYD = Shown(12, "Tomas Reyd")
OTHER = Shown(13, "Ivo Strand")


def hop(index: int, answer: str, *shown: Shown, depends_on: tuple[int, ...] = ()) -> HopFacts:
    rounds = (RoundFacts(1, "search", ("Some Entity",), tuple(shown), "DONE"),)
    return HopFacts(index, f"sq{index}", f"sq{index}", depends_on, answer, rounds)


def cause_of(
    hops: list[HopFacts], correct: bool = False, gold: list[GoldStep] = GOLD
) -> tuple[str | None, str]:
    seen = shown_keys([s for h in hops for s in h.shown()], by_title=False)
    verdict = label(correct, gold, seen, hops, FINAL)
    return (verdict.cause, verdict.why) if verdict else (None, "")


def test_a_right_final_answer_is_correct_whatever_the_plan() -> None:
    assert cause_of([hop(1, "Lisbon")], correct=True)[0] == "correct"


@pytest.mark.parametrize(
    ("hops", "why"),
    [
        ([], "the plan has no sub-questions"),
        ([hop(1, "Lisbon", BLUE, REYD)], "1 sub-question(s) for 2 gold hops"),
        # Two steps, but the second does not use the first's answer: gold's #1 link is lost.
        (
            [hop(1, "Tomas Reyd", BLUE), hop(2, "Porto", REYD)],
            "the longest #k chain has 1 step(s), gold's has 2: a link is missing",
        ),
    ],
)
def test_sub_questions_that_cannot_cover_gold_are_a_plan_failure(
    hops: list[HopFacts], why: str
) -> None:
    assert cause_of(hops) == ("plan", why)


def test_a_gold_passage_never_shown_is_a_retrieval_failure() -> None:
    hops = [hop(1, "Tomas Reyd", BLUE), hop(2, "Porto", OTHER, depends_on=(1,))]
    assert cause_of(hops) == ("retrieval", "gold hop 2 ('Tomas Reyd') never reached the agent")


def test_a_shown_gold_passage_with_a_wrong_hop_answer_is_a_reading_failure() -> None:
    hops = [hop(1, "Mara Quell", BLUE), hop(2, "Riga", OTHER, depends_on=(1,))]
    # Hop 1 failed first (its passage was shown): hop 2's missing passage follows from it.
    assert cause_of(hops) == (
        "reading",
        "gold hop 1 ('Blue Harbor') was shown, no sub-agent answered 'Tomas Reyd'",
    )


def test_right_hop_answers_and_a_wrong_final_answer_are_a_synthesis_failure() -> None:
    hops = [hop(1, "Tomas Reyd", BLUE), hop(2, "Lisbon", REYD, depends_on=(1,))]
    assert cause_of(hops)[0] == "synthesis"


def test_a_hop_answered_right_without_its_passage_passes() -> None:
    # The director was named from another passage: hop 1 did not fail, hop 2's reading did.
    hops = [hop(1, "Tomas Reyd", OTHER), hop(2, "Porto", REYD, depends_on=(1,))]
    assert cause_of(hops)[0] == "reading"


def test_titles_only_gold_never_blames_the_plan() -> None:
    # HotpotQA/2Wiki: supporting titles, no decomposition, so one sub-question is no plan failure.
    gold = [GoldStep(1, "Blue Harbor", 11), GoldStep(2, "Tomas Reyd", 12)]
    assert cause_of([hop(1, "Porto", BLUE)], gold=gold)[0] == "retrieval"
    assert cause_of([hop(1, "Porto", BLUE, REYD)], gold=gold)[0] == "reading"
    assert cause_of([hop(1, "Lisbon, Portugal", BLUE, REYD)], gold=gold)[0] == "synthesis"


def test_a_wrong_answer_without_gold_passages_is_left_unlabelled() -> None:
    assert cause_of([hop(1, "Porto", BLUE)], gold=[]) == (None, "")


def test_passage_baselines_get_retrieval_or_reading_only() -> None:
    shown_all = passages_attribution(False, GOLD, [BLUE, REYD, OTHER])
    assert (shown_all["cause"], shown_all["evidence_recall"]) == ("reading", 1.0)
    assert shown_all["shown"] == {
        "ids": [11, 12, 13],
        "titles": ["Blue Harbor", "Tomas Reyd", "Ivo Strand"],
    }
    # Gold hop 1's passage was shown, hop 2's was not: the prompt lacked evidence.
    half = passages_attribution(False, GOLD, [BLUE, OTHER])
    assert (half["cause"], half["evidence_recall"]) == ("retrieval", 0.5)
    assert [g["seen"] for g in half["gold"]] == [True, False]
    assert passages_attribution(True, GOLD, [])["cause"] == "correct"


def test_gold_is_matched_by_title_where_ids_cannot_be_compared() -> None:
    # Under the propositions ablation the evidence ids (here 901, 902) are proposition ids.
    hops = [
        hop(1, "Tomas Reyd", Shown(901, "Blue Harbor")),
        hop(2, "Porto", Shown(902, "Tomas Reyd"), depends_on=(1,)),
    ]
    by_title = agent_attribution(False, GOLD, hops, FINAL, by_title=True)
    assert (by_title["cause"], by_title["evidence_recall"]) == ("reading", 1.0)
    by_id = agent_attribution(False, GOLD, hops, FINAL)
    assert (by_id["cause"], by_id["evidence_recall"]) == ("retrieval", 0.0)
    # A gold passage the corpus lacks (no stored id) is matched by title even then.
    missing = [GoldStep(1, "Blue Harbor", None), GoldStep(2, "Tomas Reyd", None)]
    assert agent_attribution(False, missing, hops, FINAL)["evidence_recall"] == 1.0


def test_agent_attribution_keeps_per_hop_facts() -> None:
    hops = [hop(1, "Tomas Reyd", BLUE, OTHER), hop(2, "Lisbon", REYD, depends_on=(1,))]
    facts = agent_attribution(False, GOLD, hops, FINAL)
    assert facts["cause"] == "synthesis"
    assert [(g["seen_by"], g["answered_by"]) for g in facts["gold"]] == [([1], [1]), ([2], [2])]
    first = facts["sub_questions"][0]
    assert (first["evidence_recall"], first["rounds"][0]["ids"]) == (0.5, [11, 13])
    assert first["rounds"][0]["titles"] == ["Blue Harbor", "Ivo Strand"]


@pytest.mark.parametrize(
    ("answer", "golds", "expected"),
    [
        ("Lisbon", ["Lisbon"], True),
        ("in Lisbon, Portugal", ["Lisbon"], True),  # the gold span inside a longer answer
        ("Stanley Hall", ["G. Stanley Hall"], True),  # F1 0.8
        ("Hall", ["G. Stanley Hall"], False),  # F1 0.5: a surname alone is not enough
        ("Lisbonne", ["Lisbon"], False),  # whole tokens only
        ("", ["Lisbon"], False),
    ],
)
def test_hop_answers_match_by_span_or_token_overlap(
    answer: str, golds: list[str], expected: bool
) -> None:
    assert answer_matches(answer, golds) is expected


def test_chain_depth_counts_the_longest_link_chain() -> None:
    assert chain_depth({}) == 0
    assert chain_depth({1: [], 2: [], 3: [1, 2]}) == 2
    assert chain_depth({1: [], 2: [1], 3: [2], 4: [1]}) == 3
    assert chain_depth({1: [7]}) == 1  # a link to no step counts as none
