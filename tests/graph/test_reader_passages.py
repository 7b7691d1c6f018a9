"""The reader's passages: each hop's answer-stating passage first, then the hops in turn."""

from langchain_core.messages import AIMessage, HumanMessage
from sqlalchemy import Engine, select

from graphs.agent.context import GraspContext
from graphs.agent.hop_reads import HopRead, RoundRead
from graphs.agent.reader_passages import hop_passage_texts, question_passage
from graphs.agent.state import GraspState
from graphs.runtime.services import Services
from nodes.agent.plan_dag import SubQuestion
from store.corpora import corpus_id
from store.engine import transaction
from store.models import Passage
from tests.fixtures.films import build_corpus, services

#: Step 2 builds on step 1.
CHAIN = [
    SubQuestion(index=1, text="Who directed Blue Harbor?", depends_on=[]),
    SubQuestion(index=2, text="Where was #1 born?", depends_on=[1]),
]


def films(engine: Engine, database_url: str) -> tuple[Services, tuple[int, int, int, int]]:
    """Services over the films corpus and its passages' ids: Blue Harbor, Tomas Reyd, Ivo Strand,
    Lena Marsh."""
    build_corpus(engine)
    with transaction(engine) as session:
        ids = {title: pid for title, pid in session.execute(select(Passage.title, Passage.id))}
    titles = ("Blue Harbor", "Tomas Reyd", "Ivo Strand", "Lena Marsh")
    blue, tomas, ivo, lena = (ids[t] for t in titles)
    return services(engine, database_url, []), (blue, tomas, ivo, lena)


async def test_the_passage_stating_a_hop_answer_is_read_before_better_ranked_ones(
    engine: Engine, database_url: str
) -> None:
    svc, (blue, tomas, ivo, lena) = films(engine, database_url)
    # Hop 1 answered "Tomas Reyd" (stated in Blue Harbor's and Tomas Reyd's passages), hop 2
    # "Lisbon" (Tomas Reyd's only); each hop ranked an unrelated passage first.
    state = GraspState(
        hop_passages={1: [ivo, blue, tomas], 2: [lena, ivo, tomas]},
        answers={1: "Tomas Reyd", 2: "Lisbon"},
    )
    read = await hop_passage_texts(svc, state, 3)
    # In turn: hop 1's first (Blue Harbor), hop 2's first (Tomas Reyd), then hop 1's second is
    # Tomas Reyd again, so hop 2's second, Lena Marsh, fills the limit.
    assert [p.title for p in read] == ["Blue Harbor", "Tomas Reyd", "Lena Marsh"]
    # A hop that found nothing keeps its retrieval order.
    state = GraspState(hop_passages={1: [ivo, blue]}, answers={1: "unknown"})
    assert [p.title for p in await hop_passage_texts(svc, state, 5)] == [
        "Ivo Strand",
        "Blue Harbor",
    ]
    assert await hop_passage_texts(svc, GraspState(hop_passages={}), 5) == []


async def test_a_hop_that_searched_again_and_found_nothing_gives_its_first_round(
    engine: Engine, database_url: str
) -> None:
    svc, (blue, tomas, ivo, lena) = films(engine, database_url)
    rounds = [
        RoundRead(round=1, kind="passages", ids=[tomas, blue, lena]),
        RoundRead(round=2, kind="passages", ids=[ivo, lena]),
    ]
    drifted = HopRead(answered_in=2, rounds=rounds)
    # Unknown after two rounds: the first round's passages, as many as the hop kept.
    state = GraspState(
        hop_passages={1: [ivo, lena]}, answers={1: "unknown"}, hop_reads={1: drifted}
    )
    assert [p.title for p in await hop_passage_texts(svc, state, 5)] == [
        "Tomas Reyd",
        "Blue Harbor",
    ]
    # Answered after two rounds, or unknown after one: the passages the hop kept.
    state = GraspState(hop_passages={1: [ivo, lena]}, answers={1: "1962"}, hop_reads={1: drifted})
    assert [p.title for p in await hop_passage_texts(svc, state, 5)] == [
        "Ivo Strand",
        "Lena Marsh",
    ]
    once = HopRead(answered_in=1, rounds=rounds[1:])
    state = GraspState(hop_passages={1: [ivo, lena]}, answers={1: "unknown"}, hop_reads={1: once})
    assert [p.title for p in await hop_passage_texts(svc, state, 5)] == [
        "Ivo Strand",
        "Lena Marsh",
    ]


