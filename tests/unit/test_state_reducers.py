import itertools
from functools import reduce

from graphs.agent.state import (
    CallUsage,
    NodeUsage,
    Observation,
    ObservationLog,
    TokenTally,
    add_tokens,
    merge_answers,
    merge_observations,
    tally,
    union_ids,
)
from nodes.llm.client import LlmResult


def log(cap: int | None, *items: tuple[int, str]) -> ObservationLog:
    observations = [Observation(iteration=i, text=t) for i, t in items]
    if cap is None:
        return ObservationLog(items=observations)
    return ObservationLog(cap=cap, items=observations)


WRITES = [
    log(4, (1, "Blue Harbor was directed by Tomas Reyd."), (1, "Blue Harbor is a 1998 film.")),
    log(4, (2, "Tomas Reyd was born in Lisbon."), (2, "blue harbor  is a 1998 FILM.")),
    log(4, (3, "Lisbon is in Portugal."), (2, "Tomas Reyd was born in Lisbon.")),
    log(4, (1, "Mara Quell starred in Blue Harbor."), (3, "  ")),
]


def test_observations_are_the_same_in_any_write_order() -> None:
    results = {
        repr(reduce(merge_observations, order, ObservationLog(items=[])))
        for order in itertools.permutations(WRITES)
    }
    assert len(results) == 1
    merged = reduce(merge_observations, WRITES, ObservationLog(items=[]))
    # Duplicates (case/space-insensitive) count once, the later round's copy wins; over the cap
    # of 4 the oldest round goes first, so of iteration 1 only the largest text survives.
    assert merged == log(
        4,
        (1, "Mara Quell starred in Blue Harbor."),
        (2, "Tomas Reyd was born in Lisbon."),
        (2, "blue harbor  is a 1998 FILM."),
        (3, "Lisbon is in Portugal."),
    )


def test_observations_merge_is_associative_over_any_grouping() -> None:
    a, b, c, _ = WRITES
    assert merge_observations(merge_observations(a, b), c) == merge_observations(
        a, merge_observations(b, c)
    )


def test_observations_never_exceed_the_cap() -> None:
    for cap in range(0, 7):
        state = ObservationLog(items=[])
        for round_ in range(1, 6):
            write = log(cap, *[(round_, f"note {round_}.{k}") for k in range(3)])
            state = merge_observations(state, write)
            assert len(state["items"]) <= cap
        assert state["cap"] == cap
        expected = [(5 - (k // 3), f"note {5 - k // 3}.{2 - k % 3}") for k in range(cap)][::-1]
        assert [(o["iteration"], o["text"]) for o in state["items"]] == expected


def test_observations_cap_is_the_smaller_one_and_empty_sides_are_neutral() -> None:
    merged = merge_observations(log(3, (1, "a"), (1, "b")), log(1, (1, "c")))
    assert merged == log(1, (1, "c"))
    assert merge_observations(ObservationLog(items=[]), log(2, (1, "a"))) == log(2, (1, "a"))
    assert merge_observations({}, {}) == ObservationLog(items=[])


def test_visited_ids_union_is_sorted_and_order_independent() -> None:
    writes = [[5, 1], [3], [1, 9, 3]]
    results = {tuple(reduce(union_ids, order, [])) for order in itertools.permutations(writes)}
    assert results == {(1, 3, 5, 9)}


def test_answers_merge() -> None:
    assert merge_answers({2: "b"}, {1: "a"}) == {1: "a", 2: "b"}
    assert list(merge_answers({2: "b"}, {1: "a"})) == [1, 2]


PARTS = {"instructions": 60, "evidence": 30, "history": 0, "question": 10}


def result(tokens_in: int, tokens_out: int, cached: bool = False) -> LlmResult:
    return LlmResult("{}", tokens_in, tokens_out, 0.1, cached, PARTS if tokens_in == 100 else {})


def test_tally_of_one_node() -> None:
    assert tally("evaluate", [result(100, 10), result(120, 12, True)], "sq1", 2) == TokenTally(
        input_tokens=220,
        output_tokens=22,
        calls=2,
        by_node={"evaluate": NodeUsage(input=220, output=22, calls=2)},
        records=[
            CallUsage(
                node="evaluate",
                agent="sq1",
                iteration=2,
                input=100,
                output=10,
                cached=False,
                latency_s=0.1,
                parts=PARTS,
            ),
            CallUsage(
                node="evaluate",
                agent="sq1",
                iteration=2,
                input=120,
                output=12,
                cached=True,
                latency_s=0.1,
                parts={},
            ),
        ],
    )
    assert tally("select_entities", []) == TokenTally(
        input_tokens=0, output_tokens=0, calls=0, by_node={}, records=[]
    )


def test_token_totals_add_in_any_order() -> None:
    parts = [
        tally("plan", [result(300, 40)]),
        tally("rewrite", [result(100, 10)], "sq1", 1),
        tally("rewrite", [result(90, 9)], "sq2", 1),
        tally("evaluate", [result(200, 20)], "sq1", 1),
    ]
    totals = set()
    for order in itertools.permutations(parts):
        total = reduce(add_tokens, order, TokenTally())
        totals.add(
            (total["input_tokens"], total["output_tokens"], total["calls"], repr(total["by_node"]))
        )
        assert len(total["records"]) == 4
    assert totals == {
        (
            690,
            79,
            4,
            repr(
                {
                    "evaluate": NodeUsage(input=200, output=20, calls=1),
                    "plan": NodeUsage(input=300, output=40, calls=1),
                    "rewrite": NodeUsage(input=190, output=19, calls=2),
                }
            ),
        )
    }


def test_answers_keys_come_back_as_ints_after_json() -> None:
    assert merge_answers({}, {"2": "b", 1: "a"}) == {1: "a", 2: "b"}  # type: ignore[dict-item]


def test_observations_random_writes_any_order_equal_a_single_merge() -> None:
    import random

    rng = random.Random(7)
    texts = [f"note {k}" for k in range(8)] + ["NOTE 3", "note  5"]
    for _ in range(200):
        writes = [
            log(5, *[(rng.randint(1, 3), rng.choice(texts)) for _ in range(rng.randint(0, 4))])
            for _ in range(4)
        ]
        everything = log(5, *[(o["iteration"], o["text"]) for w in writes for o in w["items"]])
        expected = merge_observations(ObservationLog(items=[]), everything)
        for order in itertools.permutations(writes):
            assert reduce(merge_observations, order, ObservationLog(items=[])) == expected
