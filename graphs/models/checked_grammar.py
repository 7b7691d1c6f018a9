"""Grammar-held replies at nearly the speed of free ones: draw first, ask the grammar after.

llama-cpp-python puts the grammar first in its sampler chain, so every output token runs the
grammar over the whole vocabulary (151,936 tokens for Qwen2.5): ≈ 30 ms a token on two cores,
half again the ≈ 57 ms the decode itself takes (docs/experiments.md). llama.cpp's own sampler
(`common/sampling.cpp`) draws from the free chain first and asks the grammar about that one
token; only when the grammar refuses it does it mask the vocabulary and draw again. Here the
same order is put under llama-cpp-python. A greedy reply is the same token for token (the best
token the grammar allows is the best token, when allowed); a sampled one differs only in how a
refused draw is redrawn.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

#: One `llama_token_data` (id, logit, p) as numpy lays it out, to fill the vocabulary in one copy.
_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)], align=True)


class GrammarChecks:
    """How many drawn tokens the grammar let through, and how many it sent back to be redrawn."""

    def __init__(self) -> None:
        self.passed = 0
        self.redrawn = 0


class CheckedGrammarSampler:
    """The free chain draws; the grammar checks the one token; a refused draw is redrawn masked.

    It stands where llama-cpp-python keeps its `LlamaSampler` (`Llama._sampler`), which only
    ever calls `sample(ctx, idx)` on it. Like `llama_sampler_sample`, a draw also accepts the
    token, into the free chain (penalties, seeded RNG) and into the grammar (its parse state).
    """

    def __init__(self, llama: Any, free: Any, grammar: Any, checks: GrammarChecks) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self._free = free  # a LlamaSampler: it frees its own chain
        self._grammar = llama_cpp.llama_sampler_init_grammar(
            llama._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self._grammar:
            raise ValueError("llama.cpp could not parse the reply grammar")
        self._checks = checks
        self._n_vocab = int(llama._n_vocab)
        self._ids = np.arange(self._n_vocab, dtype=np.int32)
        self._cells = np.zeros(self._n_vocab, dtype=_TOKEN_DATA)
        self._all = llama_cpp.llama_token_data_array()
        self._token = llama_cpp.llama_token_data()
        self._one = llama_cpp.llama_token_data_array()

    def __del__(self) -> None:
        grammar, self._grammar = getattr(self, "_grammar", None), None
        if grammar:
            self._lib.llama_sampler_free(grammar)

    def _vocabulary(self, ctx: Any, idx: int) -> Any:
        """Every token with its logit at `idx`, unsorted, as a fresh candidate array."""
        lib = self._lib
        logits = lib.llama_get_logits_ith(ctx.ctx, idx)
        self._cells["id"] = self._ids
        self._cells["logit"] = np.ctypeslib.as_array(logits, shape=(self._n_vocab,))
        self._cells["p"] = 0.0
        # Samplers may move `data` and shrink `size`, so both are set again for every draw.
        self._all.data = ctypes.cast(self._cells.ctypes.data, lib.llama_token_data_p)
        self._all.size = self._n_vocab
        self._all.selected = -1
        self._all.sorted = False
        return self._all

    def _allowed(self, token: int) -> bool:
        lib: Any = self._lib  # llama_cpp's ctypes stubs type these fields as ctypes values
        one: Any = self._one
        self._token.id, self._token.logit, self._token.p = token, 1.0, 0.0  # type: ignore[assignment]
        one.data = ctypes.pointer(self._token)
        one.size, one.selected, one.sorted = 1, -1, False
        lib.llama_sampler_apply(self._grammar, ctypes.byref(one))
        return not math.isinf(one.data[0].logit)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        """Draw the token at logits row `idx`, held to the grammar, and accept it."""
        lib = self._lib
        candidates = self._vocabulary(ctx, idx)
        lib.llama_sampler_apply(self._free.sampler, ctypes.byref(candidates))
        token = int(candidates.data[candidates.selected].id)
        if self._allowed(token):
            self._checks.passed += 1
        else:
            self._checks.redrawn += 1
            candidates = self._vocabulary(ctx, idx)
            lib.llama_sampler_apply(self._grammar, ctypes.byref(candidates))
            lib.llama_sampler_apply(self._free.sampler, ctypes.byref(candidates))
            token = int(candidates.data[candidates.selected].id)
        lib.llama_sampler_accept(self._grammar, token)
        lib.llama_sampler_accept(self._free.sampler, token)
        return token


def check_grammar_after_drawing(llama: Any) -> GrammarChecks:
    """Make `llama` (a `llama_cpp.Llama`) draw grammar-held tokens free first; returns its counts."""
    build_chain = llama._init_sampler
    checks = GrammarChecks()

    def init_sampler(*args: Any, grammar: Any = None, **kwargs: Any) -> Any:
        free = build_chain(*args, grammar=None, **kwargs)
        if grammar is None:
            return free
        return CheckedGrammarSampler(llama, free, grammar, checks)

    llama._init_sampler = init_sampler
    return checks
