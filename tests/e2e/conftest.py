"""Services wired to the real local llama.cpp model (cache off, so every call really runs)."""

from collections.abc import Callable

import pytest
from sqlalchemy import Engine

from graphs.models.providers import lazy_llm_client
from graphs.runtime.services import Services
from graphs.runtime.settings import Settings
from nodes.embedding import Embedder


@pytest.fixture
def local_services(engine: Engine, database_url: str) -> Callable[[Embedder, float], Services]:
    def build(embedder: Embedder, temperature: float) -> Services:
        settings = Settings()
        client = lazy_llm_client(
            "local",
            temperature=temperature,
            api_key=None,
            model_dir=settings.model_dir,
            engine=engine,
            use_cache=False,
            concurrency=1,
        )
        return Services(
            engine=engine,
            database_url=database_url,
            settings=settings,
            llm=client,
            extractor_llm=client,
            embedder=embedder,
        )

    return build
