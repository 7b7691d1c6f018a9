"""Which embedder names make the same vectors, so a corpus indexed by one answers the others.

A corpus records the embedder that made its vectors and refuses queries embedded by another.
MiniLM's PyTorch original, its fp32 ONNX export (`@onnx`) and its bfloat16 variant (`@bf16`,
whose questions go through the export) are one function of the text for retrieval's purposes
(docs/experiments.md, issue 35). The export's vectors agree with torch's to a cosine ≥ 0.9999996
on every MuSiQue passage, and recall@2/5/10 was identical in all 18 cells of grasp and dense,
single and agentic, on MuSiQue and HotpotQA; bf16's agree to ≥ 0.99997 on 1,000 MuSiQue
sentences, and of the same 18 cells 17 were identical and one moved by 0.003. The int8 variant is
not the same: it moved recall by up to 0.026.
"""

from __future__ import annotations

#: An embedder name → the name of the vectors it makes, where they are another's.
_SAME_VECTORS_AS = {
    "local:all-MiniLM-L6-v2@onnx": "local:all-MiniLM-L6-v2",
    "local:all-MiniLM-L6-v2@bf16": "local:all-MiniLM-L6-v2",
}


def vector_space(embedder: str) -> str:
    """The name of the vectors `embedder` makes (its own name unless another makes the same)."""
    return _SAME_VECTORS_AS.get(embedder, embedder)


def vectors_match(recorded: str | None, embedder: str) -> bool:
    """Whether a corpus recorded with `recorded` (None: not yet) can hold `embedder`'s vectors."""
    return recorded is None or vector_space(recorded) == vector_space(embedder)
