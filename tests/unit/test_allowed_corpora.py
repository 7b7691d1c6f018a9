"""GRASP_ALLOWED_CORPORA: a deployment names the corpora runs may read; others are refused first."""

from dataclasses import replace

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import Engine, func, select

from graphs.agent.context import GraspContext
from graphs.agent.graph import build_grasp_graph
from graphs.models.scripted_model import ScriptedChatModel
from graphs.peers.registry import run_method
from graphs.runtime.settings import Settings, parse_corpus_list
from graphs.runtime.wiring import CorpusNotAllowed, check_corpus_allowed
from store.engine import transaction
from store.ledger_models import LlmCall
from tests.fixtures.films import PAPER_VOTE, build_corpus, chain_rules, services


def test_the_setting_is_a_comma_list_and_unset_allows_all() -> None:
    assert Settings.from_env({}).allowed_corpora is None
    assert Settings.from_env({"GRASP_ALLOWED_CORPORA": " , "}).allowed_corpora is None
    allowed = Settings.from_env({"GRASP_ALLOWED_CORPORA": "films, musique ,films,"})
    assert allowed.allowed_corpora == ("films", "musique")
    assert parse_corpus_list("a,b") == ("a", "b")


def test_the_check_refuses_only_corpora_outside_the_list() -> None:
    check_corpus_allowed("anything", None)
    check_corpus_allowed("films", ("films", "musique"))
    with pytest.raises(CorpusNotAllowed) as refused:
        check_corpus_allowed("hr-records", ("films",))
    message = str(refused.value)
    assert message == (
        "corpus 'hr-records' is not open on this deployment (GRASP_ALLOWED_CORPORA); "
        "name a corpus you were given"
    )
    assert "\n" not in message and "films" not in message  # other tenants' names stay unsaid


def ledger_rows(engine: Engine, thread: str) -> int:
    with transaction(engine) as session:
        query = select(func.count()).select_from(LlmCall).where(LlmCall.run_id == thread)
        return int(session.execute(query).scalar_one())


async def test_grasp_refuses_another_corpus_before_any_call(
    engine: Engine, database_url: str
) -> None:
    build_corpus(engine)
    svc = services(engine, database_url, chain_rules(build_corpus(engine)))
    svc.settings = replace(svc.settings, allowed_corpora=("films",))
    model = svc.llm.model
    assert isinstance(model, ScriptedChatModel)
    graph = build_grasp_graph(svc, InMemorySaver())
    config = {"configurable": {"thread_id": "allowed-1"}}

    with pytest.raises(CorpusNotAllowed, match="corpus 'elsewhere' is not open"):
        await graph.ainvoke(
            {"question": "Where was the director of Blue Harbor born?"},
            config,  # type: ignore[arg-type]
            context=GraspContext(corpus="elsewhere"),
        )

    assert model.prompts == [] and ledger_rows(engine, "allowed-1") == 0
    # The allowed corpus still answers on the same services.
    state = await graph.ainvoke(
        {"question": "Where was the director of Blue Harbor born?"},
        {"configurable": {"thread_id": "allowed-2"}},
        context=GraspContext(corpus="films", **PAPER_VOTE),
    )
    assert state["final_answer"] == "Lisbon"


@pytest.mark.parametrize("method", ["dense", "bm25", "self-ask", "prism"])
async def test_peer_graphs_refuse_it_too(engine: Engine, database_url: str, method: str) -> None:
    svc = services(engine, database_url, [])  # no replies: any model call would fail the test
    svc.settings = replace(svc.settings, allowed_corpora=("films",))

    with pytest.raises(CorpusNotAllowed):
        await run_method(method, "Who?", "elsewhere", services=svc, thread_id=f"allowed-{method}")
    assert ledger_rows(engine, f"allowed-{method}") == 0


async def test_indexing_refuses_a_corpus_outside_the_list(
    engine: Engine, database_url: str
) -> None:
    from graphs.indexing.context import IndexContext
    from graphs.indexing.graph import build_index_graph
    from store.corpora import CorpusNotFound, corpus_id

    svc = services(engine, database_url, [])
    svc = replace(svc, settings=replace(svc.settings, allowed_corpora=("films",)))
    graph = build_index_graph(svc)
    with pytest.raises(CorpusNotAllowed):
        await graph.ainvoke(
            {"corpus": "hr-records", "passages": [{"title": "Pay", "text": "Salaries rose."}]},
            context=IndexContext(extractor="synthetic"),
        )
    with pytest.raises(CorpusNotFound):  # nothing was written: the corpus does not exist
        corpus_id(engine, "hr-records")
