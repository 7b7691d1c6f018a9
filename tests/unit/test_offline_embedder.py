"""The offline default embedder: MiniLM on ONNX Runtime (fp32) where exported, else PyTorch."""

from pathlib import Path

import pytest

import graphs.models.onnx_export as onnx_export
from graphs.models.onnx_export import MODEL_DIR_FOLDER, ONNX_FILES
from graphs.runtime.settings import Settings


def test_the_default_is_fp32_onnx_where_exported_and_torch_where_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No export beside the (redirected) weights and none in GRASP_MODEL_DIR: the PyTorch model.
    monkeypatch.setattr(onnx_export, "weights_dir", lambda: tmp_path / "weights")
    env = {"GRASP_MODEL_DIR": str(tmp_path / "models")}
    assert Settings.from_env(env).embedder == "local:all-MiniLM-L6-v2"
    # The fp32 file in GRASP_MODEL_DIR: its variant.
    folder = tmp_path / "models" / MODEL_DIR_FOLDER
    folder.mkdir(parents=True)
    (folder / ONNX_FILES["onnx"]).write_bytes(b"")
    assert Settings.from_env(env).embedder == "local:all-MiniLM-L6-v2@onnx"
    # An int8 file alone does not make int8 the default (it loses recall).
    (folder / ONNX_FILES["onnx"]).unlink()
    (folder / ONNX_FILES["onnx-int8"]).write_bytes(b"")
    assert Settings.from_env(env).embedder == "local:all-MiniLM-L6-v2"
    # A named embedder or a Gemini key decides as before.
    named = {**env, "GRASP_EMBEDDER": "local:all-MiniLM-L6-v2@onnx-int8"}
    assert Settings.from_env(named).embedder == "local:all-MiniLM-L6-v2@onnx-int8"
    assert Settings.from_env({**env, "GOOGLE_API_KEY": "k"}).embedder.startswith("gemini:")
