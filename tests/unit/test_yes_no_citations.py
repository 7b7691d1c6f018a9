"""A yes/no answer cites each judged yes/no step's subject page, verified when the page agrees."""

from graphs.agent.cite import pages_read, step_citations
from nodes.agent.plan_dag import SubQuestion
from nodes.citations.attribution import Claim, ReadText

HARBOR = ReadText(1, "Blue Harbor", "films.json", "Blue Harbor is a drama film. It ran long.", 1, 1)
SIDE = ReadText(3, "Cel animation", "films.json", "Blue Harbor is not an animated film.", 1, 1)
LANTERN = ReadText(2, "Night Lantern", "films.json", "Night Lantern is an animated film.", 2, 1)
PLAN = [
    SubQuestion(index=1, text="Is Blue Harbor an animated film?", depends_on=[]),
    SubQuestion(index=2, text="Is Night Lantern an animated film?", depends_on=[]),
]
HOPS = [
    Claim("Is Blue Harbor an animated film?", "", (SIDE, HARBOR), hop=1),
    Claim("Is Night Lantern an animated film?", "", (LANTERN,), hop=2),
]


def test_each_step_cites_its_subject_page_and_the_page_that_settles_no_is_verified() -> None:
    cited = step_citations("No", PLAN, HOPS)
    # Blue Harbor's own page, not the side passage that names it, and its nearest sentence.
    assert [(c["title"], c["text"], c["hop"], c["verified"]) for c in cited] == [
        ("Blue Harbor", "Blue Harbor is a drama film.", 1, True),
        ("Night Lantern", "Night Lantern is an animated film.", 2, False),
    ]
    assert [c["verified"] for c in step_citations("yes", PLAN, HOPS)] == [False, True]


def test_other_answers_and_unjudged_plans_give_no_step_citations() -> None:
    assert step_citations("Blue Harbor", PLAN, HOPS) == []
    whole = [SubQuestion(index=1, text="Are both animated films?", depends_on=[])]
    assert step_citations("yes", whole, HOPS[:1]) == []


def test_a_hops_reading_of_one_passage_is_one_page() -> None:
    unit = ReadText(1, "Blue Harbor", "films.json", "Blue Harbor was made in 1998.", 1, 2)
    (page,) = pages_read((HARBOR, unit))
    assert (page.id, page.title) == (1, "Blue Harbor")
    assert page.text == "Blue Harbor is a drama film. It ran long. Blue Harbor was made in 1998."
