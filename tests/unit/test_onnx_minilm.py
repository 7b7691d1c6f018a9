"""MiniLM on ONNX Runtime gives torch's vectors (fp32) or close to them (int8), row for row, through
the product's streams; a spec names its variant, and a missing export is one clear line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphs.models import onnx_export
from graphs.models.embedders import EmbedderConfigError, make_embedder, minilm_variant
from graphs.models.minilm import MINILM_NAME, SLICE, MiniLmEmbedder, minilm_name
from graphs.models.onnx_export import ONNX_FILES, OnnxModelMissing, find_onnx_model
from graphs.models.onnx_minilm import OnnxMiniLm
from nodes.embedding import Vectors

SENTENCES = [
    "The Journal of Mathematical Physics is published monthly by the American Institute of Physics.",
    "Jan Philip Solovej from the University of Copenhagen is its current editor.",
    "Who was the first president of the association that published the journal?",
    "Blue Harbor was directed by a film-maker born in Lyon.",
    "Lyon",
    "The river Rhône flows through Lyon before it reaches the Mediterranean Sea at Arles, "
    "a town whose Roman amphitheatre still holds bullfights and concerts every summer.",
]


def _exported(variant: str) -> None:
    try:
        find_onnx_model(variant)
    except OnnxModelMissing as exc:
        pytest.skip(f"MiniLM@{variant} not exported (scripts/install.sh makes it): {exc}")


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    return MiniLmEmbedder(streams=1).embed(SENTENCES)


@pytest.mark.parametrize(("variant", "floor"), [("onnx", 0.9999), ("onnx-int8", 0.99)])
def test_onnx_vectors_are_torchs_within_the_variants_floor(
    variant: str, floor: float, torch_vectors: np.ndarray
) -> None:
    _exported(variant)
    embedder = MiniLmEmbedder(streams=1, variant=variant)
    got = embedder.embed(SENTENCES)
    assert got.shape == (len(SENTENCES), 384)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(got * torch_vectors, axis=1)
    assert cosines.min() >= floor, cosines
    # Each row is its own sentence's: far from its neighbour's torch vector.
    assert float(got[0] @ torch_vectors[1]) < 0.9


def test_onnx_streams_give_one_copys_vectors_in_order() -> None:
    _exported("onnx")
    texts = [
        f"Person {i} was born in town {i % 37} in {1800 + i % 211}." for i in range(SLICE + 40)
    ]
    single = MiniLmEmbedder(streams=1, variant="onnx").embed(texts)
    streamed = MiniLmEmbedder(streams=2, variant="onnx").embed(texts)
    np.testing.assert_allclose(streamed, single, atol=1e-5)
    # Batches are sorted by length inside a copy; rows must still follow the texts' order.
    short = MiniLmEmbedder(streams=1, variant="onnx").embed([texts[5], "Lyon", texts[7]])
    np.testing.assert_allclose(short[[0, 2]], single[[5, 7]], atol=1e-5)


def test_int8_rows_stay_close_whatever_batch_they_share() -> None:
    # Activations are quantised with one scale per batch, so an int8 row moves a little with its
    # batch companions: a text alone and inside a streamed batch must still agree.
    _exported("onnx-int8")
    texts = [
        f"Person {i} was born in town {i % 37} in {1800 + i % 211}." for i in range(SLICE + 40)
    ]
    # Batches of 16 near-identical texts move a row most: as low as 0.988 here, 0.993 on average.
    embedder = MiniLmEmbedder(streams=2, variant="onnx-int8")
    batched = embedder.embed(texts)
    picked = list(range(0, len(texts), 7))
    alone = np.concatenate([embedder.embed([texts[i]]) for i in picked])
    cosines = np.sum(alone * batched[picked], axis=1)
    assert cosines.min() > 0.985 and cosines.mean() > 0.99, cosines


@pytest.mark.parametrize(
    ("spec", "variant"),
    [
        ("local", "torch"),
        (MINILM_NAME, "torch"),
        ("all-MiniLM-L6-v2", "torch"),
        ("local:all-MiniLM-L6-v2@torch", "torch"),
        ("local:all-MiniLM-L6-v2@onnx", "onnx"),
        ("all-MiniLM-L6-v2@onnx-int8", "onnx-int8"),
        ("local@bf16", "bf16"),
        ("local@onnx-int8", "onnx-int8"),
        ("hash", None),
        ("gemini:gemini-embedding-001", None),
    ],
)
def test_a_spec_names_its_variant(spec: str, variant: str | None) -> None:
    assert minilm_variant(spec) == variant


def test_names_record_the_variant_and_keep_torchs_old_name() -> None:
    assert minilm_name("torch") == "local:all-MiniLM-L6-v2"  # what existing corpora hold
    assert minilm_name("onnx") == "local:all-MiniLM-L6-v2@onnx"
    assert minilm_name("onnx-int8") == "local:all-MiniLM-L6-v2@onnx-int8"
    assert minilm_name("bf16") == "local:all-MiniLM-L6-v2@bf16"


def test_an_unknown_variant_is_one_clear_line() -> None:
    with pytest.raises(EmbedderConfigError) as refused:
        make_embedder("local:all-MiniLM-L6-v2@onnx-int4")
    assert str(refused.value) == (
        "unknown MiniLM variant 'onnx-int4' in 'local:all-MiniLM-L6-v2@onnx-int4': use "
        "local:all-MiniLM-L6-v2@torch, local:all-MiniLM-L6-v2@bf16, "
        "local:all-MiniLM-L6-v2@onnx, local:all-MiniLM-L6-v2@onnx-int8"
    )


def test_the_model_dir_is_searched_after_the_weights_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A weights folder without exports: only GRASP_MODEL_DIR can serve the variant.
    monkeypatch.setattr(onnx_export, "weights_dir", lambda: tmp_path / "weights")
    model_dir = tmp_path / "models"
    with pytest.raises(OnnxModelMissing, match="python -m graphs.models.onnx_export"):
        find_onnx_model("onnx-int8", model_dir)
    exported = model_dir / onnx_export.MODEL_DIR_FOLDER / ONNX_FILES["onnx-int8"]
    exported.parent.mkdir(parents=True)
    exported.write_bytes(b"")
    assert find_onnx_model("onnx-int8", model_dir) == exported
    with pytest.raises(EmbedderConfigError, match="no model.onnx for MiniLM@onnx"):
        make_embedder("local:all-MiniLM-L6-v2@onnx", model_dir=model_dir)


def test_the_int8_file_runs_the_tanh_gelu_on_fused_attention() -> None:
    # The recipe the file's name stands for: FastGelu (8 % faster than the exact BiasGelu), and
    # the fused attention quantised.
    import onnx

    _exported("onnx-int8")
    model = onnx.load(str(find_onnx_model("onnx-int8")), load_external_data=False)
    ops = {node.op_type for node in model.graph.node}
    assert {"FastGelu", "QAttention", "MatMulInteger"} <= ops
    assert "BiasGelu" not in ops


def test_onnx_variants_encode_in_small_batches_and_torch_in_its_own() -> None:
    _exported("onnx")
    assert MiniLmEmbedder(streams=1).batch_size == 64
    assert MiniLmEmbedder(streams=1, variant="onnx").batch_size == 16
    assert MiniLmEmbedder(streams=1, variant="onnx", batch_size=5).batch_size == 5


def _session_team(copy: object) -> tuple[int, str | None, str | None]:
    """A copy's intra-op thread count, whether its team may spin and how long (None: not set)."""
    options = copy._session.get_session_options()  # type: ignore[attr-defined]

    def entry(key: str) -> str | None:
        try:
            return str(options.get_session_config_entry(key))
        except RuntimeError:  # not set: ONNX Runtime's default (spinning allowed, a long spin)
            return None

    spins = entry("session.intra_op.allow_spinning")
    return int(options.intra_op_num_threads), spins, entry("session.intra_op.spin_duration_us")


