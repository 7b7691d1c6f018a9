"""The benches' hardware line names the CPU's family, model and widest vector instructions, and the
embed bench counts its work in float operations: two VMs both called `AMD EPYC` ran the same
embedder 2-3x apart, and only these tell why."""

from __future__ import annotations

import pytest

from evals.bench.hardware import describe_cpu
from evals.bench.model_work import EncoderShape, minilm_shape, pass_flops, token_counts

MILAN = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 1
model name\t: AMD EPYC
flags\t\t: fpu sse2 avx fma avx2 bmi2

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: Something Else
flags\t\t: avx512f avx2
"""


def test_the_cpu_line_names_family_model_and_vector_width() -> None:
    assert describe_cpu(MILAN) == "AMD EPYC (family 25, model 1; AVX2, no AVX-512)"
    genoa = MILAN.replace("model\t\t: 1", "model\t\t: 17").replace("bmi2", "bmi2 avx512f")
    assert describe_cpu(genoa) == "AMD EPYC (family 25, model 17; AVX-512)"
    amx = MILAN.replace("bmi2", "avx512f amx_tile amx_bf16").replace("AMD EPYC", "Xeon")
    assert describe_cpu(amx) == "Xeon (family 25, model 1; AVX-512, AMX-BF16)"


def test_a_cpuinfo_without_those_fields_still_names_something(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("platform.processor", lambda: "")
    assert describe_cpu("processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n") == "unknown"
    assert describe_cpu("model name\t: Neoverse\n") == "Neoverse"
    assert describe_cpu("model name\t: X\nflags\t: avx2\n") == "X (AVX2, no AVX-512)"


def test_a_pass_counts_projections_per_token_and_attention_per_text() -> None:
    # One layer, 2 wide, feed-forward 3: per token 2 × (4·2² + 2·2·3) = 56; per text of n tokens
    # 4·n²·2 more for the attention. Texts of 1 and 2 tokens: 56 + 8 + 112 + 32.
    assert pass_flops([1, 2], EncoderShape(layers=1, hidden=2, feed_forward=3)) == 208
    assert pass_flops([1, 2], EncoderShape(layers=3, hidden=2, feed_forward=3)) == 3 * 208


def test_the_shipped_minilm_is_counted_with_its_own_sizes_and_tokens() -> None:
    assert minilm_shape() == EncoderShape(layers=6, hidden=384, feed_forward=1536)
    long_text = " ".join(["river"] * 1000)
    assert token_counts(["Lyon", "the river Rhône", long_text]) == [3, 5, 256]
