"""Which embedder names make the same vectors, so a corpus indexed by one answers the other.

A corpus records the embedder that made its vectors and refuses queries embedded by another. One
pair is the same function of the text: MiniLM's fp32 ONNX export (`@onnx`) and its PyTorch
original. Measured (docs/experiments.md, issue 35): every MuSiQue passage's vectors agree to a
cosine ≥ 0.9999996, and recall@2/5/10 was identical in all 18 cells of grasp and dense, single and
agentic, on MuSiQue and HotpotQA. The int8 variant is not: it moved recall by up to 0.026.
"""

from __future__ import annotations

#: An embedder name → the name of the vectors it makes, where they are another's.
_SAME_VECTORS_AS = {"local:all-MiniLM-L6-v2@onnx": "local:all-MiniLM-L6-v2"}


def vector_space(embedder: str) -> str:
    """The name of the vectors `embedder` makes (its own name unless another makes the same)."""
    return _SAME_VECTORS_AS.get(embedder, embedder)


def vectors_match(recorded: str | None, embedder: str) -> bool:
    """Whether a corpus recorded with `recorded` (None: not yet) can hold `embedder`'s vectors."""
    return recorded is None or vector_space(recorded) == vector_space(embedder)
