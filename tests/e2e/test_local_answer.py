"""The real local model answers ../shared/data/sample.json over its three-passage corpus."""

from collections.abc import Callable

import pytest
from sqlalchemy import Engine, func, select

from evals.loaders import load_questions
from graphs.api import answer
from graphs.indexing.corpus_files import read_corpus
from graphs.indexing.graph import IndexContext, build_index_graph
from graphs.models.embedders import make_embedder
from graphs.runtime.services import Services
from nodes.embedding import Embedder
from store.engine import transaction
from store.models import LlmCall
from tests.fixtures.data import SHARED_DATA

pytestmark = pytest.mark.e2e


async def test_local_model_answers_the_sample_question(
    engine: Engine, local_services: Callable[[Embedder, float], Services]
) -> None:
    services = local_services(make_embedder("local:all-MiniLM-L6-v2"), 0.2)
    passages = [
        {"title": p.title, "text": p.text} for p in read_corpus(SHARED_DATA / "sample_corpus.json")
    ]
    await build_index_graph(services).ainvoke(
        {"corpus": "sample", "passages": passages}, context=IndexContext(extractor="spacy")
    )
    (example,) = load_questions(SHARED_DATA / "sample.json")

    result = await answer(example.question, "sample", services=services, max_iterations=2)

    print(
        "plan:",
        result["plan"],
        "| answer:",
        result["final_answer"],
        "| tokens:",
        result["tokens"]["input_tokens"],
        result["tokens"]["output_tokens"],
    )
    assert result["sub_questions"], "the planner produced no sub-question"
    assert result["final_answer"].strip()
    tokens = result["tokens"]
    assert tokens["input_tokens"] > 0 and tokens["output_tokens"] > 0
    with transaction(engine) as session:
        calls = session.execute(select(func.count()).select_from(LlmCall)).scalar_one()
    assert calls == tokens["calls"]  # every call is in the ledger and in the state's tally
    assert set(tokens["by_node"]) >= {"plan", "rewrite", "evaluate", "synthesize"}
