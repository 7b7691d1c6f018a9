"""A reviewer's plan edit: the forms it may take, and the one line that refuses a broken one."""

from typing import Any

import pytest

from graphs.cli.ask_review import plan_as_text, text_as_plan
from nodes.agent.plan_dag import PlanError
from nodes.agent.plan_edit import edited_plan

CHAIN = [
    {"index": 1, "text": "Who directed Blue Harbor?", "depends_on": []},
    {"index": 2, "text": "Where was #1 born?", "depends_on": [1]},
]


@pytest.mark.parametrize(
    "args",
    [
        {"sub_questions": ["Who directed Blue Harbor?", "Where was #1 born?"]},
        # Agent Inbox's edited ActionRequest
        {
            "action": "review_plan",
            "args": {"sub_questions": ["Who directed Blue Harbor?", "Where was #1 born?"]},
        },
        # a JSON text, or one sub-question per line (a form field edited as text)
        {"sub_questions": '["Who directed Blue Harbor?", "Where was #1 born?"]'},
        {"sub_questions": "Who directed Blue Harbor?\n\nWhere was #1 born?\n"},
        # steps as objects, their needs agreeing with the text
        {
            "sub_questions": [
                {"text": "Who directed Blue Harbor?"},
                {"question": "Where was #1 born?", "needs": ["#1"]},
            ]
        },
    ],
)
def test_an_edit_in_any_form_gives_the_same_steps(args: dict[str, Any]) -> None:
    assert edited_plan(args, "the old plan") == ("the old plan", CHAIN)


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ({"plan": "x"}, 'an edit gives {"plan": "…", "sub_questions": ["…", "… #1 …"]}'),
        ({"sub_questions": 3}, "an edit gives sub_questions as a list of texts"),
        ({"sub_questions": ["a?", 7]}, "sub-question 2 is not a text: 7"),
        (
            {"sub_questions": ["a?", {"text": "b?", "needs": [1]}]},
            "sub-question 2 lists needs [1] but its text links none: write #k where the answer "
            "of sub-question k belongs",
        ),
        (
            {"sub_questions": ["a?", {"text": "b #1?", "needs": ["x"]}]},
            "sub-question 2 lists needs that are not numbers",
        ),
        ({"sub_questions": ["Who is #2?", "a?"], "plan": 5}, "the plan's sentence must be a text"),
        ({"sub_questions": ["Who is #1?"]}, "sub-question 1 refers to its own answer (#1)"),
    ],
)
def test_a_broken_edit_says_why_in_one_line(args: dict[str, Any], why: str) -> None:
    with pytest.raises(PlanError) as refused:
        edited_plan(args, "")
    assert str(refused.value) == why


def test_the_terminal_form_round_trips_and_refuses_what_it_cannot_read() -> None:
    args = {
        "plan": "Director, then birthplace.",
        "sub_questions": ["Who directed X?", "Where was #1 born?"],
    }
    text = plan_as_text(args)
    assert text.splitlines()[-3:] == [
        "plan: Director, then birthplace.",
        "1. Who directed X?",
        "2. Where was #1 born?",
    ]
    assert text_as_plan(text) == args
    edited = text.replace(
        "2. Where was #1 born?", "2. Where was #1 born?\n3) In which country is #2?"
    )
    assert text_as_plan(edited)["sub_questions"][-1] == "In which country is #2?"
    assert text_as_plan('{"sub_questions": ["a?"]}') == {"sub_questions": ["a?"]}
    with pytest.raises(ValueError, match="'Where is it' is neither 'plan: …' nor a numbered"):
        text_as_plan("1. a?\nWhere is it")
    with pytest.raises(
        ValueError, match=r"number the sub-questions 1, 2, 3 … in order .* 3 came after 1"
    ):
        text_as_plan("1. a?\n3. b #1?")
