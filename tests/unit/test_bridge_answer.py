"""inner_hops=bridge: the entity an inner hop's best unit names, of the type its question asks."""

from nodes.agent.bridge_answer import asked_types, pick_answer


def test_the_question_word_names_the_types_asked_for() -> None:
    assert asked_types("Who directed Blue Harbor?") == asked_types("Whose album is Brother?")
    assert "person" in (asked_types("Who directed Blue Harbor?") or set())
    assert "date" in (asked_types("When did the Admiral Twin open?") or set())
    assert "date" in (asked_types("In what year was Novair founded?") or set())
    assert "place" in (asked_types("Where was Tomas Reyd born?") or set())
    assert "place" in (asked_types("In which country is Clonbrook located?") or set())
    assert "quantity" in (asked_types("How many stores are in Florida?") or set())
    assert asked_types("What sport does David Jones play?") is None


def test_the_first_new_entity_of_an_asked_type_is_the_answer() -> None:
    named = [("Blue Harbor", "Film"), ("Mara Quell", "Person"), ("Tomas Reyd", "Person")]
    assert pick_answer("Who directed Blue Harbor?", named) == "Mara Quell"
    # A name the sub-question already holds is never its answer, whatever its type.
    assert pick_answer("Who starred with Mara Quell?", named) == "Tomas Reyd"


def test_a_type_the_question_does_not_ask_for_is_passed_over() -> None:
    named = [("1998", "date"), ("Lisbon", "place"), ("Tomas Reyd", "person")]
    assert pick_answer("Where was Tomas Reyd born?", named) == "Lisbon"
    assert pick_answer("When was Tomas Reyd born?", named) == "1998"


def test_with_no_entity_of_an_asked_type_there_is_no_answer() -> None:
    named = [("the Journal", "work"), ("Psychology", "topic"), ("the Journal", "work")]
    assert pick_answer("Who published it?", named) == ""
    # A question word that asks for no type takes the first new name.
    assert pick_answer("What field is it in?", named) == "the Journal"


def test_nothing_new_gives_no_answer() -> None:
    assert pick_answer("Who directed Blue Harbor?", [("Blue Harbor", "Film")]) == ""
    assert pick_answer("Who directed Blue Harbor?", []) == ""


def test_a_nationality_answers_who_only_when_no_person_or_organization_does() -> None:
    # spaCy types "American" (NORP) as a group; the person named after it is the one asked for.
    named = [("Blue Harbor", "topic"), ("American", "group"), ("Mara Quell", "person")]
    assert pick_answer("Who directed Blue Harbor?", named) == "Mara Quell"
    assert pick_answer("Who directed Blue Harbor?", named[:2]) == "American"
    # A question that asks for no type takes the first new name, a nationality included.
    nationality_first = [("American", "group"), ("Blue Harbor", "topic")]
    assert pick_answer("What is the nationality of Mara Quell?", nationality_first) == "American"


def test_which_band_asks_for_what_who_asks_for() -> None:
    # spaCy types a band as a person as often as an organization: the noun narrows nothing.
    assert asked_types("Which band made Harbor Nights?") == asked_types("Who made Harbor Nights?")
    assert asked_types("What record label signed Grey Tide?") == asked_types("Who signed them?")
    assert asked_types("Which actors starred in Blue Harbor?") == asked_types("Who starred?")
    assert asked_types("What album did Grey Tide release?") is None


ALBUM = 'Harbor Nights, also known as "Salt Army", is a live album by the rock band Grey Tide.'
ALBUM_NAMED = [
    ("Harbor Nights", "organization"),
    ("Salt Army", "organization"),
    ("Grey Tide", "person"),
]


def test_an_alias_of_a_name_the_question_holds_is_not_its_answer() -> None:
    question = "Which band made the live album Harbor Nights?"
    assert pick_answer(question, ALBUM_NAMED, ALBUM) == "Grey Tide"
    # Without the unit's text the alias looks like a new organization.
    assert pick_answer(question, ALBUM_NAMED) == "Salt Army"


def test_an_alias_stays_an_answer_where_a_name_is_asked_for_or_it_names_something_else() -> None:
    assert pick_answer("What else is Harbor Nights called?", ALBUM_NAMED, ALBUM) == "Salt Army"
    # Salt Army is another name of the album, not of the band the question names.
    assert (
        pick_answer("Which album did Grey Tide record live?", ALBUM_NAMED, ALBUM) == "Harbor Nights"
    )
    renamed = "Since 2015 she sings in Drift Road, previously known as the JJ Band."
    named = [("2015", "date"), ("Drift Road", "organization"), ("the JJ Band", "organization")]
    assert pick_answer("Which band is Mira Sol a member of?", named, renamed) == "Drift Road"
    assert pick_answer("What was Drift Road called before?", named[1:], renamed) == "the JJ Band"


def test_a_name_in_parentheses_after_a_name_the_question_holds_is_not_its_answer() -> None:
    ballet = 'Aschenbrodel ("Cinderella") is a ballet written by Johann Strauss II.'
    named = [("Aschenbrodel", "work"), ("Cinderella", "person"), ("Johann Strauss II", "person")]
    assert pick_answer("Who wrote Aschenbrodel?", named, ballet) == "Johann Strauss II"
    album = "Izgoy (Изгой, Exile) is a studio album by Alisa."
    named = [("Izgoy", "work"), ("Изгой", "work"), ("Exile", "work"), ("Alisa", "person")]
    assert pick_answer("Who was Izgoy's performer?", named, album) == "Alisa"
    # After a name the question does not hold, the parenthesis gives new names.
    assert pick_answer("What album did Alisa release?", named[1:], album) == "Изгой"


def test_a_place_in_a_parenthesis_of_facts_is_still_an_answer() -> None:
    born = "Sarah Sorge (born 26 August 1969 in Frankfurt) is a German politician."
    named = [("Sarah Sorge", "person"), ("26 August 1969", "date"), ("Frankfurt", "place")]
    assert pick_answer("Where was Sarah Sorge born?", named, born) == "Frankfurt"
    listed = "Jon Reid (born October 24, 1972, Nashville, U.S.) is a boxer."
    named = [("Jon Reid", "person"), ("Nashville", "place"), ("U.S.", "place")]
    assert pick_answer("Where was Jon Reid born?", named, listed) == "Nashville"
