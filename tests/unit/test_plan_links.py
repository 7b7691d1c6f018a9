"""The linked plan's repairs: each rule on the plan shape a small model really produces."""

import pytest

from nodes.agent.plan_dag import PlanError
from nodes.agent.plan_links import DraftStep, link_plan
from nodes.agent.plan_references import answer_phrases, new_names

JOURNAL = "Who was the first president of the association which published Journal of Integration?"
DIRECTOR = "Where was the director of Blue Harbor born?"


def linked(
    question: str, *steps: tuple[str, tuple[int, ...]]
) -> tuple[list[tuple[str, list[int]]], list[str]]:
    sub_questions, repairs = link_plan(question, [DraftStep(text, needs) for text, needs in steps])
    return [(s["text"], s["depends_on"]) for s in sub_questions], [r.kind for r in repairs]


def test_a_consistent_plan_is_kept_as_written() -> None:
    assert linked(DIRECTOR, ("Who directed Blue Harbor?", ()), ("Where was #1 born?", (1,))) == (
        [("Who directed Blue Harbor?", []), ("Where was #1 born?", [1])],
        [],
    )


def test_a_listed_need_replaces_the_earlier_steps_answer_phrase() -> None:
    assert linked(
        JOURNAL,
        ("Which association published Journal of Integration?", ()),
        ("Who was the first president of the association?", (1,)),
    ) == (
        [
            ("Which association published Journal of Integration?", []),
            ("Who was the first president of #1?", [1]),
        ],
        ["phrase"],
    )


def test_a_possessive_of_the_earlier_steps_kind_is_its_answer() -> None:
    steps, kinds = linked(
        "When were the Olympics held in Hans Edler's country?",
        ("Which country did Hans Edler live in?", ()),
        ("When were the Olympics held in Hans Edler's country?", (1,)),
    )
    assert steps[1] == ("When were the Olympics held in #1?", [1])
    assert kinds == ["phrase"]


def test_a_listed_need_replaces_a_described_answer_without_its_article() -> None:
    steps, kinds = linked(
        "What city did the performer of Hello Love live in?",
        ("Who is the performer of Hello Love?", ()),
        ("What city did the performer of Hello Love live in?", (1,)),
    )
    assert steps[1] == ("What city did #1 live in?", [1])
    assert kinds == ["phrase"]


@pytest.mark.parametrize(
    ("text", "expected", "kind"),
    [
        ("Where was he born?", "Where was #1 born?", "pronoun"),
        ("What is his nationality?", "What is #1's nationality?", "pronoun"),
        ("Who is her husband?", "Who is #1's husband?", "pronoun"),
        ("Who gave her the award?", "Who gave #1 the award?", "pronoun"),
        ("Where was this person born?", "Where was #1 born?", "pronoun"),
        ("Where was the director born?", "Where was #1 born?", "phrase"),
        ("When did the founder die?", "When did #1 die?", "phrase"),
    ],
)
def test_a_listed_need_replaces_a_pronoun_or_a_referring_noun(
    text: str, expected: str, kind: str
) -> None:
    steps, kinds = linked(DIRECTOR, ("Who directed Blue Harbor?", ()), (text, (1,)))
    assert steps[1] == (expected, [1])
    assert kinds == [kind]


def test_a_definite_attribute_is_not_taken_for_the_earlier_answer() -> None:
    steps, kinds = linked(
        "When was the treaty behind the union signed?",
        ("Which treaty founded the union?", ()),
        ("What was the date of the signing?", (1,)),
    )
    assert steps[1] == ("What was the date of the signing (#1)?", [1])
    assert kinds == ["appended"]


def test_a_listed_need_replaces_a_guessed_name_with_its_article() -> None:
    steps, kinds = linked(
        JOURNAL,
        ("Which association published Journal of Integration?", ()),
        ("Who was the first president of the American Psychological Association?", (1,)),
    )
    assert steps[1] == ("Who was the first president of #1?", [1])
    assert kinds == ["guess"]


def test_a_listed_need_with_nothing_to_replace_is_appended() -> None:
    steps, kinds = linked(
        "When did the founder of Acme die?",
        ("Who founded Acme?", ()),
        ("How large was the estate?", (1,)),
    )
    assert steps[1] == ("How large was the estate (#1)?", [1])
    assert kinds == ["appended"]


def test_a_listed_need_with_nothing_to_replace_can_be_dropped() -> None:
    question = "Are the Alder Bridge and the Birch Bridge in the same county?"
    steps = [
        DraftStep("In which county is the Alder Bridge?", ()),
        DraftStep("In which county is the Birch Bridge?", (1,)),
        DraftStep("Are #1 and #2 the same county?", (1, 2)),
    ]
    sub_questions, repairs = link_plan(question, steps, unwritten_needs="drop")
    assert [(s["text"], s["depends_on"]) for s in sub_questions] == [
        ("In which county is the Alder Bridge?", []),
        ("In which county is the Birch Bridge?", []),
        ("Are #1 and #2 the same county?", [1, 2]),
    ]
    assert [(r.step, r.kind, r.detail) for r in repairs] == [
        (2, "dropped_need", "#1 listed, unused by the text")
    ]
    # A need the text has a place for is still written in.
    drafts = [DraftStep("Who directed Blue Harbor?", ()), DraftStep("Where was he born?", (1,))]
    sub_questions, repairs = link_plan(DIRECTOR, drafts, unwritten_needs="drop")
    assert [s["text"] for s in sub_questions] == ["Who directed Blue Harbor?", "Where was #1 born?"]
    assert [r.kind for r in repairs] == ["pronoun"]


