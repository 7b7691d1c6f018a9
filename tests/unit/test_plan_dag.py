import pytest

from nodes.agent.plan_dag import (
    PlanError,
    SubQuestion,
    build_dag,
    find_cycle,
    placeholders,
    ready,
    stranded,
    substitute,
)


def test_placeholders_are_parsed_sorted_and_unique() -> None:
    assert placeholders("Is #2 older than #1, and did #2 meet #10?") == [1, 2, 10]
    assert placeholders("Who directed Blue Harbor?") == []


def test_substitute_fills_answered_placeholders_only() -> None:
    answers = {1: "Tomas Reyd", 10: "Lisbon"}
    assert substitute("Where was #1 born?", answers) == "Where was Tomas Reyd born?"
    # #10 is not #1 followed by "0", and an unanswered #2 stays visible.
    assert substitute("Did #1 live in #10 or #2?", answers) == (
        "Did Tomas Reyd live in Lisbon or #2?"
    )


def test_chain_branches_and_comparison_build_the_expected_dag() -> None:
    chain = build_dag(["Who directed Blue Harbor?", "Where was #1 born?"])
    assert chain == [
        SubQuestion(index=1, text="Who directed Blue Harbor?", depends_on=[]),
        SubQuestion(index=2, text="Where was #1 born?", depends_on=[1]),
    ]
    join = build_dag(["Who directed X?", "Who composed Y?", "Which film did #1 make with #2?"])
    assert [s["depends_on"] for s in join] == [[], [], [1, 2]]
    comparison = build_dag(["When was A born?", "When was B born?"])
    assert [s["depends_on"] for s in comparison] == [[], []]


def test_ready_gives_the_next_layer_of_the_dag() -> None:
    steps = build_dag(["Who directed X?", "Who composed Y?", "Which film did #1 make with #2?"])
    assert ready(steps, {}) == [1, 2]
    assert ready(steps, {1: "a"}) == [2]
    assert ready(steps, {1: "a", 2: "b"}) == [3]
    assert ready(steps, {1: "a", 2: "b", 3: "c"}) == []
    chain = build_dag(["q1", "q2 #1", "q3 #2"])
    assert ready(chain, {}) == [1]
    assert ready(chain, {1: "a"}) == [2]


def test_forward_references_are_fine_when_acyclic() -> None:
    steps = build_dag(["Where was #2 born?", "Who directed Blue Harbor?"])
    assert [s["depends_on"] for s in steps] == [[2], []]
    assert ready(steps, {}) == [2]


def test_list_numbering_and_blank_steps_are_repaired() -> None:
    steps = build_dag(["1. Who directed X?", "   ", "3) When was #1 born?", "Where did #3 die?"])
    assert steps == [
        SubQuestion(index=1, text="Who directed X?", depends_on=[]),
        SubQuestion(index=2, text="When was #1 born?", depends_on=[1]),
        SubQuestion(index=3, text="Where did #2 die?", depends_on=[2]),
    ]


@pytest.mark.parametrize(
    ("sub_questions", "message"),
    [
        ([], "the plan has no sub-questions"),
        (["", " "], "the plan has no sub-questions"),
        (
            ["Who is X?", "Where was #3 born?"],
            "sub-question 2 refers to #3, but the plan has no sub-question 3 (it has 2)",
        ),
        (["Who is X?", "Where was #0 born?"], "sub-question 2 refers to #0, but the plan has no"),
        (["Who is X?", "", "When was #2 born?"], "sub-question 3 refers to #2, which is empty"),
        (["Who is #1?"], "sub-question 1 refers to its own answer (#1)"),
        (
            ["Who married #3?", "Who directed #1?", "What did #2 write?"],
            "sub-questions depend on each other in a cycle: #1 → #3 → #2 → #1",
        ),
    ],
)
def test_broken_plans_are_rejected_with_a_clear_message(
    sub_questions: list[str], message: str
) -> None:
    with pytest.raises(PlanError) as error:
        build_dag(sub_questions)
    assert str(error.value).startswith(message)


def test_find_cycle() -> None:
    assert find_cycle({1: [], 2: [1], 3: [1, 2]}) is None
    assert find_cycle({1: [2], 2: [1]}) == [1, 2, 1]


def test_steps_built_on_a_step_that_found_nothing_are_stranded() -> None:
    # 1 → 2 → 3, and 4 on 1 and 5: when 2 found nothing, 3 is stranded through it.
    steps = build_dag(["A?", "B of #1?", "C of #2?", "D?", "E of #1 and #4?"])
    assert stranded(steps, {1: "x", 2: "unknown"}, empty=[2]) == [3]
    # A step waiting on an empty one and a step not yet run is stranded at once.
    assert stranded(steps, {1: "unknown"}, empty=[1]) == [2, 3, 5]
    # An answered step is never stranded, and nothing is while no step came back empty.
    assert stranded(steps, {1: "unknown", 2: "y"}, empty=[1]) == [5]
    assert stranded(steps, {1: "x", 2: "y"}, empty=[]) == []
