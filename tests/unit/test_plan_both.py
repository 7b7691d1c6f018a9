"""The plan of a "both" question, written from its words without a model call."""

import pytest

from nodes.agent.plan_both import both_plan, predicate


def steps(question: str) -> list[str] | None:
    plan = both_plan(question)
    return None if plan is None else [sq["text"] for sq in plan.sub_questions]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "Are Medici and Senet both board games?",
            ["Is Medici a board game?", "Is Senet a board game?"],
        ),
        (
            "Were King Vidor and Géza von Cziffra both American directors?",
            ["Was King Vidor an American director?", "Was Géza von Cziffra an American director?"],
        ),
        (
            "Are both magazines, the Woman's Viewpoint and Pick Me Up, British publications?",
            [
                "Is the Woman's Viewpoint a British publication?",
                "Is Pick Me Up a British publication?",
            ],
        ),
        (
            "Are the films Nandhi and Oru Swakaryam both Tamil-language films?",
            ["Is Nandhi a Tamil-language film?", "Is Oru Swakaryam a Tamil-language film?"],
        ),
        (
            "Are the actress Zoe Levin and the actress Araby Lockhart both American?",
            ["Is Zoe Levin American?", "Is Araby Lockhart American?"],
        ),
        (
            "Are the Musée de la Mer and the Musée Boribana both located in Senegal?",
            [
                "Is the Musée de la Mer located in Senegal?",
                "Is the Musée Boribana located in Senegal?",
            ],
        ),
    ],
)
def test_each_name_gets_its_own_yes_no_step(question: str, expected: list[str]) -> None:
    plan = both_plan(question)

    assert plan is not None
    assert [sq["text"] for sq in plan.sub_questions] == expected
    assert [(sq["index"], sq["depends_on"]) for sq in plan.sub_questions] == [(1, []), (2, [])]


@pytest.mark.parametrize(
    "question",
    [
        # "same X": no one page settles it; the planner asks what X each has.
        "Are Watertown International Airport and Alexandria International Airport both "
        "airports in the same state?",
        # Two "and"s: where one name ends is not sure.
        "Are the Mine Safety and Health Administration and the General Intelligence and "
        "Security Service both agencies of the United States?",
        # A pronoun is the conversation's to resolve, which only the planner reads.
        "Are it and Frozen both animated features?",
        "Are they both American?",
        # "both" before an uncut pair: where the second name ends is not sure.
        "Are both Hal Hartley and Brian Levant American film directors?",
        "Who performed in both Welcome to the Show and the band f(x)?",
        "Which band was formed first, The Exies or Circus Diablo?",
    ],
)
def test_a_question_not_surely_of_the_form_goes_to_the_planner(question: str) -> None:
    assert both_plan(question) is None


@pytest.mark.parametrize(
    ("what", "expected"),
    [
        ("universities in Africa", "a university in Africa"),
        ("American actresses", "an American actress"),
        ("agencies of the United States", "an agency of the United States"),
        ("animated features", "an animated feature"),
        ("one-act plays", "a one-act play"),
        (
            "in the Ecclesiastical province of Kisangani",
            "in the Ecclesiastical province of Kisangani",
        ),
        ("American", "American"),
        ("famous", "famous"),
        ("members of the same band", None),
        ("members of Blur", "a member of Blur"),
        ("part of the Ottoman Empire", "part of the Ottoman Empire"),
        ("in the same league", None),
    ],
)
def test_the_predicate_names_one_of_its_kind(what: str, expected: str | None) -> None:
    assert predicate(what) == expected


def test_the_plan_sentence_names_both_and_the_predicate() -> None:
    plan = both_plan("Are  Frozen and Escape from the Dark both animated features ?")

    assert plan is not None
    assert (
        plan.text
        == "Ask of Frozen and of Escape from the Dark whether each is an animated feature."
    )
