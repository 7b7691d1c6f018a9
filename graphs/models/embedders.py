"""Embedders by name: local all-MiniLM-L6-v2 (offline default), gemini-embedding-001, hashing."""

from __future__ import annotations

import functools

import numpy as np

from graphs.models.endpoints import UNUSED_KEY
from graphs.models.minilm import MINILM_NAME, MiniLmEmbedder
from nodes.embedding import Embedder, HashingEmbedder, Vectors, normalise_rows
from store.models import EMBEDDING_DIM

#: The default where a Gemini key is set (the offline default is MiniLM, graphs/models/minilm.py).
GEMINI_EMBEDDER = "gemini:gemini-embedding-001"


class EmbedderConfigError(ValueError):
    """An embedder name that cannot be served."""


class GeminiEmbedder:
    """gemini-embedding-001 asked for the store's width through its Matryoshka output size."""

    def __init__(self, model: str, api_key: str | None, base_url: str | None = None) -> None:
        from langchain_google_genai import GoogleGenerativeAIEmbeddings

        # Named by model only, not endpoint: a proxy serves the same vector space, so a corpus
        # indexed through one stays usable directly (and the reverse).
        self.name = f"gemini:{model}"
        self.dim = EMBEDDING_DIM
        self.cpu_bound = False  # the work is the API's
        self._client = GoogleGenerativeAIEmbeddings(
            model=f"models/{model}" if "/" not in model else model,
            google_api_key=api_key or UNUSED_KEY,  # type: ignore[call-arg]  # alias of api_key
            base_url=base_url,
            output_dimensionality=EMBEDDING_DIM,
        )

    def embed(self, texts: list[str]) -> Vectors:
        """One unit row per text (the API's truncated vectors are normalised again)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise_rows(np.asarray(self._client.embed_documents(texts), dtype=np.float32))


def make_embedder(
    spec: str, api_key: str | None = None, *, gemini_base_url: str | None = None
) -> Embedder:
    """Build the embedder named by `spec` (see README 'Configuration').

    `gemini_base_url` sends Gemini requests to a proxy or self-hosted endpoint (docs/providers.md).
    """
    if spec in {"local", MINILM_NAME, MINILM_NAME.removeprefix("local:")}:
        return _cached_minilm()
    if spec.startswith("gemini:"):
        if not api_key and not gemini_base_url:
            raise EmbedderConfigError(f"{spec} needs GOOGLE_API_KEY (or GOOGLE_GEMINI_BASE_URL)")
        return GeminiEmbedder(spec.removeprefix("gemini:"), api_key, gemini_base_url)
    if spec == "hash" or spec.startswith("hash:"):
        return HashingEmbedder(EMBEDDING_DIM)
    raise EmbedderConfigError(
        f"unknown embedder {spec!r}: use {MINILM_NAME}, {GEMINI_EMBEDDER} or hash"
    )


@functools.cache
def _cached_minilm() -> MiniLmEmbedder:
    return MiniLmEmbedder()
