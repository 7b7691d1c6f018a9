"""The real local model (Qwen2.5-Coder-1.5B, llama.cpp) extracts three short passages end to end."""

from collections.abc import Callable

import pytest
from sqlalchemy import Engine, select

from graphs.indexing.context import IndexContext
from graphs.indexing.graph import build_index_graph
from graphs.runtime.services import Services
from nodes.embedding import Embedder, HashingEmbedder
from store.engine import transaction
from store.models import Entity, Proposition

pytestmark = pytest.mark.e2e

PASSAGES = [
    {
        "title": "Marie Curie",
        "text": "Marie Curie was a physicist born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903.",
    },
    {"title": "Warsaw", "text": "Warsaw is the capital of Poland. It lies on the Vistula river."},
    {"title": "Vistula", "text": "The Vistula is the longest river in Poland."},
]


async def test_local_model_indexes_three_passages(
    engine: Engine, local_services: Callable[[Embedder, float], Services]
) -> None:
    services = local_services(HashingEmbedder(), 0.1)
    state = await build_index_graph(services).ainvoke(
        {"corpus": "e2e", "passages": PASSAGES}, context=IndexContext(extractor="llm", batch_size=3)
    )
    summary = state["summary"]
    assert summary["passages_done"] + summary["passages_failed"] == 3
    assert summary["passages_done"] >= 2, summary
    assert summary["input_tokens"] > 0 and summary["output_tokens"] > 0
    with transaction(engine) as session:
        propositions = session.execute(select(Proposition.text)).scalars().all()
        entities = {e.lower() for e in session.execute(select(Entity.canonical_name)).scalars()}
    assert len(propositions) >= 4
    assert "warsaw" in entities
