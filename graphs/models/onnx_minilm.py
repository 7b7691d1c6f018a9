"""One copy of MiniLM on ONNX Runtime: a tokenizer and a session, used by one thread at a time.

The exported graph (graphs/models/onnx_export.py) pools and normalises itself, so encoding is
tokenise → run → rows. Texts are tokenised first and batched by token count, so little of a batch
is padding: sentence-transformers sorts by characters, which left 29 % of the tokens of 1,000
MuSiQue sentences as padding at batches of 16 (3.5 % by tokens). Rows come back in the order
given. The int8 file quantises activations with one scale per batch, so its rows move slightly
with their batch companions (cosine > 0.99 between a text alone and in a batch); the fp32 file's
do not.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nodes.embedding import Vectors

if TYPE_CHECKING:
    from tokenizers import Tokenizer

#: MiniLM's sentence-transformers limit: longer texts are truncated to this many tokens.
MAX_TOKENS = 256


def minilm_tokenizer(tokenizer_file: Path) -> Tokenizer:
    """MiniLM's tokenizer as the encoder reads texts: truncated to `MAX_TOKENS`, unpadded."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.enable_truncation(MAX_TOKENS)
    # The shipped file pads every text to 128; batches are padded by `OnnxMiniLm`, to their longest.
    tokenizer.no_padding()
    return tokenizer


class OnnxMiniLm:
    """A session with `threads` intra-op threads and its own tokenizer (not shareable).

    A team of several threads does not spin while it waits: one question alone took 3.4 ms p50
    with two idle-sleeping threads, 2.8 ms spinning and 4.9 ms on one thread, but beside a busy
    process on one of the two cores the spinning team took 7.0 ms (its waiting member burns the
    core the other needs) and the sleeping one 4.1–4.5 ms (docs/scale.md, issue 35).
    """

    def __init__(self, model_file: Path, tokenizer_file: Path, threads: int = 1) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3  # the int8 file's shape-inference notices are expected
        if threads > 1:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(model_file), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = minilm_tokenizer(tokenizer_file)
        self._pad_id = self._tokenizer.token_to_id("[PAD]") or 0
        self.dim = int(self._session.get_outputs()[0].shape[-1])

    def encode(self, texts: list[str], batch_size: int) -> Vectors:
        """One normalised row per text, in the order given."""
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        tokens = [encoding.ids for encoding in self._tokenizer.encode_batch(texts)]
        by_length = sorted(range(len(texts)), key=lambda i: len(tokens[i]))
        for start in range(0, len(texts), batch_size):
            picked = by_length[start : start + batch_size]
            rows[picked] = self._run([tokens[i] for i in picked])
        return rows

    def _run(self, batch: list[list[int]]) -> Vectors:
        """Rows for token-id lists, padded to the longest of them."""
        longest = max(len(ids) for ids in batch)
        ids = np.full((len(batch), longest), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), longest), dtype=np.int64)
        for row, text_ids in enumerate(batch):
            ids[row, : len(text_ids)] = text_ids
            mask[row, : len(text_ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return np.asarray(self._session.run(None, feed)[0], dtype=np.float32)
