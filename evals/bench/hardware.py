"""The processor line every bench prints.

VMs that all call themselves `AMD EPYC` with two cores ran the same embedder 2-3x apart
(docs/scale.md): the name alone does not tell them apart, the CPU family, model and widest
vector instructions do.
"""

from __future__ import annotations

import platform

from graphs.models.cores import cpu_flags, multiplies_bfloat16


def describe_cpu(cpuinfo: str) -> str:
    """`NAME (family F, model M; ISA)` from /proc/cpuinfo's first processor block."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            if fields:
                break  # the first processor's block is enough: every vCPU reports the same
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    name = fields.get("model name") or platform.processor() or "unknown"
    flags = cpu_flags(cpuinfo)
    widest = "AVX-512" if "avx512f" in flags else "AVX2, no AVX-512" if "avx2" in flags else ""
    if multiplies_bfloat16(flags):  # what picks the default embedder's bf16 variant
        widest += ", AMX-BF16"
    details = [f"family {fields['cpu family']}"] if "cpu family" in fields else []
    details += [f"model {fields['model']}"] if "model" in fields else []
    described = "; ".join(part for part in (", ".join(details), widest) if part)
    return f"{name} ({described})" if described else name


def cpu_model() -> str:
    """The processor of the machine running the bench, for its hardware line."""
    try:
        with open("/proc/cpuinfo") as handle:
            return describe_cpu(handle.read())
    except OSError:
        return platform.processor() or "unknown"
