"""MiniLM's texts as batches of similar token counts, for the encoders that pad for themselves.

Texts are tokenised first and batched by token count, so little of a batch is padding:
sentence-transformers sorts by characters, which left 29 % of the tokens of 1,000 MuSiQue
sentences as padding at batches of 16 (3.5 % by tokens). Rows come back in the order given.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nodes.embedding import Vectors

if TYPE_CHECKING:
    from tokenizers import Tokenizer

#: MiniLM's sentence-transformers limit: longer texts are truncated to this many tokens.
MAX_TOKENS = 256

#: Encodes one padded batch: (token ids, attention mask), both (texts, longest) int64 → rows.
BatchRunner = Callable[[np.ndarray, np.ndarray], Vectors]


def minilm_tokenizer(tokenizer_file: Path) -> Tokenizer:
    """MiniLM's tokenizer as the encoders read texts: truncated to `MAX_TOKENS`, unpadded."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.enable_truncation(MAX_TOKENS)
    # The shipped file pads every text to 128; `TokenBatches` pads each batch to its longest.
    tokenizer.no_padding()
    return tokenizer


class TokenBatches:
    """A tokenizer (not shareable across threads) that feeds a runner batches by token count."""

    def __init__(self, tokenizer_file: Path, dim: int) -> None:
        self._tokenizer = minilm_tokenizer(tokenizer_file)
        self._pad_id = self._tokenizer.token_to_id("[PAD]") or 0
        self.dim = dim

    def encode(self, texts: list[str], batch_size: int, run: BatchRunner) -> Vectors:
        """One row per text, in the order given, from `run` over batches of similar length."""
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        tokens = [encoding.ids for encoding in self._tokenizer.encode_batch(texts)]
        by_length = sorted(range(len(texts)), key=lambda i: len(tokens[i]))
        for start in range(0, len(texts), batch_size):
            picked = by_length[start : start + batch_size]
            rows[picked] = run(*self._padded([tokens[i] for i in picked]))
        return rows

    def _padded(self, batch: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        longest = max(len(ids) for ids in batch)
        ids = np.full((len(batch), longest), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), longest), dtype=np.int64)
        for row, text_ids in enumerate(batch):
            ids[row, : len(text_ids)] = text_ids
            mask[row, : len(text_ids)] = 1
        return ids, mask
