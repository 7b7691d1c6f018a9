"""Keep the KV state of recent prompts, so a call resumes from the longest prefix it shares.

llama.cpp already reuses the prefix a call shares with the call just before it. A question's
calls alternate between nodes (plan, evaluate, synthesize), each with its own instructions, so
every node change re-reads its instructions at ≈ 50 prompt tokens/s on two cores. Kept states
let the first call of each node resume after its instructions (and the planner after the last
question's). A resumed prompt is computed in other batch shapes than a fresh read, so replies
can differ in the last digits (3 of 20 MuSiQue answers did, docs/experiments.md). The token
ledger still counts the whole prompt, since that is what a metered provider bills.
"""

from __future__ import annotations

import ctypes
from typing import Any

#: Room for the kept states: ≈ 28 KB of KV a token for Qwen2.5-1.5B, so about twenty calls of
#: 500 tokens. Oldest states leave first.
PREFIX_CACHE_BYTES = 384 << 20


class PrefixStats:
    """How many calls resumed from a kept state."""

    def __init__(self) -> None:
        self.restored = 0


def keep_prefixes(llama: Any, capacity_bytes: int = PREFIX_CACHE_BYTES) -> PrefixStats:
    """Give `llama` (a `llama_cpp.Llama`) a bounded cache of prompt states; returns its counters.

    llama-cpp-python's own `save_state` copies the whole logits buffer (n_batch × vocabulary:
    311 MB for Qwen, 0.8 s a call) into every kept state, and its `load_state` writes it back.
    Nothing reads those rows: a restored prompt always re-evaluates at least its last token,
    which writes fresh logits. So the states kept here hold one row of logits, restoring leaves
    the buffer alone, and a save or a restore takes ≈ 10 ms.
    """
    import llama_cpp
    from llama_cpp.llama import LlamaState
    from llama_cpp.llama_cache import LlamaRAMCache

    stats = PrefixStats()

    def save_state() -> LlamaState:
        ctx = llama._ctx.ctx
        size = llama_cpp.llama_state_get_size(ctx)
        buffer = (ctypes.c_uint8 * int(size))()
        written = int(llama_cpp.llama_state_get_data(ctx, buffer, size))
        if written > int(size):
            raise RuntimeError("llama.cpp wrote more state than it sized")
        return LlamaState(
            scores=llama._scores[-1:, :].copy(),
            input_ids=llama.input_ids.copy(),
            n_tokens=llama.n_tokens,
            llama_state=ctypes.string_at(buffer, written),
            llama_state_size=written,
            seed=llama._seed,
        )

    def load_state(state: LlamaState) -> None:
        size = int(state.llama_state_size)
        buffer = (ctypes.c_uint8 * size).from_buffer_copy(state.llama_state)
        if llama_cpp.llama_state_set_data(llama._ctx.ctx, buffer, size) != size:
            raise RuntimeError("llama.cpp did not take the kept state")
        llama.input_ids = state.input_ids.copy()
        llama.n_tokens = state.n_tokens
        # The logits buffer is stale: an exact prompt hit must re-evaluate before sampling.
        llama._requires_eval = True
        # The seed is left alone: each call sets its own, or (seed None) draws the next one from
        # the current, which restoring an older state must not rewind.
        stats.restored += 1

    llama.save_state = save_state
    llama.load_state = load_state
    llama.set_cache(LlamaRAMCache(capacity_bytes=capacity_bytes))
    return stats
