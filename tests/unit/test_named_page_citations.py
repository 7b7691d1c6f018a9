"""Each hop cites the page its question names, before the answer's best sentences."""

from graphs.agent.cite import named_first, named_page, named_page_citations, one_per_passage
from nodes.citations.attribution import Citation, Claim, ReadText

WALNUT = ReadText(
    1, "Pterocarya", "plants.json", "Pterocarya is a genus of trees. It grows 30 m tall."
)
BORAGE = ReadText(2, "Cryptantha pterocarya", "plants.json", "Cryptantha pterocarya is a herb.")
DAISY = ReadText(3, "Cotula (plant)", "plants.json", "Cotula is a genus of small herbs.")


def cite(passage: int, text: str, hop: int = 1) -> Citation:
    return Citation(
        passage_id=passage, title="", source="", text=text, hop=hop, round=1, verified=True
    )


def test_the_page_named_whole_by_the_question_and_the_longest_name_wins() -> None:
    assert named_page("How tall is the Pterocarya?", (BORAGE, WALNUT)) == named_page(
        "How tall is the Pterocarya?", (WALNUT,)
    )
    page = named_page("How tall is the Pterocarya?", (BORAGE, WALNUT))
    assert page is not None and page.title == "Pterocarya"
    longer = named_page("Is Cryptantha pterocarya a herb?", (WALNUT, BORAGE))
    assert longer is not None and longer.title == "Cryptantha pterocarya"
    # A parenthesis is no part of a page's name; a name inside another word is not named.
    daisy = named_page("How tall is Cotula?", (DAISY,))
    assert daisy is not None and daisy.id == 3
    assert named_page("How tall are Cotulas?", (DAISY,)) is None


def test_each_hop_cites_its_named_page_with_the_final_answer_when_it_has_none() -> None:
    hops = [
        Claim("How tall is the Pterocarya?", "", (BORAGE, WALNUT), hop=1),
        Claim("How tall is Cotula?", "", (DAISY, BORAGE), hop=2),
        Claim("Which is taller?", "", (WALNUT,), hop=3),  # names no page: no citation
    ]
    cited = named_page_citations("Pterocarya", hops)
    assert [(c["title"], c["text"], c["hop"], c["verified"]) for c in cited] == [
        ("Pterocarya", "Pterocarya is a genus of trees.", 1, True),
        ("Cotula (plant)", "Cotula is a genus of small herbs.", 2, False),
    ]
    # A hop with an answer of its own is cited for that answer.
    answered = [Claim("How tall is the Pterocarya?", "30 m", (WALNUT,), hop=1)]
    (own,) = named_page_citations("Pterocarya", answered)
    assert (own["text"], own["verified"]) == ("It grows 30 m tall.", True)
    # A sentence that states the final answer, not the hop's wording of it, verifies it too.
    worded = [Claim("How tall is the Pterocarya?", "30 metres", (WALNUT,), hop=1)]
    (final,) = named_page_citations("30 m", worded)
    assert (final["text"], final["verified"]) == ("It grows 30 m tall.", True)


def test_one_citation_per_passage_the_first_kept() -> None:
    kept = one_per_passage([cite(1, "a"), cite(2, "b"), cite(1, "c")])
    assert [(c["passage_id"], c["text"]) for c in kept] == [(1, "a"), (2, "b")]


def test_a_hop_citing_its_named_page_adds_no_other_sentence() -> None:
    named = [cite(1, "Pterocarya is a genus of trees.", 1)]
    rest = [
        cite(2, "Cryptantha pterocarya grows 30 m tall.", 1),  # hop 1 named its page: dropped
        cite(3, "Cotula is 30 cm tall.", 2),  # hop 2 named none: kept
    ]
    kept = named_first("Pterocarya", named, rest)
    assert [c["passage_id"] for c in kept] == [1, 3]
    # The answer keeps its support: the first sentence stating it comes back.
    kept = named_first("30 m", named, rest)
    assert [c["passage_id"] for c in kept] == [1, 3, 2]
    kept = named_first("30 cm", named, rest)
    assert [c["passage_id"] for c in kept] == [1, 3]


def test_the_answer_sentence_is_cited_even_from_a_passage_already_cited() -> None:
    named = [cite(1, "Pterocarya is a genus of trees.", 1)]
    rest = [cite(1, "It grows 30 m tall.", 2)]
    kept = named_first("30 m", named, rest)
    assert [(c["passage_id"], c["text"]) for c in kept] == [
        (1, "Pterocarya is a genus of trees."),
        (1, "It grows 30 m tall."),
    ]
    # When a kept sentence states the answer, the passage is cited once.
    assert len(named_first("Pterocarya", named, rest)) == 1
