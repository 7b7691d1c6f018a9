"""`grasp bench embed`: MiniLM's variants side by side — throughput, query latency, fidelity.

Each variant runs through the product's own embedder (graphs/models/minilm.py: its streams and
its small-call copy). The variants take turns within each round, so a machine shared with other
work loads them alike; the load average is printed with every round. A question is timed warm
(each variant's questions back to back, as one process embeds them) and cold (each variant in
turn right after the caches were emptied, as after a chat model's call). Fidelity is
measured against the first variant (fp32 PyTorch by default): the cosine between the two vectors
of each text, and how many of each question's ten nearest texts are the same.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evals.bench.busy import busy_neighbours
from evals.bench.caches import CacheFlusher
from evals.bench.hardware import cpu_model
from evals.bench.model_work import minilm_shape, pass_flops, token_counts
from evals.loaders import load_questions
from graphs.cli.index import count_or_zero
from graphs.indexing.corpus_files import read_corpus
from graphs.models.minilm import MINILM_VARIANTS, MiniLmEmbedder
from nodes.embedding import Vectors

#: Nearest texts compared per question.
TOP_K = 10
#: Shortest sentence kept: shorter pieces are split-off initials and numbers, not propositions.
MIN_SENTENCE = 20
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass
class VariantResult:
    """One variant's figures; the fidelity ones are None for the reference variant itself."""

    variant: str
    texts_per_s: list[float] = field(default_factory=list)
    #: Texts per CPU-second of this process (all its streams): the work itself, which other
    #: processes' load changes far less than the wall clock.
    texts_per_cpu_s: list[float] = field(default_factory=list)
    #: One question among its variant's questions back to back: the weights as warm as they get.
    query_ms: list[float] = field(default_factory=list)
    #: One question after the caches were emptied (caches.py): as after a chat model's call.
    cold_query_ms: list[float] = field(default_factory=list)
    #: CPU time of this process per question: the small-call copy's whole thread team (nothing
    #: else runs while questions are timed, and its threads spin only microseconds when idle).
    query_cpu_ms: list[float] = field(default_factory=list)
    cosine_mean: float | None = None
    cosine_min: float | None = None
    top_k_overlap: float | None = None


@dataclass
class EmbedBench:
    """Every variant's figures and the load average before each round."""

    texts: int
    queries: int
    results: list[VariantResult]
    loads: list[str]
    #: Spinning processes beside the question timings.
    busy: int = 0
    #: The texts' tokens and the float operations of one unpadded pass over them (model_work.py).
    tokens: int = 0
    flops: int = 0


def sentences(path: Path, count: int) -> list[str]:
    """The first `count` sentences of a corpus file's passages: texts like indexing's units."""
    found: list[str] = []
    for passage in read_corpus(path):
        found += [s for s in SENTENCE_END.split(passage.text) if len(s) >= MIN_SENTENCE]
        if len(found) >= count:
            return found[:count]
    return found


def questions(paths: list[Path], count: int) -> list[str]:
    """Questions, then their gold decompositions' steps, from question files: up to `count`."""
    examples = [example for path in paths for example in load_questions(path)]
    found = [e.question for e in examples]
    found += [step.question for e in examples for step in e.decomposition]
    return list(dict.fromkeys(found))[:count]


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def run_bench(
    variants: list[str], texts: list[str], queries: list[str], rounds: int, busy: int = 0
) -> EmbedBench:
    """Measure each variant; the first is the reference the others' vectors are compared with.

    The questions are timed beside `busy` spinning processes (`busy_neighbours`).
    """
    embedders = [MiniLmEmbedder(variant=v) for v in variants]
    for embedder in embedders:  # loads every copy and runs each once before any timing
        embedder.embed(texts)
        embedder.embed(queries[:3])
    results = [VariantResult(v) for v in variants]
    loads: list[str] = []
    text_vectors: dict[str, Vectors] = {}
    for round_ in range(rounds):
        loads.append(load_average())
        turn = round_ % len(variants)
        for at in [*range(turn, len(variants)), *range(turn)]:
            started, cpu = time.perf_counter(), time.process_time()
            text_vectors[variants[at]] = embedders[at].embed(texts)
            results[at].texts_per_s.append(len(texts) / (time.perf_counter() - started))
            results[at].texts_per_cpu_s.append(len(texts) / (time.process_time() - cpu))
    with busy_neighbours(busy):
        query_vectors = _time_queries(embedders, results, queries)
    reference = variants[0]
    for result in results[1:]:
        cosines = np.sum(text_vectors[reference] * text_vectors[result.variant], axis=1)
        result.cosine_mean, result.cosine_min = float(cosines.mean()), float(cosines.min())
        result.top_k_overlap = _overlap(
            query_vectors[reference] @ text_vectors[reference].T,
            query_vectors[result.variant] @ text_vectors[result.variant].T,
        )
    counts = token_counts(texts)
    flops = pass_flops(counts, minilm_shape())
    return EmbedBench(len(texts), len(queries), results, loads, busy, sum(counts), flops)


