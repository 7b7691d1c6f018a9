"""What nodes need from the outside world, as a protocol (graphs/runtime/services.py provides it)."""

from __future__ import annotations

from typing import Protocol

from sqlalchemy import Engine

from nodes.embedding import Embedder
from nodes.llm.client import LlmClient


class NodeServices(Protocol):
    """Database engine, LLM clients and embedder of one run."""

    engine: Engine
    llm: LlmClient
    extractor_llm: LlmClient
    embedder: Embedder
