"""Process settings read once from the environment into a typed object (the only place env is read)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from graphs.models.embedders import GEMINI_EMBEDDER, offline_embedder
from graphs.models.endpoints import ProviderEndpoints, parse_schema_style
from graphs.models.minilm import MINILM_NAME
from nodes.llm.client import DEFAULT_CONCURRENCY

DEFAULT_GEMINI_CHAT = "gemini:gemini-3-flash-preview"
LOCAL_CHAT = "local"


def _default_model_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "grasp" / "models"


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "grasp"


def parse_corpus_list(text: str) -> tuple[str, ...] | None:
    """Corpus names from a comma-separated list; None when it names none (no restriction)."""
    names = tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    return names or None


@dataclass(frozen=True)
class Settings:
    """Where the data lives and which models answer; see README 'Configuration'."""

    database_url: str | None = None
    data_dir: Path = field(default_factory=_default_data_dir)
    chat_model: str = LOCAL_CHAT
    judge_model: str | None = None
    embedder: str = MINILM_NAME
    google_api_key: str | None = None
    llm_cache: bool = True
    llm_concurrency: int = DEFAULT_CONCURRENCY
    model_dir: Path = field(default_factory=_default_model_dir)
    #: Base URLs and keys of OpenAI-compatible and Gemini endpoints (docs/providers.md).
    endpoints: ProviderEndpoints = field(default_factory=ProviderEndpoints)
    #: The corpora a run may name (GRASP_ALLOWED_CORPORA, comma-separated); None: every corpus.
    allowed_corpora: tuple[str, ...] | None = None
    #: The server's users (docs/serving.md): a JSON file of bearer tokens (GRASP_AUTH_FILE), or
    #: the same JSON inline (GRASP_AUTH_USERS); GRASP_AUTH=off serves without tokens (local use).
    auth_file: Path | None = None
    auth_users: str | None = None
    auth_off: bool = False

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        """Read GRASP_* variables, DATABASE_URL, the provider keys and base URLs.

        Gemini is the default with a Google key; OPENAI_* and GOOGLE_GEMINI_BASE_URL point chat
        models and embedders at other endpoints (docs/providers.md).
        """
        env = dict(os.environ if env is None else env)
        key = env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY") or None
        chat = env.get("GRASP_CHAT_MODEL") or (DEFAULT_GEMINI_CHAT if key else LOCAL_CHAT)
        data_dir = Path(env["GRASP_DATA_DIR"]) if env.get("GRASP_DATA_DIR") else _default_data_dir()
        model_dir = (
            Path(env["GRASP_MODEL_DIR"]) if env.get("GRASP_MODEL_DIR") else _default_model_dir()
        )
        named = env.get("GRASP_EMBEDDER") or (GEMINI_EMBEDDER if key else None)
        return cls(
            database_url=env.get("DATABASE_URL") or None,
            data_dir=data_dir,
            chat_model=chat,
            judge_model=env.get("GRASP_JUDGE_MODEL") or None,
            embedder=named or offline_embedder(model_dir),
            google_api_key=key,
            llm_cache=env.get("GRASP_LLM_CACHE", "1").lower() not in {"0", "false", "no", "off"},
            llm_concurrency=int(env.get("GRASP_LLM_CONCURRENCY", DEFAULT_CONCURRENCY)),
            model_dir=model_dir,
            endpoints=ProviderEndpoints(
                openai_base_url=env.get("OPENAI_BASE_URL") or None,
                openai_api_key=env.get("OPENAI_API_KEY") or None,
                openai_schema=parse_schema_style(env.get("GRASP_OPENAI_SCHEMA") or "json_schema"),
                gemini_base_url=env.get("GOOGLE_GEMINI_BASE_URL") or None,
            ),
            allowed_corpora=parse_corpus_list(env.get("GRASP_ALLOWED_CORPORA", "")),
            auth_file=Path(env["GRASP_AUTH_FILE"]) if env.get("GRASP_AUTH_FILE") else None,
            auth_users=env.get("GRASP_AUTH_USERS") or None,
            auth_off=env.get("GRASP_AUTH", "").lower() == "off",
        )

    @property
    def pg_data_dir(self) -> Path:
        """The embedded PostgreSQL data directory."""
        return self.data_dir / "pgdata"
