"""A corpus records its MiniLM variant in its embedder name: another variant's vectors are refused,
both when indexing into it and when asking it; another spelling of the same variant is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine

from graphs.cli.main import main
from graphs.models.embedders import minilm_variant
from graphs.models.minilm import minilm_name
from graphs.models.onnx_export import OnnxModelMissing, find_onnx_model
from store.corpora import corpus_embedder, ensure_corpus
from store.engine import StoreError


def recorded_name(spec: str) -> str:
    """The name a corpus indexed under GRASP_EMBEDDER=`spec` records."""
    variant = minilm_variant(spec)
    assert variant is not None
    return minilm_name(variant)


def ask_with_fp32_onnx(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`grasp ask`'s environment: GRASP_EMBEDDER=@onnx and a chat model that has no replies."""
    try:
        find_onnx_model("onnx")
    except OnnxModelMissing as exc:
        pytest.skip(f"MiniLM@onnx not exported (scripts/install.sh makes it): {exc}")
    script = tmp_path / "rules.json"
    script.write_text(json.dumps([]))
    for key, value in {
        "DATABASE_URL": database_url,
        "GRASP_CHAT_MODEL": f"scripted:{script}",
        "GRASP_EMBEDDER": "local:all-MiniLM-L6-v2@onnx",
        "GRASP_LLM_CACHE": "0",
        "GRASP_DATA_DIR": str(tmp_path / "data"),
    }.items():
        monkeypatch.setenv(key, value)


def test_a_corpus_of_one_variant_refuses_another(engine: Engine) -> None:
    made = ensure_corpus(engine, "int8-made", recorded_name("local:all-MiniLM-L6-v2@onnx-int8"))
    assert corpus_embedder(engine, made) == "local:all-MiniLM-L6-v2@onnx-int8"
    # The same variant, spelt otherwise, is the same corpus.
    assert ensure_corpus(engine, "int8-made", recorded_name("all-MiniLM-L6-v2@onnx-int8")) == made
    for other in ("local:all-MiniLM-L6-v2", "local@onnx", "local:all-MiniLM-L6-v2@torch"):
        with pytest.raises(StoreError) as refused:
            ensure_corpus(engine, "int8-made", recorded_name(other))
        assert str(refused.value) == (
            "corpus 'int8-made' was indexed with embedder 'local:all-MiniLM-L6-v2@onnx-int8', "
            f"not {recorded_name(other)!r}; vectors of different models cannot be compared — "
            "use another corpus name"
        )
    # A corpus made before variants existed keeps the torch model's name, and its questions.
    torch_made = ensure_corpus(engine, "torch-made", recorded_name("local"))
    assert corpus_embedder(engine, torch_made) == "local:all-MiniLM-L6-v2"


def test_asking_a_corpus_with_another_variant_is_refused(
    engine: Engine,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ensure_corpus(engine, "int8-made", recorded_name("local:all-MiniLM-L6-v2@onnx-int8"))
    ask_with_fp32_onnx(database_url, tmp_path, monkeypatch)
    assert main(["ask", "Who directed Blue Harbor?", "--corpus", "int8-made"]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "refused: corpus 'int8-made' was indexed with embedder local:all-MiniLM-L6-v2@onnx-int8, "
        "but GRASP_EMBEDDER gives local:all-MiniLM-L6-v2@onnx: its vectors cannot be compared; "
        "set GRASP_EMBEDDER to match"
    ]


def test_fp32_onnx_and_torch_share_a_corpus_in_both_directions(engine: Engine) -> None:
    torch_name, onnx_name = recorded_name("local"), recorded_name("local@onnx")
    torch_made = ensure_corpus(engine, "twin-torch", torch_name)
    # The fp32 export makes the same vectors: it indexes into a torch corpus, which keeps its name.
    assert ensure_corpus(engine, "twin-torch", onnx_name) == torch_made
    assert corpus_embedder(engine, torch_made) == torch_name
    onnx_made = ensure_corpus(engine, "twin-onnx", onnx_name)
    assert ensure_corpus(engine, "twin-onnx", torch_name) == onnx_made
    assert corpus_embedder(engine, onnx_made) == onnx_name
    # Nor are the bfloat16 variant's vectors another's (cosine ≥ 0.99997, same recall).
    assert ensure_corpus(engine, "twin-torch", recorded_name("local@bf16")) == torch_made
    assert ensure_corpus(engine, "twin-onnx", recorded_name("local@bf16")) == onnx_made
    bf16_made = ensure_corpus(engine, "twin-bf16", recorded_name("local@bf16"))
    assert ensure_corpus(engine, "twin-bf16", torch_name) == bf16_made
    assert ensure_corpus(engine, "twin-bf16", onnx_name) == bf16_made
    assert corpus_embedder(engine, bf16_made) == "local:all-MiniLM-L6-v2@bf16"
    # int8 is no twin of any.
    bf16_name = recorded_name("local@bf16")
    for corpus, recorded in (
        ("twin-torch", torch_name),
        ("twin-onnx", onnx_name),
        ("twin-bf16", bf16_name),
    ):
        with pytest.raises(StoreError, match=f"indexed with embedder {recorded!r}, not"):
            ensure_corpus(engine, corpus, recorded_name("local@onnx-int8"))


def test_asking_a_torch_corpus_with_fp32_onnx_is_answered(
    engine: Engine,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ensure_corpus(engine, "torch-asked", recorded_name("local"))
    ask_with_fp32_onnx(database_url, tmp_path, monkeypatch)
    code = main(["ask", "Who directed Blue Harbor?", "--corpus", "torch-asked"])
    err = capsys.readouterr().err
    # Past the embedder check: the run reached the planner (which the empty script cannot answer).
    assert code == 1 and "refused" not in err
    assert err.startswith("the run stopped: LlmCallError") and "You split a question" in err
