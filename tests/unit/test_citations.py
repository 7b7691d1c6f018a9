"""Citations are picked from what was read and verified by reading it: no model, exact rules."""

from nodes.citations.attribution import (
    Claim,
    ReadText,
    answer_supported,
    cite_answer,
    on_topic,
    support,
)
from nodes.citations.text import normalise, sentences, states

DIRECTOR = ReadText(
    7,
    "Blue Harbor",
    "films/blue_harbor.md",
    "Blue Harbor is a 1998 drama film starring Mara Quell. Blue Harbor was directed by Tomas Reyd.",
    hop=1,
    round=1,
)
BIRTH = ReadText(
    9,
    "Tomas Reyd",
    "films/reyd.md",
    "Tomas Reyd is a film director. Tomas Reyd was born in Lisbon in 1950.",
    hop=2,
    round=2,
)
PAINTER = ReadText(11, "Ivo Strand", "", "Ivo Strand is a painter. He was born in 1962 in Oslo.")


def test_normalised_text_folds_case_accents_punctuation_and_articles() -> None:
    assert normalise("The Malmö  F.C.!") == "malmo fc"
    assert sentences("Dr. Who. It is 3.5 m tall. 1950 was a year.") == [
        "Dr. Who.",
        "It is 3.5 m tall.",
        "1950 was a year.",
    ]
    assert sentences("no end here") == ["no end here"]


def test_an_initial_or_a_title_before_a_name_ends_no_sentence() -> None:
    text = (
        "It began with G. Stanley Hall's book. Hall led the U.S. Army. He left St. Louis. Then A."
    )
    assert sentences(text) == [
        "It began with G. Stanley Hall's book.",
        "Hall led the U.S. Army.",
        "He left St. Louis.",
        "Then A.",
    ]
    assert states(sentences(text)[0], "G. Stanley Hall")


def test_an_answer_is_stated_in_a_row_or_word_by_word_never_yes_or_no() -> None:
    assert states("He was born in Lisbon in 1950.", "lisbon")
    assert states("born in Leyton, in East London", "Leyton, East London")
    assert not states("born in East Ham", "Leyton, East London")
    assert not states("Lisbonese cooking", "Lisbon")  # whole words only
    assert not states("yes, no, yes", "Yes")
    assert not states("anything", "")


def test_a_claim_is_cited_by_the_sentence_that_states_it() -> None:
    claim = Claim("Who directed Blue Harbor?", "Tomas Reyd", (BIRTH, DIRECTOR), hop=1)
    citation = support(claim)
    # BIRTH comes first and names Tomas Reyd too, but DIRECTOR's sentence shares the question's
    # words ("directed", "Blue Harbor").
    assert citation == {
        "passage_id": 7,
        "title": "Blue Harbor",
        "source": "films/blue_harbor.md",
        "text": "Blue Harbor was directed by Tomas Reyd.",
        "hop": 1,
        "round": 1,
        "verified": True,
    }


def test_an_unstated_answer_gets_the_closest_sentence_unverified_or_none() -> None:
    paraphrase = Claim("Where was Tomas Reyd born?", "Portugal", (PAINTER, BIRTH))
    citation = support(paraphrase)
    assert citation is not None
    assert citation["text"] == "Tomas Reyd was born in Lisbon in 1950."
    assert citation["verified"] is False
    assert support(Claim("What is a quark?", "a particle", (PAINTER,))) is None
    assert support(Claim("Where was Tomas Reyd born?", "unknown", (BIRTH,))) is None
    assert support(Claim("Where was Tomas Reyd born?", "Lisbon", ())) is None


def test_an_answer_cites_each_hop_then_its_own_text_only_when_no_hop_states_it() -> None:
    hops = [
        Claim("Who directed Blue Harbor?", "Tomas Reyd", (DIRECTOR,), hop=1),
        Claim("Where was Tomas Reyd born?", "Lisbon", (BIRTH,), hop=2),
    ]
    final = Claim("Where was the director of Blue Harbor born?", "Lisbon", (DIRECTOR, BIRTH))
    cited = cite_answer(final, hops)
    assert [(c["passage_id"], c["hop"], c["verified"]) for c in cited] == [
        (7, 1, True),
        (9, 2, True),
    ]
    assert answer_supported("Lisbon", cited)
    # A final answer no hop gave, but a text read states: cited from there, with its hop.
    born = Claim("When was the director of Blue Harbor born?", "1950", (DIRECTOR, BIRTH))
    with_year = cite_answer(born, hops[:1])
    assert [(c["passage_id"], c["hop"], c["round"]) for c in with_year] == [(7, 1, 1), (9, 2, 2)]
    assert with_year[1]["text"] == "Tomas Reyd was born in Lisbon in 1950."
    # A final answer nothing states adds nothing to the hops' citations, and is unsupported.
    guessed = Claim("Where was the director of Blue Harbor born?", "Porto", (DIRECTOR, BIRTH))
    assert cite_answer(guessed, hops) == cited
    assert not answer_supported("Porto", cited)