def _time_queries(
    embedders: list[MiniLmEmbedder], results: list[VariantResult], queries: list[str]
) -> dict[str, Vectors]:
    """Embed each question alone, warm then cold, with every variant; return each one's rows.

    Warm: each variant's questions one after another, as a process holding one variant embeds
    them (a `bf16` question took 3.8-4.1 ms so, 5.7-6.0 in turn after torch's, even with one
    untimed call between). Cold, in a second pass: every variant in turn, each right after the
    caches were emptied (its effects last a few calls, so the two passes are kept apart).
    """
    rows: dict[str, list[Vectors]] = {e.variant: [] for e in embedders}
    for embedder, result in zip(embedders, results, strict=True):
        for question in queries:
            started, cpu = time.perf_counter(), time.process_time()
            rows[embedder.variant].append(embedder.embed([question]))
            result.query_ms.append((time.perf_counter() - started) * 1000)
            result.query_cpu_ms.append((time.process_time() - cpu) * 1000)
    flusher = CacheFlusher()
    for question in queries:
        for embedder, result in zip(embedders, results, strict=True):
            flusher.flush()
            started = time.perf_counter()
            embedder.embed([question])
            result.cold_query_ms.append((time.perf_counter() - started) * 1000)
    return {variant: np.concatenate(found) for variant, found in rows.items()}


def _overlap(reference: Vectors, other: Vectors) -> float:
    """Mean share of each row's top-k columns the two score matrices agree on."""
    k = min(TOP_K, int(reference.shape[1]))
    ref_top = np.argpartition(-reference, k - 1, axis=1)[:, :k]
    other_top = np.argpartition(-other, k - 1, axis=1)[:, :k]
    shared = [len(set(a) & set(b)) for a, b in zip(ref_top, other_top, strict=True)]
    return sum(shared) / (k * len(shared))


def report(bench: EmbedBench, source: str) -> list[str]:
    """The printed table: one row per variant, then the load average of each round."""
    base = statistics.median(bench.results[0].texts_per_s)
    base_cpu = statistics.median(bench.results[0].texts_per_cpu_s)
    lines = [
        f"MiniLM variants: {bench.texts} sentences of {source}, {bench.queries} questions"
        f"{f' (timed beside {bench.busy} busy processes)' if bench.busy else ''}; "
        f"CPU {cpu_model()}, {os.cpu_count()} cores; {bench.tokens} tokens, "
        f"{bench.flops / 1e9:.1f} GFLOP a pass (unpadded)",
        f"{'variant':<11}{'texts/s':>9}{'× ref':>7}{'/CPU-s':>8}{'× ref':>7}{'GFLOP/CPU-s':>12}"
        f"{'query p50':>11}{'p95 ms':>8}{'CPU p50':>9}{'cold p50':>10}"
        f"{'cos mean':>10}{'cos min':>9}{f'top-{TOP_K}':>8}   texts/s by round",
    ]
    for result in bench.results:
        rate = statistics.median(result.texts_per_s)
        cpu_rate = statistics.median(result.texts_per_cpu_s)
        fidelity = (
            f"{result.cosine_mean:>10.4f}{result.cosine_min:>9.4f}{result.top_k_overlap:>8.3f}"
            if result.cosine_mean is not None and result.cosine_min is not None
            else f"{'(reference)':>27}"
        )
        rounds = " ".join(f"{r:.0f}" for r in result.texts_per_s)
        lines.append(
            f"{result.variant:<11}{rate:>9.1f}{rate / base:>7.2f}{cpu_rate:>8.1f}"
            f"{cpu_rate / base_cpu:>7.2f}{cpu_rate * bench.flops / bench.texts / 1e9:>12.1f}"
            f"{statistics.median(result.query_ms):>11.2f}{_p95(result.query_ms):>8.2f}"
            f"{statistics.median(result.query_cpu_ms):>9.2f}"
            f"{statistics.median(result.cold_query_ms):>10.2f}"
            f"{fidelity}   {rounds}"
        )
    lines.append("load average before each round: " + " | ".join(bench.loads))
    return lines


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(np.ceil(0.95 * len(ordered))) - 1)]


def register_bench(sub: Any) -> None:
    """Add `bench embed` to the bench sub-commands."""
    parser = sub.add_parser("embed", help="MiniLM variants: throughput, query latency, fidelity")
    parser.add_argument("corpus_file", type=Path, help="a corpus file whose sentences are embedded")
    parser.add_argument(
        "--questions", type=Path, nargs="*", default=[], help="question files (default: none)"
    )
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--busy",
        type=count_or_zero,
        default=0,
        help="time the questions beside this many spinning processes (default: 0)",
    )
    parser.add_argument(
        "--variants",
        type=variant_list,
        default=list(MINILM_VARIANTS),
        help=f"comma-separated, the first the reference (default: {','.join(MINILM_VARIANTS)})",
    )
    parser.set_defaults(handler=handle)


def variant_list(value: str) -> list[str]:
    """Parse `torch,onnx-int8`: known variants, at least one."""
    variants = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in variants if v not in MINILM_VARIANTS]
    if unknown or not variants:
        raise argparse.ArgumentTypeError(f"variants are among {', '.join(MINILM_VARIANTS)}")
    return variants


def handle(args: argparse.Namespace) -> int:
    """Run the bench and print its table."""
    texts = sentences(args.corpus_file, args.texts)
    # Without question files, later sentences of the corpus stand in for questions.
    queries = (
        questions(args.questions, args.queries)
        if args.questions
        else sentences(args.corpus_file, args.texts + args.queries)[args.texts :]
    )
    if not texts or not queries:
        raise ValueError(f"{args.corpus_file}: no sentences or questions to embed")
    bench = run_bench(args.variants, texts, queries, args.rounds, args.busy)
    print("\n".join(report(bench, args.corpus_file.name)))
    return 0
