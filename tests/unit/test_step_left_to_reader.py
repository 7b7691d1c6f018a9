"""The reader is asked a chain's last step, filled in, when that step was left to it."""

from nodes.agent.plan_dag import SubQuestion
from nodes.agent.synthesize import step_left_to_reader

CHAIN = [
    SubQuestion(index=1, text="Where was Harris W. Fawell born?", depends_on=[]),
    SubQuestion(index=2, text="In what county is #1?", depends_on=[1]),
]


def test_a_chain_end_left_to_the_reader_is_filled_in() -> None:
    answers = {1: "West Chicago", 2: ""}
    assert step_left_to_reader(CHAIN, answers) == "In what county is West Chicago?"


def test_no_step_when_the_bridge_found_nothing_or_the_end_answered_itself() -> None:
    assert step_left_to_reader(CHAIN, {1: "unknown", 2: ""}) == ""
    assert step_left_to_reader(CHAIN, {1: "", 2: ""}) == ""
    assert step_left_to_reader(CHAIN, {1: "West Chicago", 2: "DuPage County"}) == ""


def test_no_step_for_a_single_step_or_a_plan_with_two_ends() -> None:
    whole = [SubQuestion(index=1, text="Who wrote Dune?", depends_on=[])]
    assert step_left_to_reader(whole, {1: ""}) == ""
    sides = [
        SubQuestion(index=1, text="When was A founded?", depends_on=[]),
        SubQuestion(index=2, text="When was B founded?", depends_on=[]),
    ]
    assert step_left_to_reader(sides, {1: "", 2: ""}) == ""


def test_a_step_that_combines_two_answers_is_filled_in_with_both() -> None:
    plan = [
        SubQuestion(index=1, text="Who directed Big Eyes?", depends_on=[]),
        SubQuestion(index=2, text="Who wrote Big Eyes?", depends_on=[]),
        SubQuestion(index=3, text="Are #1 and #2 the same person?", depends_on=[1, 2]),
    ]
    answers = {1: "Tim Burton", 2: "Scott Alexander", 3: ""}
    assert (
        step_left_to_reader(plan, answers) == "Are Tim Burton and Scott Alexander the same person?"
    )
    assert step_left_to_reader(plan, {**answers, 2: "unknown"}) == ""
