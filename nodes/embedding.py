"""The embedder interface the nodes depend on, and a deterministic hashing embedder for tests."""

from __future__ import annotations

import hashlib
import re
from typing import Protocol

import numpy as np
import numpy.typing as npt

from store.models import EMBEDDING_DIM

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit-length vectors of a fixed width."""

    name: str
    dim: int
    #: True when embedding keeps this machine's cores busy (a local model): an index build beside
    #: it then takes no parallel workers of its own.
    cpu_bound: bool

    def embed(self, texts: list[str]) -> Vectors:
        """Return one L2-normalised row per text."""
        ...


def normalise_rows(matrix: npt.NDArray[np.floating]) -> Vectors:
    """Scale every row to unit length (zero rows stay zero)."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)


class HashingEmbedder:
    """Bag of hashed lower-case word tokens: deterministic, instant, similar words ⇒ similar vectors.

    Used by tests and the synthetic benchmark's plumbing checks; never the default for real use.
    """

    def __init__(self, dim: int = EMBEDDING_DIM) -> None:
        self.name = f"hash-{dim}"
        self.dim = dim
        self.cpu_bound = False

    def embed(self, texts: list[str]) -> Vectors:
        """One unit row per text, from its hashed word counts."""
        matrix = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                matrix[row, int.from_bytes(digest, "little") % self.dim] += 1.0
        return normalise_rows(matrix)
