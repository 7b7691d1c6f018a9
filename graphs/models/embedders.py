"""Embedders by name: local all-MiniLM-L6-v2 (offline default), gemini-embedding-001, hashing.

MiniLM takes a variant after `@`: `local:all-MiniLM-L6-v2@onnx` or `@onnx-int8` (ONNX Runtime,
graphs/models/minilm.py), `@bf16` (PyTorch in bfloat16); none, or `@torch`, is the PyTorch model.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from graphs.models.cores import cpu_flags, multiplies_bfloat16
from graphs.models.endpoints import UNUSED_KEY
from graphs.models.minilm import MINILM_NAME, MINILM_VARIANTS, MiniLmEmbedder
from graphs.models.onnx_export import OnnxModelMissing, find_onnx_model
from nodes.embedding import Embedder, HashingEmbedder, Vectors, normalise_rows
from store.models import EMBEDDING_DIM

#: The default where a Gemini key is set (the offline default is MiniLM, graphs/models/minilm.py).
GEMINI_EMBEDDER = "gemini:gemini-embedding-001"


def offline_embedder(model_dir: Path | None = None) -> str:
    """The default embedder without a Gemini key: MiniLM's export, or bf16 where AMX multiplies.

    The fp32 ONNX export makes the PyTorch model's vectors (store/vector_spaces.py) at 1.7-2.7× its
    texts per CPU-second and a third of its query latency. On CPUs that multiply bfloat16 in
    hardware (AMX), `@bf16` encodes 2.2× the export's texts, its questions going to the export
    (docs/experiments.md, issue 35). All three share one vector space, so a corpus indexed on one
    machine answers on another. Without the export (scripts/install.sh writes it) the PyTorch
    model serves.
    """
    try:
        find_onnx_model("onnx", model_dir)
    except OnnxModelMissing:
        return MINILM_NAME
    if multiplies_bfloat16(cpu_flags()):
        return f"{MINILM_NAME}@bf16"
    return f"{MINILM_NAME}@onnx"


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


def minilm_variant(spec: str) -> str | None:
    """The MiniLM variant `spec` names (`torch` when it names none), or None for another model."""
    model, _, variant = spec.partition("@")
    if model not in {"local", MINILM_NAME, MINILM_NAME.removeprefix("local:")}:
        return None
    if variant == "":
        return "torch"
    if variant not in MINILM_VARIANTS:
        raise EmbedderConfigError(
            f"unknown MiniLM variant {variant!r} in {spec!r}: use "
            + ", ".join(f"{MINILM_NAME}@{v}" for v in MINILM_VARIANTS)
        )
    return variant


def make_embedder(
    spec: str,
    api_key: str | None = None,
    *,
    gemini_base_url: str | None = None,
    model_dir: Path | None = None,
) -> Embedder:
    """Build the embedder named by `spec` (see README 'Configuration').

    `gemini_base_url` sends Gemini requests to a proxy or self-hosted endpoint (docs/providers.md);
    `model_dir` (GRASP_MODEL_DIR) is searched for MiniLM's ONNX files after the weights' folder.
    """
    variant = minilm_variant(spec)
    if variant is not None:
        try:
            return _cached_minilm(variant, model_dir)
        except OnnxModelMissing as exc:
            raise EmbedderConfigError(str(exc)) from None
    if spec.startswith("gemini:"):
        if not api_key and not gemini_base_url:
            raise EmbedderConfigError(f"{spec} needs GOOGLE_API_KEY (or GOOGLE_GEMINI_BASE_URL)")
        return GeminiEmbedder(spec.removeprefix("gemini:"), api_key, gemini_base_url)
    if spec == "hash" or spec.startswith("hash:"):
        return HashingEmbedder(EMBEDDING_DIM)
    raise EmbedderConfigError(
        f"unknown embedder {spec!r}: use {MINILM_NAME}[@onnx|@onnx-int8], {GEMINI_EMBEDDER} or hash"
    )


@functools.cache
def _cached_minilm(variant: str, model_dir: Path | None) -> MiniLmEmbedder:
    return MiniLmEmbedder(variant=variant, model_dir=model_dir)
