"""Identity steps ("Who is X?" for a name the question writes) leave the plan; their #k become X."""

from __future__ import annotations

from nodes.agent.plan_links import DraftStep, link_plan
from nodes.agent.plan_prune import drop_identity_steps, identity_name

QUESTION = (
    "At the 2011 census, what was the population of the city where Kerry Saxby-Junna was born?"
)


def test_a_step_asking_only_who_a_named_person_is_is_an_identity_step() -> None:
    assert identity_name("Who was Kerry Saxby-Junna?", QUESTION) == "Kerry Saxby-Junna"
    assert identity_name("What is the Koolauloa District?", "a luau in the Koolauloa District") == (
        "Koolauloa District"
    )
    assert identity_name("Who was Haymo of Faversham?", "the era of Haymo of Faversham") == (
        "Haymo of Faversham"
    )
    # Accents are folded as the plan's other repairs fold them.
    assert identity_name("What is the Tekezé River?", "the Tekeze River turns into") == (
        "Tekezé River"
    )


def test_steps_that_ask_for_a_fact_or_a_name_the_question_lacks_stay() -> None:
    assert identity_name("Who is Barry Wesson's team?", "Barry Wesson's team played") is None
    assert identity_name("What is the luau?", "after attending a luau") is None  # not a name
    assert identity_name("Who is the main director?", "Big Eye's main director") is None
    assert identity_name("Who is Lena Marsh?", QUESTION) is None  # the question never names her
    assert identity_name("Where was Kerry Saxby-Junna born?", QUESTION) is None
    # A name inside a longer word of the question is not the question's name.
    assert identity_name("Who is Kerry?", "Kerryman Saxby") is None


def test_dropping_writes_the_name_for_its_hash_and_renumbers_later_steps() -> None:
    texts = [
        "Who was Kerry Saxby-Junna?",
        "In which city was #1 born?",
        "What was the population of #2 in 2011?",
    ]
    kept, dropped = drop_identity_steps(QUESTION, texts)
    assert kept == [
        "In which city was Kerry Saxby-Junna born?",
        "What was the population of #1 in 2011?",
    ]
    assert dropped == [(1, "Kerry Saxby-Junna")]


def test_a_plan_of_identity_steps_only_and_steps_that_build_on_others_are_kept() -> None:
    question = "Are Mark King and Nick Hexum both singers?"
    only = ["Who is Mark King?", "Who is Nick Hexum?"]
    assert drop_identity_steps(question, only) == (only, [])
    built = ["Who directed Blue Harbor?", "Who is #1?"]
    assert drop_identity_steps("Who directed Blue Harbor?", built) == (built, [])


def test_link_plan_drops_identity_steps_and_says_so() -> None:
    question = "Which singer is American, Mark King or Nick Hexum?"
    steps, repairs = link_plan(
        question,
        [
            DraftStep("Who is Mark King?"),
            DraftStep("Who is Nick Hexum?"),
            DraftStep("Is #1 or #2 American?", (1, 2)),
        ],
        "drop",
    )
    assert [(s["index"], s["text"], s["depends_on"]) for s in steps] == [
        (1, "Is Mark King or Nick Hexum American?", [])
    ]
    assert [(r.step, r.kind) for r in repairs if r.kind == "identity"] == [
        (1, "identity"),
        (2, "identity"),
    ]
