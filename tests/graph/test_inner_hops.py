"""inner_hops=bridge: a hop others build on takes its answer from its evidence, with no call."""

from sqlalchemy import Engine

from graphs.agent.context import GraspContext
from graphs.agent.hop_end import bridge_end, bridged
from graphs.agent.state import Evidence, SubAgentState
from store.corpora import corpus_id, ensure_corpus
from store.graph_writes import ExtractedEntity, ExtractedPassage, write_extracted
from store.passage_writes import add_passages
from store.unit_entities import best_unit_in_passage
from tests.fixtures.films import (
    EMBEDDER,
    EVALUATE,
    PLAN,
    READER,
    SELECT,
    build_corpus,
    run,
    services,
)
from tests.graph.test_final_hops import SETTINGS, reader_services
from tests.graph.test_lean_agent import QUESTION, prompts


async def test_the_inner_hop_is_bridged_from_its_best_unit_and_no_evaluator_is_asked(
    engine: Engine, database_url: str
) -> None:
    svc = reader_services(engine, database_url)
    state, trace = await run(
        svc, QUESTION, thread="bridge", final_hops="read", inner_hops="bridge", **SETTINGS
    )

    kinds = [next(k for k in (PLAN, SELECT, EVALUATE, READER) if k in p) for p in prompts(svc)]
    assert kinds == [PLAN, SELECT, SELECT, READER]
    # "Blue Harbor was directed by Tomas Reyd.": Blue Harbor is the question's; Tomas Reyd a person.
    assert state["answers"] == {1: "Tomas Reyd", 2: ""}
    assert any("Looking for: Where was Tomas Reyd born?" in p for p in prompts(svc))
    assert state["final_answer"] == "Lisbon"
    assert "evaluate" not in [r["node"] for r in state["tokens"]["records"]]
    assert trace["agents"][1][-1] == "evaluate"  # the node ran, and made no call
    # Hop 1's answer is cited from the passage its unit came from, verified without tokens.
    assert any(
        c["title"] == "Blue Harbor" and c["hop"] == 1 and c["verified"] for c in state["citations"]
    )


def films_units(engine: Engine) -> tuple[int, dict[str, tuple[int, int]]]:
    """The films corpus built; its id, and each unit's (id, passage id) by its text."""
    build_corpus(engine)
    with engine.connect() as connection:
        rows = connection.exec_driver_sql("SELECT id, text, passage_id FROM propositions").all()
    return corpus_id(engine, "films"), {text: (uid, pid) for uid, text, pid in rows}


def test_only_an_inner_hop_with_evidence_on_the_graph_search_is_bridged() -> None:
    context = GraspContext(inner_hops="bridge")
    evidence = [Evidence(id=1, title="Blue Harbor", text="…", score=1.0)]
    inner: SubAgentState = {"final": False, "evidence": evidence}
    assert bridged(inner, context)
    assert not bridged({**inner, "final": True}, context)
    assert not bridged({**inner, "evidence": []}, context)
    assert not bridged(inner, GraspContext(inner_hops="bridge", retrieval="dense"))
    assert not bridged(inner, GraspContext(inner_hops="bridge", evidence="propositions"))
    assert not bridged(inner, GraspContext(inner_hops="evaluate"))


def test_the_best_unit_is_the_first_ranked_in_the_passage_with_its_entities_in_text_order(
    engine: Engine,
) -> None:
    corpus, unit = films_units(engine)
    starring = unit["Blue Harbor is a 1998 drama film starring Mara Quell."]
    directed = unit["Blue Harbor was directed by Tomas Reyd."]
    lisbon = unit["Tomas Reyd was born in Lisbon in 1950."]
    harbor = starring[1]

    # Lisbon's unit ranks first but lies in another passage; of Blue Harbor's, the better wins.
    best = best_unit_in_passage(engine, corpus, harbor, [lisbon[0], directed[0], starring[0]])
    assert best is not None and best.id == directed[0]
    assert best.entities == [("Blue Harbor", "Film"), ("Tomas Reyd", "Person")]
    best = best_unit_in_passage(engine, corpus, harbor, [starring[0], directed[0]])
    assert best is not None
    assert best.entities == [("Blue Harbor", "Film"), ("Mara Quell", "Person")]
    assert best_unit_in_passage(engine, corpus, harbor, [lisbon[0]]) is None
    assert best_unit_in_passage(engine, corpus + 1000, harbor, [directed[0]]) is None


async def test_a_bridged_hop_notes_the_unit_it_read_its_answer_from(
    engine: Engine, database_url: str
) -> None:
    corpus, unit = films_units(engine)
    directed, harbor = unit["Blue Harbor was directed by Tomas Reyd."]
    evidence = [Evidence(id=harbor, title="Blue Harbor", text="…", score=1.0)]
    state: SubAgentState = {
        "corpus_id": corpus,
        "index": 1,
        "sub_question": "Who directed Blue Harbor?",
        "final": False,
        "evidence": evidence,
        "hit_units": [directed],
    }
    context = GraspContext(inner_hops="bridge")
    update = await bridge_end(state, context, services(engine, database_url, []))
    assert update is not None
    assert (update["decision"], update["answers"]) == ("DONE", {1: "Tomas Reyd"})
    assert [o["text"] for o in update["observations"]["items"]] == [
        "read from the evidence: Blue Harbor was directed by Tomas Reyd."
    ]
    # A unit that names nothing the question does not: the evaluator is asked instead.
    asks: SubAgentState = {**state, "sub_question": "Who is Tomas Reyd of Blue Harbor?"}
    assert await bridge_end(asks, context, services(engine, database_url, [])) is None


ALBUM = 'Harbor Nights, also known as "Salt Army", is a live album by the rock band Grey Tide.'


async def test_a_bridged_hop_reads_past_an_alias_the_unit_gives_for_the_asked_name(
    engine: Engine, database_url: str
) -> None:
    # spaCy's small model types a band as a person and an album's alias as an organization.
    corpus = ensure_corpus(engine, "albums", EMBEDDER.name)
    (row,) = add_passages(engine, corpus, [("Harbor Nights", ALBUM)])
    named = [("Harbor Nights", "work"), ("Salt Army", "organization"), ("Grey Tide", "person")]
    entities = [ExtractedEntity(n, t, (0,), EMBEDDER.embed([t])[0]) for n, t in named]
    write_extracted(
        engine, corpus, [ExtractedPassage(row.id, [ALBUM], EMBEDDER.embed([ALBUM]), entities)]
    )
    with engine.connect() as connection:
        (unit,) = connection.exec_driver_sql(
            f"SELECT id FROM propositions WHERE corpus_id = {corpus}"
        ).scalars()
    state: SubAgentState = {
        "corpus_id": corpus,
        "index": 1,
        "sub_question": "Which band made the live album Harbor Nights?",
        "final": False,
        "evidence": [Evidence(id=row.id, title="Harbor Nights", text="…", score=1.0)],
        "hit_units": [unit],
    }
    update = await bridge_end(
        state, GraspContext(inner_hops="bridge"), services(engine, database_url, [])
    )
    assert update is not None
    assert update["answers"] == {1: "Grey Tide"}
