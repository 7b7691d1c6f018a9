"""The yes check: a "yes" needs each yes/no step's subject passage to state the step's predicate."""

from nodes.agent.plan_dag import SubQuestion
from nodes.agent.yes_check import same_stem, subject_and_predicate, unsupported_yes
from store.retrieval import PassageText

HARBOR = PassageText(1, "Blue Harbor (1998 film)", "Blue Harbor is a 1998 animated feature film.")
LANTERN = PassageText(2, "Night Lantern", "Night Lantern is a 1976 British family drama film.")
SIDE = PassageText(3, "Cel animation", "Most animated features were drawn on cels.")
TEXTS = {p.id: p for p in (HARBOR, LANTERN, SIDE)}


def steps(*texts: str) -> list[SubQuestion]:
    return [SubQuestion(index=k, text=t, depends_on=[]) for k, t in enumerate(texts, start=1)]


def test_the_subject_is_a_passage_title_and_the_rest_its_predicate() -> None:
    found = subject_and_predicate("Is Blue Harbor an animated feature?", [HARBOR, SIDE])
    assert found == (HARBOR, ["animated", "feature"])
    # A title's own "The" is the title's; an article the title lacks stops the match.
    the_film = PassageText(4, "The Lantern", "The Lantern is a play.")
    assert subject_and_predicate("Is The Lantern a play?", [the_film]) == (the_film, ["play"])
    assert subject_and_predicate("Is the Night Lantern a British film?", [LANTERN]) is None
    # Not a yes/no step, or no passage title at its start: not judged.
    assert subject_and_predicate("Who directed Blue Harbor?", [HARBOR]) is None
    assert subject_and_predicate("Is it an animated feature?", [HARBOR]) is None
    # A predicate that still joins things, or names an earlier step, is not judged either.
    assert subject_and_predicate("Is Blue Harbor the same film as #1?", [HARBOR]) is None
    assert subject_and_predicate("Is Blue Harbor British and animated?", [HARBOR]) is None


def test_a_yes_whose_step_passage_leaves_the_predicate_unsaid_becomes_no() -> None:
    plan = steps("Is Blue Harbor an animated feature?", "Is Night Lantern an animated feature?")
    # Night Lantern's own passage never says "animated" or "feature"; the side passage that
    # does is not its page.
    found = unsupported_yes("Yes", plan, {1: [1, 3], 2: [3, 2]}, TEXTS)
    assert found is not None
    assert (found.hop, found.subject, found.missing) == (
        2,
        "Night Lantern",
        ("animated", "feature"),
    )
    assert "step 2" in found.why() and '"animated"' in found.why()


def test_a_yes_every_step_bears_out_stands() -> None:
    plan = steps("Is Blue Harbor a feature film?", "Is Night Lantern a British film?")
    assert unsupported_yes("yes", plan, {1: [1], 2: [2]}, TEXTS) is None
    # "Britain" and "British" are one stem; so are "features" and "feature".
    assert same_stem("britain", "british") and same_stem("features", "feature")
    assert not same_stem("obe", "oboe")


def test_other_answers_and_unjudged_steps_are_left_alone() -> None:
    plan = steps("Is Night Lantern an animated feature?")
    assert unsupported_yes("no", plan, {1: [2]}, TEXTS) is None
    assert unsupported_yes("Night Lantern", plan, {1: [2]}, TEXTS) is None
    # The step's subject passage was not among its passages: nothing to judge it by.
    assert unsupported_yes("yes", plan, {1: [3]}, TEXTS) is None
