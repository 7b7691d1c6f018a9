"""A hop cites only passages its round showed among its first three (graphs/agent/cite.py)."""

from graphs.agent.cite import near_the_top
from nodes.citations.attribution import Citation, Claim, ReadText


def shown(passage: int, round_: int = 1, hop: int = 1) -> ReadText:
    return ReadText(
        passage, f"page {passage}", "set.json", f"text {passage}.", hop=hop, round=round_
    )


def cite(passage: int, hop: int | None = 1, round_: int | None = 1) -> Citation:
    return Citation(
        passage_id=passage, title="", source="", text="", hop=hop, round=round_, verified=True
    )


# Hop 1's round 1 showed passages 10..14 (propositions of 11 twice), round 2 showed 20, 14.
HOP_1 = Claim(
    "q",
    "a",
    (*(shown(i) for i in (10, 11, 11, 12, 13, 14)), shown(20, 2), shown(14, 2)),
    hop=1,
)
HOP_2 = Claim("q", "a", tuple(shown(i, hop=2) for i in (30, 31, 32, 33)), hop=2)


def test_a_passage_below_the_third_of_its_round_is_not_cited() -> None:
    cited = [cite(10), cite(13), cite(12), cite(14), cite(33, hop=2), cite(32, hop=2)]
    kept = near_the_top(cited, [HOP_1, HOP_2])
    # 11 shown twice still counts once, so 12 is third and 13 fourth.
    assert [c["passage_id"] for c in kept] == [10, 12, 32]


def test_the_place_is_counted_in_the_round_the_citation_names() -> None:
    # 14 is fifth in round 1 but second in round 2.
    kept = near_the_top([cite(14, round_=2), cite(14, round_=1)], [HOP_1])
    assert [(c["passage_id"], c["round"]) for c in kept] == [(14, 2)]


def test_a_citation_no_round_showed_is_kept_and_an_answer_keeps_one() -> None:
    # The question's best passage has no hop, and a passage no round showed has no place: both stay.
    assert near_the_top([cite(99, hop=None, round_=None), cite(98)], [HOP_1]) == [
        cite(99, hop=None, round_=None),
        cite(98),
    ]
    # When every citation stood low, all are kept: an answer with evidence is never uncited.
    assert near_the_top([cite(13), cite(33, hop=2)], [HOP_1, HOP_2]) == [cite(13), cite(33, hop=2)]
    assert near_the_top([], [HOP_1]) == []