async def test_an_inner_hop_gives_the_reader_only_the_passage_its_answer_came_from(
    engine: Engine, database_url: str
) -> None:
    svc, (blue, tomas, ivo, lena) = films(engine, database_url)
    # Step 2 builds on step 1 ("Where was #1 born?"): step 1's answer-stating passage, Blue
    # Harbor, is all it hands on, and step 2's passages fill the other places.
    state = GraspState(
        hop_passages={1: [ivo, blue, lena], 2: [tomas, lena, ivo]},
        answers={1: "Tomas Reyd", 2: ""},
        sub_questions=CHAIN,
    )
    read = await hop_passage_texts(svc, state, 4)
    assert [p.title for p in read] == ["Blue Harbor", "Tomas Reyd", "Lena Marsh", "Ivo Strand"]
    # With no step built on another, every hop is read in turn, as before.
    state = GraspState(hop_passages=state["hop_passages"], answers=state["answers"])
    read = await hop_passage_texts(svc, state, 4)
    assert [p.title for p in read] == ["Blue Harbor", "Tomas Reyd", "Ivo Strand", "Lena Marsh"]


async def test_the_questions_best_passage_takes_the_last_place_when_the_hops_missed_it(
    engine: Engine, database_url: str
) -> None:
    svc, (blue, tomas, ivo, lena) = films(engine, database_url)
    state = GraspState(
        hop_passages={1: [ivo, blue], 2: [tomas, ivo]},
        answers={1: "Tomas Reyd", 2: ""},
        sub_questions=CHAIN,
    )
    hops_only = ["Blue Harbor", "Tomas Reyd", "Ivo Strand"]
    assert [p.title for p in await hop_passage_texts(svc, state, 4)] == hops_only
    # A place is free: the question's passage joins at the end.
    read = await hop_passage_texts(svc, state, 4, question_best=lena)
    assert [p.title for p in read] == [*hops_only, "Lena Marsh"]
    # No place is free: it takes the last one.
    read = await hop_passage_texts(svc, state, 3, question_best=lena)
    assert [p.title for p in read] == ["Blue Harbor", "Tomas Reyd", "Lena Marsh"]
    # Already read: nothing moves.
    read = await hop_passage_texts(svc, state, 3, question_best=tomas)
    assert [p.title for p in read] == hops_only


async def test_the_questions_best_passage_comes_from_one_pass_over_the_store(
    engine: Engine, database_url: str
) -> None:
    svc, (blue, tomas, ivo, lena) = films(engine, database_url)
    films_id = corpus_id(engine, "films")
    reader = GraspContext(synthesis="reader")
    state = GraspState(question="In which city was Lena Marsh born?", corpus_id=films_id)
    assert await question_passage(svc, state, reader) == lena
    state = GraspState(question="Who directed Blue Harbor?", corpus_id=films_id)
    assert await question_passage(svc, state, reader) == blue
    # A follow-up turn is searched with the exchange before it, which names its subject.
    follow_up = GraspState(
        question="Where was she born?",
        corpus_id=films_id,
        messages=[
            HumanMessage("Which sculptor is in the collection?"),
            AIMessage("Lena Marsh"),
            HumanMessage("Where was she born?"),
        ],
    )
    assert await question_passage(svc, follow_up, reader) == lena
    alone = GraspState(question="Where was she born?", corpus_id=films_id)
    assert await question_passage(svc, alone, reader) != lena
    # Only the reader reads it; the findings synthesis never searches.
    assert await question_passage(svc, state, GraspContext(synthesis="findings")) is None
