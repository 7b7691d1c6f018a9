"""MiniLM in bfloat16 (`@bf16`) makes the fp32 model's vectors to a cosine of 1e-4, its long calls
through bf16 PyTorch streams and its questions through the fp32 ONNX export."""

from __future__ import annotations

import numpy as np
import pytest

from graphs.models.minilm import SLICE, MiniLmEmbedder
from graphs.models.onnx_export import OnnxModelMissing, find_onnx_model, weights_dir
from graphs.models.onnx_minilm import OnnxMiniLm
from graphs.models.torch_minilm import Bf16MiniLm, TorchMiniLm

SENTENCES = [
    "The Journal of Mathematical Physics is published monthly by the American Institute of Physics.",
    "Lyon",
    "Qzxv Wyrmq Plyxt Zzqk, born 1871 in Thessaloniki, wrote under the name Aris Kalogeropoulos.",
    "Blue Harbor was directed by a film-maker born in Lyon.",
]


@pytest.fixture(scope="module")
def fp32_rows() -> np.ndarray:
    return TorchMiniLm().encode(SENTENCES, 64)


def test_bf16_rows_are_the_fp32_models_to_a_cosine_of_1e4(fp32_rows: np.ndarray) -> None:
    got = Bf16MiniLm(weights_dir() / "tokenizer.json").encode(SENTENCES, 2)
    assert got.shape == (len(SENTENCES), 384) and got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(got * fp32_rows, axis=1)
    assert cosines.min() >= 0.9999, cosines
    # Each row is its own sentence's, in the order given: far from the others' fp32 rows.
    others = got @ fp32_rows.T - np.diag(cosines)
    assert others.max() < 0.9


def test_padding_is_masked_out_of_the_mean(fp32_rows: np.ndarray) -> None:
    copy = Bf16MiniLm(weights_dir() / "tokenizer.json")
    batched = copy.encode(SENTENCES, len(SENTENCES))  # one batch padded to the longest
    alone = np.concatenate([copy.encode([text], 1) for text in SENTENCES])
    assert np.sum(batched * alone, axis=1).min() >= 0.9999


def test_long_calls_go_to_bf16_streams_and_questions_to_the_fp32_export(
    fp32_rows: np.ndarray,
) -> None:
    try:
        find_onnx_model("onnx")
    except OnnxModelMissing as exc:
        pytest.skip(f"MiniLM@onnx not exported (scripts/install.sh makes it): {exc}")
    embedder = MiniLmEmbedder(streams=2, variant="bf16")
    assert embedder.name == "local:all-MiniLM-L6-v2@bf16"
    assert isinstance(embedder._direct, OnnxMiniLm)
    texts = [SENTENCES[i % len(SENTENCES)] + f" ({i})" for i in range(SLICE + 40)]
    streamed = embedder.embed(texts)
    copies = [embedder._stream_copies.get() for _ in range(embedder.streams)]
    assert all(isinstance(copy, Bf16MiniLm) for copy in copies)
    for copy in copies:
        embedder._stream_copies.put(copy)
    # The question path (fp32) and the streams (bf16) agree row for row.
    alone = np.concatenate([embedder.embed([texts[i]]) for i in (0, 101, SLICE + 39)])
    assert np.sum(alone * streamed[[0, 101, SLICE + 39]], axis=1).min() >= 0.9999
    small = embedder.embed(SENTENCES)
    assert np.sum(small * fp32_rows, axis=1).min() >= 0.99999  # the export: fp32's vectors