def test_the_question_copy_is_a_briefly_spinning_team_and_gives_a_streams_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A question is embedded by the small-call copy: two threads that spin 5 µs, then sleep
    # (a long-spinning team took 7 ms beside a busy process, one thread 4.9 ms quiet); the
    # streams stay single-thread sessions on two cores, and the rows are the same either way.
    _exported("onnx")
    monkeypatch.setattr("graphs.models.minilm.usable_cores", lambda: 2)
    embedder = MiniLmEmbedder(variant="onnx")
    assert _session_team(embedder._direct) == (2, None, "5")
    texts = [f"Person {i} was born in town {i % 37}." for i in range(SLICE + 8)]
    streamed = embedder.embed(texts)
    copies = [embedder._stream_copies.get() for _ in range(embedder.streams)]
    assert [_session_team(c)[0] for c in copies] == [1, 1]
    alone = np.concatenate([embedder.embed([texts[i]]) for i in (0, 100, SLICE + 7)])
    np.testing.assert_allclose(alone, streamed[[0, 100, SLICE + 7]], atol=1e-5)


def test_batches_are_formed_by_token_count_not_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    # Rare words split into many word pieces: these names are shorter in characters than the
    # plain sentences but longer in tokens, so a sort by characters would batch them wrongly.
    _exported("onnx")
    rare = [f"Qzxv Wyrmq Plyxt Zzqk {i}" for i in range(4)]
    plain = [f"it is the one in the house now {'ab'[i % 2]}" for i in range(4)]
    texts = [t for pair in zip(plain, rare, strict=True) for t in pair]
    embedder = MiniLmEmbedder(streams=1, variant="onnx", batch_size=4)
    copy = embedder._direct
    assert isinstance(copy, OnnxMiniLm)
    encoded = copy._batches._tokenizer.encode_batch(texts)
    tokens = {t: len(e.ids) for t, e in zip(texts, encoded, strict=True)}
    assert max(len(t) for t in rare) < min(len(t) for t in plain)
    assert max(tokens[t] for t in plain) < min(tokens[t] for t in rare)
    batches: list[list[int]] = []
    run = copy._run

    def spy(ids: np.ndarray, mask: np.ndarray) -> Vectors:
        batches.append(sorted(int(n) for n in mask.sum(axis=1)))
        return run(ids, mask)

    monkeypatch.setattr(copy, "_run", spy)
    got = embedder.embed(texts)
    assert batches == [sorted(tokens[t] for t in plain), sorted(tokens[t] for t in rare)]
    # Padding is masked out: each row is the one its text gets alone, in the order given.
    alone = np.concatenate([embedder.embed([t]) for t in texts])
    np.testing.assert_allclose(got, alone, atol=1e-5)
