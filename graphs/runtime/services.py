"""The run's dependencies (database engine, LLM clients, embedder) built from Settings, once per process."""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field

from sqlalchemy import Engine

from graphs.models.embedders import make_embedder
from graphs.models.providers import lazy_llm_client
from graphs.models.roles import (
    AGENT_MAX_TOKENS,
    EXTRACTOR_TEMPERATURE,
    GENERATOR_TEMPERATURE,
    JUDGE_TEMPERATURE,
    LOCAL_MAX_TOKENS,
)
from graphs.runtime.settings import Settings
from nodes.embedding import Embedder
from nodes.llm.client import LlmClient
from store.embedded import start_embedded_server
from store.engine import check_database, libpq_url, make_engine, migrate


@dataclass(kw_only=True)
class Services:
    """Everything a node needs from the outside world; tests build one by hand with fakes."""

    engine: Engine
    database_url: str
    settings: Settings
    llm: LlmClient
    extractor_llm: LlmClient
    embedder: Embedder
    _judge: LlmClient | None = field(default=None, repr=False)

    def judge(self) -> LlmClient:
        """The judge model (GRASP_JUDGE_MODEL, else the chat model), built on first use."""
        if self._judge is None:
            self._judge = _client(
                self.settings,
                self.engine,
                self.settings.judge_model or self.settings.chat_model,
                temperature=JUDGE_TEMPERATURE,
                max_tokens=AGENT_MAX_TOKENS,
            )
        return self._judge


def resolve_database_url(settings: Settings) -> str:
    """DATABASE_URL if set, else the embedded server in the data directory (started if needed)."""
    if settings.database_url:
        return libpq_url(settings.database_url)
    return start_embedded_server(settings.pg_data_dir)


def open_engine(settings: Settings) -> tuple[Engine, str]:
    """Connect, check pgvector and migrate to head; errors say what to fix."""
    url = resolve_database_url(settings)
    engine = make_engine(url)
    check_database(engine)
    migrate(url)
    return engine, url


def build_services(settings: Settings) -> Services:
    """Wire the database and the models named by `settings`."""
    engine, url = open_engine(settings)
    spec = settings.chat_model
    return Services(
        engine=engine,
        database_url=url,
        settings=settings,
        llm=_client(
            settings, engine, spec, temperature=GENERATOR_TEMPERATURE, max_tokens=AGENT_MAX_TOKENS
        ),
        extractor_llm=_client(
            settings, engine, spec, temperature=EXTRACTOR_TEMPERATURE, max_tokens=LOCAL_MAX_TOKENS
        ),
        embedder=make_embedder(
            settings.embedder,
            settings.google_api_key,
            gemini_base_url=settings.endpoints.gemini_base_url,
            model_dir=settings.model_dir,
        ),
    )


def _client(
    settings: Settings, engine: Engine, spec: str, *, temperature: float, max_tokens: int
) -> LlmClient:
    return lazy_llm_client(
        spec,
        temperature=temperature,
        max_tokens=max_tokens,
        api_key=settings.google_api_key,
        model_dir=settings.model_dir,
        engine=engine,
        use_cache=settings.llm_cache,
        concurrency=settings.llm_concurrency,
        endpoints=settings.endpoints,
    )


_lock = threading.Lock()


@functools.cache
def _cached(settings: Settings) -> Services:
    return build_services(settings)


def services_for(settings: Settings) -> Services:
    """One Services per distinct Settings in this process (the dev server calls this per run)."""
    with _lock:
        return _cached(settings)