def test_a_hop_sentence_stating_the_final_answer_is_verified_though_the_hop_said_more() -> None:
    hops = [Claim("Where was Tomas Reyd born?", "Lisbon, Portugal", (BIRTH,), hop=2)]
    assert [c["verified"] for c in cite_answer(Claim("Where?", "Portugal", (BIRTH,)), hops)] == [
        False
    ]
    final = Claim("Where was the director of Blue Harbor born?", "Lisbon", (BIRTH,))
    cited = cite_answer(final, hops)
    assert [(c["passage_id"], c["hop"], c["verified"]) for c in cited] == [(9, 2, True)]
    assert cited[0]["text"] == "Tomas Reyd was born in Lisbon in 1950."


def test_a_reader_without_hops_cites_its_best_text_even_unverified() -> None:
    only = cite_answer(Claim("Where was Tomas Reyd born?", "Portugal", (PAINTER, BIRTH)))
    assert [(c["passage_id"], c["verified"]) for c in only] == [(9, False)]
    assert cite_answer(Claim("Where was Tomas Reyd born?", "Lisbon", ())) == []


def test_a_yes_no_answer_is_supported_only_by_verified_hops() -> None:
    hops = [
        Claim("Who directed Blue Harbor?", "Tomas Reyd", (DIRECTOR,), hop=1),
        Claim("Where was Tomas Reyd born?", "Lisbon", (BIRTH,), hop=2),
    ]
    final = Claim("Was the director of Blue Harbor born in Lisbon?", "yes", (DIRECTOR, BIRTH))
    cited = cite_answer(final, hops)
    assert len(cited) == 2 and answer_supported("yes", cited)
    assert not answer_supported("no", [])
    assert not answer_supported("yes", [{**cited[0], "verified": False}])


def test_a_possessive_states_its_noun_and_a_matching_title_breaks_ties() -> None:
    assert states("Signmark competed in Finland's qualifications.", "Finland")
    # Both sentences state Belgium and share as many words with the question: the passage
    # whose title names the question's subject is cited (the other was read first).
    sailor = ReadText(
        1, "Arnoud van der Biesen", "", "He sailed at the 1920 Summer Olympics in Belgium."
    )
    sweden = ReadText(
        2,
        "Sweden at the 1920 Summer Olympics",
        "",
        "Sweden went to the 1920 Summer Olympics in Belgium.",
    )
    claim = Claim(
        "In which country were the 1920 Summer Olympics held?", "Belgium", (sailor, sweden)
    )
    citation = support(claim)
    assert citation is not None and citation["passage_id"] == 2


# A side step that read the wrong passage: its sentence states its answer but names nothing of
# its question (year, vic, darchinyan, turn, professional).
SIDE_STEP = Claim("In which year did Vic Darchinyan turn professional?", "1962", (PAINTER,), hop=2)
DIRECTED = Claim("Who directed Blue Harbor?", "Tomas Reyd", (DIRECTOR,), hop=1)


def test_a_hop_citation_naming_too_little_of_its_question_is_left_out() -> None:
    side = support(SIDE_STEP)
    assert side is not None and side["verified"] and not on_topic(side, SIDE_STEP.question)
    final = Claim("Who directed Blue Harbor?", "Tomas Reyd", (DIRECTOR, PAINTER))
    cited = cite_answer(final, [DIRECTED, SIDE_STEP])
    assert [(c["passage_id"], c["hop"]) for c in cited] == [(7, 1)]
    # The share is of the question's content words ("Ivo Strand" names ivo): one of three is
    # enough (0.33), one of four is not (0.25).
    assert on_topic(side, "Which club did Ivo coach?")
    assert not on_topic(side, "Which club did Ivo coach in 1990?")


def test_an_off_topic_citation_stays_when_it_alone_states_the_answer_or_all_are_off() -> None:
    # The final answer is the side step's: its citation is the answer's only support, so it stays.
    final = Claim("When did Vic Darchinyan turn professional?", "1962", (DIRECTOR, PAINTER))
    cited = cite_answer(final, [DIRECTED, SIDE_STEP])
    assert [(c["passage_id"], c["hop"]) for c in cited] == [(7, 1), (11, 2)]
    assert answer_supported("1962", cited)
    # Every citation off topic: all stay, so an answer with evidence keeps a source.
    alone = cite_answer(Claim("Who won?", "Tomas Reyd", (PAINTER,)), [SIDE_STEP])
    assert [(c["passage_id"], c["hop"]) for c in alone] == [(11, 2)]
