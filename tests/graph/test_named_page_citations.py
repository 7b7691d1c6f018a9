"""A hop's citation comes from the page its question names: both sides of a comparison."""

from sqlalchemy import Engine

from tests.fixtures.films import READER, build_corpus, rule, run, services
from tests.graph.test_yes_check import SETTINGS, both_rules


async def test_a_comparison_cites_both_pages_it_compares(engine: Engine, database_url: str) -> None:
    ids = build_corpus(engine)
    question = "Who was born first, Ivo Strand or Lena Marsh?"
    steps = {"Ivo Strand": "When was Ivo Strand born?", "Lena Marsh": "When was Lena Marsh born?"}
    # The plan and searches of the yes/no test, and a reader that names the elder.
    rules = [
        *both_rules(ids, question, steps)[:-1],
        rule(READER, f"Question: {question}", reply={"answer": "Lena Marsh"}),
    ]
    state, _ = await run(
        services(engine, database_url, rules), question, thread="named", **SETTINGS
    )

    assert state["final_answer"] == "Lena Marsh"
    # Each step's own page, by its sentence nearest the step; the one naming the answer verifies.
    cited = [(c["title"], c["text"], c["hop"], c["verified"]) for c in state["citations"]]
    assert cited == [
        ("Ivo Strand", "Ivo Strand was born in 1962 in Oslo.", 1, False),
        ("Lena Marsh", "Lena Marsh was born in 1958 in Riga.", 2, True),
    ]
