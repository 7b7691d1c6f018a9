"""llama.cpp models loaded once per process, shared under a lock, and closed before exit."""

from __future__ import annotations

import atexit
import threading
from pathlib import Path
from typing import Any

from graphs.models.checked_grammar import GrammarChecks, check_grammar_after_drawing
from graphs.models.cores import usable_cores
from graphs.models.gguf_assembly import ModelPartsMissingError
from graphs.models.prefix_cache import PrefixStats, keep_prefixes

# The native build's AMX path crashes at the first inference on these CPUs; pip's wheel cache
# ignores CMAKE_ARGS, hence --no-cache-dir.
LLAMA_CPP_PIP_COMMAND = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON '
    '-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" '
    "pip install --no-cache-dir llama-cpp-python==0.3.36"
)


class SharedLlama:
    """One loaded llama.cpp model with the lock that serialises every call into it.

    It keeps recent prompt states (`prefix_cache`) and draws schema-held replies free first
    (`checked_grammar`).
    """

    def __init__(self, llama: Any) -> None:
        self.llama = llama
        self.lock = threading.Lock()
        self.prefixes: PrefixStats = keep_prefixes(llama)
        self.grammar_checks: GrammarChecks = check_grammar_after_drawing(llama)


# One model per (file, context size) per process: a second copy would double memory and split cores.
_LOADED: dict[tuple[str, int], SharedLlama] = {}
_LOADED_LOCK = threading.Lock()

#: How long exit waits for a model that is still decoding before leaving it unclosed.
_CLOSE_WAIT_S = 5.0


def load_shared(*, model_path: str, n_ctx: int, n_threads: int | None, seed: int) -> SharedLlama:
    """The process's copy of the GGUF at `model_path` with this context size, loaded on first use."""
    key = (str(Path(model_path).resolve()), n_ctx)
    with _LOADED_LOCK:
        shared = _LOADED.get(key)
        if shared is None:
            # Imported here so that modules importing this one do not need the compiled runtime.
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise ModelPartsMissingError(
                    f"llama-cpp-python is not installed; build it with: {LLAMA_CPP_PIP_COMMAND}"
                ) from exc

            threads = n_threads or usable_cores()
            llama = Llama(
                model_path=key[0],
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                seed=seed,
                verbose=False,
            )
            if not _LOADED:
                atexit.register(close_loaded)
            shared = _LOADED[key] = SharedLlama(llama)
        return shared


def close_loaded() -> None:
    """Free every loaded model now; registered to run at interpreter exit.

    Left to `Llama.__del__`, the frees run while the interpreter tears down llama_cpp's module
    globals, and each prints `Exception ignored in: <function Llama.__del__> … TypeError:
    'NoneType' object is not callable` (whenever something long-lived, such as a pool's thread,
    keeps this module alive into that teardown). atexit runs before it, and a closed model's
    `__del__` has nothing left to free. A model still busy in another thread (its lock held past
    the wait) is left alone: freeing it mid-decode would crash.
    """
    with _LOADED_LOCK:
        loaded = list(_LOADED.values())
        _LOADED.clear()
    for shared in loaded:
        if shared.lock.acquire(timeout=_CLOSE_WAIT_S):
            try:
                shared.llama.close()
            finally:
                shared.lock.release()