def test_a_placeholder_the_needs_do_not_list_is_added_to_them() -> None:
    steps, kinds = linked(DIRECTOR, ("Who directed Blue Harbor?", ()), ("Where was #1 born?", ()))
    assert steps[1] == ("Where was #1 born?", [1])
    assert kinds == ["listed_ref"]


def test_an_unlinked_step_that_uses_the_earlier_answer_phrase_is_linked() -> None:
    question = (
        "How many stores are in the state that borders the east of the state where Kora lived?"
    )
    steps, kinds = linked(
        question,
        ("Which state did Kora live in?", ()),
        ("Which state borders the east of that state?", ()),
        ("How many stores are in that state?", ()),
    )
    assert steps == [
        ("Which state did Kora live in?", []),
        ("Which state borders the east of #1?", [1]),
        ("How many stores are in #2?", [2]),
    ]
    assert kinds == ["phrase", "phrase"]


def test_an_unlinked_pronoun_points_to_the_last_unused_step_or_to_all_of_them() -> None:
    steps, _ = linked(DIRECTOR, ("Who directed Blue Harbor?", ()), ("Where was she born?", ()))
    assert steps[1] == ("Where was #1 born?", [1])
    steps, kinds = linked(
        "Which film did the director of Red Quarry make with the composer of Low Tide?",
        ("Who directed Red Quarry?", ()),
        ("Who composed Low Tide?", ()),
        ("Which film did they make together?", ()),
    )
    assert steps[2] == ("Which film did #1 and #2 make together?", [1, 2])
    assert kinds == ["pronoun"]


def test_a_pronoun_after_a_name_in_the_same_step_is_not_a_back_reference() -> None:
    question = "Did Hank Snow die in the city where the author of Blue Roads was born?"
    steps, kinds = linked(
        question,
        ("Who wrote Blue Roads?", ()),
        ("Where did Hank Snow live when he died?", ()),
    )
    assert steps[1] == ("Where did Hank Snow live when he died?", [])
    assert kinds == []


def test_an_unlinked_step_with_a_guessed_name_is_linked_to_the_open_step() -> None:
    steps, kinds = linked(
        DIRECTOR, ("Who directed Blue Harbor?", ()), ("Where was Steven Spielberg born?", ())
    )
    assert steps[1] == ("Where was #1 born?", [1])
    assert kinds == ["guess"]


def test_independent_steps_stay_independent() -> None:
    question = "Who was born first, Ivo Strand or Lena Marsh?"
    steps, kinds = linked(
        question, ("When was Ivo Strand born?", ()), ("When was Lena Marsh born?", ())
    )
    assert [deps for _, deps in steps] == [[], []]
    assert kinds == []


def test_needs_on_itself_or_later_steps_are_dropped() -> None:
    steps, kinds = linked(
        DIRECTOR, ("Who directed Blue Harbor?", (1, 2)), ("Where was #1 born?", (1, 2, 3))
    )
    assert [deps for _, deps in steps] == [[], [1]]
    assert kinds == ["dropped_need", "dropped_need", "dropped_need"]


def test_a_wrong_placeholder_is_renamed_to_the_one_listed_need() -> None:
    steps, kinds = linked(DIRECTOR, ("Who directed Blue Harbor?", ()), ("Where was #2 born?", (1,)))
    assert steps[1] == ("Where was #1 born?", [1])
    assert kinds == ["renamed_ref"]


def test_blank_steps_and_list_numbers_are_removed_and_links_renumbered() -> None:
    steps, _ = linked(
        DIRECTOR, ("1. Who directed Blue Harbor?", ()), (" ", ()), ("3) Where was #1 born?", (1,))
    )
    assert steps == [("Who directed Blue Harbor?", []), ("Where was #1 born?", [1])]


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([], "the plan has no sub-questions"),
        ([("Who directed #1?", ())], "sub-question 1 refers to its own answer (#1)"),
        ([("Who is X?", ()), ("Where was #3 born?", ())], "refers to #3, but the plan has no"),
        ([("Who is X?", ()), ("", ()), ("When was #2 born?", ())], "refers to #2, which is empty"),
        (
            [("Who married #2?", ()), ("Who directed #1?", (1,))],
            "sub-questions depend on each other in a cycle: #1 → #2 → #1",
        ),
    ],
)
def test_what_cannot_be_repaired_is_a_plan_error(
    steps: list[tuple[str, tuple[int, ...]]], message: str
) -> None:
    with pytest.raises(PlanError, match=message.replace("(", r"\(").replace(")", r"\)")):
        linked("Q?", *steps)


def test_answer_phrases_and_new_names() -> None:
    assert answer_phrases("Who was the first president of #1?") == ["first president of #1"]
    assert answer_phrases("In which country is the Bubye River?") == ["country"]
    assert answer_phrases("When was Ivo Strand born?") == []
    assert answer_phrases("What is the Tekeze River?") == []  # a name is not its own answer
    assert answer_phrases("Who is the performer of Hello Love?") == ["performer of hello love"]
    assert new_names("Where was Steven Spielberg born?", [DIRECTOR]) == ["Steven Spielberg"]
    # Accents and known words do not make a name new.
    assert new_names("What river does the Tekezé River turn into?", ["the Tekeze River"]) == []
