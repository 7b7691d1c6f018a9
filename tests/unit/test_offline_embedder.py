"""The offline default embedder: MiniLM on ONNX Runtime (fp32) where exported, bf16 PyTorch for long
calls where the CPU multiplies bfloat16 (and the export answers its questions), else PyTorch."""

from pathlib import Path

import pytest

import graphs.models.embedders as embedders
import graphs.models.onnx_export as onnx_export
from graphs.models.cores import cpu_flags
from graphs.models.onnx_export import MODEL_DIR_FOLDER, ONNX_FILES
from graphs.runtime.settings import Settings


def a_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: set[str]
) -> tuple[dict[str, str], Path]:
    """A CPU with `flags`, no export beside the (redirected) weights; GRASP_MODEL_DIR's folder."""
    monkeypatch.setattr(onnx_export, "weights_dir", lambda: tmp_path / "weights")
    monkeypatch.setattr(embedders, "cpu_flags", lambda: flags)
    env = {"GRASP_MODEL_DIR": str(tmp_path / "models")}
    return env, tmp_path / "models" / MODEL_DIR_FOLDER


def test_the_default_is_fp32_onnx_where_exported_and_torch_where_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No export beside the weights and none in GRASP_MODEL_DIR: the PyTorch model.
    env, folder = a_machine(tmp_path, monkeypatch, {"avx2", "fma"})
    assert Settings.from_env(env).embedder == "local:all-MiniLM-L6-v2"
    # The fp32 file in GRASP_MODEL_DIR: its variant.
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


def test_cpus_with_amx_index_in_bf16_once_the_export_can_answer_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env, folder = a_machine(tmp_path, monkeypatch, {"avx512f", "amx_tile", "amx_bf16"})
    # bf16's questions go to the fp32 export: without it, the PyTorch model as before.
    assert Settings.from_env(env).embedder == "local:all-MiniLM-L6-v2"
    folder.mkdir(parents=True)
    (folder / ONNX_FILES["onnx"]).write_bytes(b"")
    assert Settings.from_env(env).embedder == "local:all-MiniLM-L6-v2@bf16"
    # AVX-512 with bfloat16 dot products but no AMX was not measured: the export.
    monkeypatch.setattr(embedders, "cpu_flags", lambda: {"avx512f", "avx512_bf16"})
    assert Settings.from_env(env).embedder == "local:all-MiniLM-L6-v2@onnx"


def test_the_flags_are_read_from_the_first_processor_block() -> None:
    cpuinfo = (
        "processor\t: 0\nmodel name\t: Some Xeon\nflags\t\t: fpu avx2 amx_bf16 amx_tile\n\n"
        "processor\t: 1\nflags\t\t: fpu\n"
    )
    assert cpu_flags(cpuinfo) == {"fpu", "avx2", "amx_bf16", "amx_tile"}
    assert cpu_flags("processor\t: 0\n") == set()
