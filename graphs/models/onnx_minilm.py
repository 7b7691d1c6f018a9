"""One copy of MiniLM on ONNX Runtime: a tokenizer and a session, used by one thread at a time.

The exported graph (graphs/models/onnx_export.py) pools and normalises itself, so encoding is
tokenise → run → rows, batched by token count (graphs/models/minilm_batches.py). The int8 file
quantises activations with one scale per batch, so its rows move slightly with their batch
companions (cosine > 0.99 between a text alone and in a batch); the fp32 file's do not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graphs.models.minilm_batches import TokenBatches
from nodes.embedding import Vectors

#: How long a team's idle thread spins before it sleeps, in microseconds: long enough to catch the
#: next operator of the same question, short enough not to hold a core a busy neighbour needs.
TEAM_SPIN_US = 5


class OnnxMiniLm:
    """A session with `threads` intra-op threads and its own tokenizer (not shareable).

    A team's threads spin `TEAM_SPIN_US` between operators, then sleep. ONNX Runtime's default
    long spin answered one question in 2.8 ms alone but 7.0 ms beside a busy process on one of
    the two cores (its waiting member burns the core the other needs); a team that never spins,
    4.1–4.5 ms there but 3.4 alone; one thread 4.9 alone. A 5 µs spin took the short spin's
    gain alone and none of the long spin's loss beside the busy process (docs/experiments.md,
    "The question copy spins 5 µs").
    """

    def __init__(self, model_file: Path, tokenizer_file: Path, threads: int = 1) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3  # the int8 file's shape-inference notices are expected
        if threads > 1:
            options.add_session_config_entry("session.intra_op.spin_duration_us", str(TEAM_SPIN_US))
        self._session = ort.InferenceSession(
            str(model_file), options, providers=["CPUExecutionProvider"]
        )
        dim = int(self._session.get_outputs()[0].shape[-1])
        self._batches = TokenBatches(tokenizer_file, dim)
        self.dim = dim

    def encode(self, texts: list[str], batch_size: int) -> Vectors:
        """One normalised row per text, in the order given."""
        return self._batches.encode(texts, batch_size, self._run)

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> Vectors:
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return np.asarray(self._session.run(None, feed)[0], dtype=np.float32)
