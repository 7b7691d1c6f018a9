from graphs.agent.cite import pick_citations, turn_claims
from graphs.agent.hop_reads import HopRead
from nodes.agent.plan_dag import SubQuestion
from nodes.citations.attribution import cite_answer
from store.citation_reads import CitedText

QUESTION = "Where was the director of Jaws born?"
STEPS = [
    SubQuestion(index=1, text="Who directed Jaws?", depends_on=[]),
    SubQuestion(index=2, text="Where was #1 born?", depends_on=[1]),
]
READS = {
    1: HopRead(answered_in=1, rounds=[{"round": 1, "kind": "passages", "ids": [10]}]),
    2: HopRead(answered_in=1, rounds=[{"round": 1, "kind": "passages", "ids": [20]}]),
}
PASSAGES = {
    10: CitedText(10, 10, "Jaws", "Jaws was directed by Steven Spielberg.", "films.txt"),
    20: CitedText(20, 20, "Spielberg", "Spielberg was born in Cincinnati.", "people.txt"),
}


def test_the_final_claim_asks_the_users_question_and_the_hops_their_resolved_ones() -> None:
    answers = {1: "Steven Spielberg", 2: "Cincinnati"}

    final, hops = turn_claims(QUESTION, "Cincinnati", STEPS, answers, READS, PASSAGES, {})

    assert final.question == QUESTION
    assert [h.question for h in hops] == ["Who directed Jaws?", "Where was Steven Spielberg born?"]
    # The final answer may stand in any hop's reading, the last hop's first.
    assert [t.passage_id for t in final.read] == [20, 10]
    assert [t.hop for t in final.read] == [2, 1]


def test_the_questions_best_passage_is_read_last_and_cites_what_only_it_states() -> None:
    # The reader also read the whole question's best passage, which no hop found; the final
    # answer "Ohio" is stated there alone, so that passage is its source (no hop, no round).
    answers = {1: "Steven Spielberg", 2: "Cincinnati"}
    best = CitedText(30, 30, "Cincinnati", "Cincinnati is a city in Ohio.", "places.txt")

    final, hops = turn_claims(QUESTION, "Ohio", STEPS, answers, READS, PASSAGES, {}, best)

    assert [t.passage_id for t in final.read] == [20, 10, 30]
    assert (final.read[-1].hop, final.read[-1].round) == (None, None)
    cited = cite_answer(final, hops)
    assert [(c["passage_id"], c["hop"], c["verified"]) for c in cited] == [
        (10, 1, True),
        (20, 2, True),
        (30, None, True),
    ]
    assert cited[-1]["text"] == "Cincinnati is a city in Ohio."
    assert cited[-1]["source"] == "places.txt"


def test_a_hop_that_answered_from_its_fourth_passage_cites_nothing_from_it() -> None:
    answers = {1: "Steven Spielberg", 2: "Cincinnati"}
    films = {
        21: CitedText(21, 21, "Duel", "Duel is a 1971 thriller.", "films.txt"),
        22: CitedText(22, 22, "Amblin", "Amblin is a 1968 short film.", "films.txt"),
        23: CitedText(23, 23, "Hook", "Hook is a 1991 fantasy film.", "films.txt"),
        24: CitedText(24, 24, "Ohio births", "Spielberg was born in Cincinnati.", "people.txt"),
    }

    def cited(ids: list[int]) -> list[tuple[int, int | None]]:
        reads = {
            **READS,
            2: HopRead(answered_in=1, rounds=[{"round": 1, "kind": "passages", "ids": ids}]),
        }
        final, hops = turn_claims(
            QUESTION, "Cincinnati", STEPS, answers, reads, {**PASSAGES, **films}, {}
        )
        return [
            (c["passage_id"], c["hop"]) for c in pick_citations("Cincinnati", STEPS, final, hops)
        ]

    # Third in hop 2's round, the page stating its answer is cited; fourth, it is not, and
    # hop 1's citation stands alone.
    assert cited([21, 22, 24, 23]) == [(10, 1), (24, 2)]
    assert cited([21, 22, 23, 24]) == [(10, 1)]
