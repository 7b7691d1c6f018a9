"""`grasp bench embed`'s pieces: corpus sentences, question texts, the neighbour overlap, and a
small run of two variants whose fidelity figures come from their real vectors."""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
import time
from pathlib import Path

import numpy as np
import pytest

from evals.bench.busy import busy_neighbours
from evals.bench.embedder import _overlap, questions, report, run_bench, sentences
from evals.bench.model_work import minilm_shape, pass_flops, token_counts
from graphs.cli.main import build_parser
from graphs.models.onnx_export import OnnxModelMissing, find_onnx_model

PASSAGES = [
    {
        "title": "Lyon",
        "text": "Lyon lies where the Rhône meets the Saône. It is France's third city.",
    },
    {"title": "Arles", "text": "Arles has a Roman amphitheatre. Van Gogh painted there in 1888!"},
]


def test_sentences_are_split_and_short_pieces_dropped(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(PASSAGES))
    assert sentences(corpus, 10) == [
        "Lyon lies where the Rhône meets the Saône.",
        "It is France's third city.",
        "Arles has a Roman amphitheatre.",
        "Van Gogh painted there in 1888!",
    ]
    assert sentences(corpus, 3)[-1] == "Arles has a Roman amphitheatre."


def test_questions_come_first_then_decomposition_steps_without_repeats(tmp_path: Path) -> None:
    def record(qid: str, question: str, steps: list[str]) -> dict[str, object]:
        return {
            "id": qid,
            "question": question,
            "answer": "Lyon",
            "paragraphs": [{"title": "Lyon", "paragraph_text": "Lyon.", "is_supporting": True}],
            "question_decomposition": [
                {"question": step, "answer": "x", "paragraph_support_idx": 0} for step in steps
            ],
        }

    path = tmp_path / "questions.json"
    path.write_text(
        json.dumps(
            [
                record("2hop_1", "Where was the director born?", ["Who directed it?", "Where?"]),
                record("2hop_2", "Which river?", ["Where?", "Which river flows there?"]),
            ]
        )
    )
    assert questions([path], 10) == [
        "Where was the director born?",
        "Which river?",
        "Who directed it?",
        "Where?",
        "Which river flows there?",
    ]
    assert questions([path], 3) == [
        "Where was the director born?",
        "Which river?",
        "Who directed it?",
    ]


def test_overlap_counts_shared_top_k_columns() -> None:
    scores = np.arange(40, dtype=np.float32).reshape(2, 20)
    assert _overlap(scores, scores) == 1.0
    assert _overlap(scores, -scores) == 0.0  # each row's ten best are the other's ten worst


def test_a_small_run_compares_variants_on_their_real_vectors() -> None:
    for variant in ("onnx", "onnx-int8"):
        try:
            find_onnx_model(variant)
        except OnnxModelMissing as exc:
            pytest.skip(f"MiniLM@{variant} not exported (scripts/install.sh makes it): {exc}")
    texts = [f"Person {i} was born in town {i % 7} in {1800 + i}." for i in range(30)]
    queries = ["Where was Person 3 born?", "Who was born in 1805?"]
    bench = run_bench(["onnx", "onnx-int8"], texts, queries, rounds=2, busy=1)
    fp32, int8 = bench.results
    assert len(fp32.texts_per_s) == 2 and len(int8.query_ms) == 2
    assert len(int8.cold_query_ms) == 2 and all(ms > 0 for ms in int8.cold_query_ms)
    assert fp32.cosine_mean is None  # the reference
    assert int8.cosine_min is not None and 0.98 < int8.cosine_min <= 1.0
    assert int8.top_k_overlap is not None and 0.5 <= int8.top_k_overlap <= 1.0
    # The work of a pass: the texts' own tokens, counted without padding.
    assert bench.tokens == sum(token_counts(texts))
    assert bench.flops == pass_flops(token_counts(texts), minilm_shape())
    lines = report(bench, "people")
    assert "(timed beside 1 busy processes)" in lines[0]
    assert f"{bench.tokens} tokens, {bench.flops / 1e9:.1f} GFLOP a pass" in lines[0]
    per_cpu_s = statistics.median(fp32.texts_per_cpu_s)
    assert lines[1].split()[7] == "GFLOP/CPU-s"  # "× ref" is two words
    assert lines[1].split()[14:16] == ["cold", "p50"]
    assert lines[2].split()[9] == f"{statistics.median(fp32.cold_query_ms):.2f}"
    assert lines[2].split()[5] == f"{per_cpu_s * bench.flops / len(texts) / 1e9:.1f}"
    assert lines[2].startswith("onnx ") and "(reference)" in lines[2]
    assert lines[3].startswith("onnx-int8") and len(bench.loads) == 2


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, from /proc (clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_busy_neighbours_spin_inside_the_block_and_are_gone_after() -> None:
    with busy_neighbours(2):
        spinners = multiprocessing.active_children()
        assert len(spinners) == 2 and all(s.is_alive() for s in spinners)
        # They burn CPU (polled: on a loaded machine a niced spinner may wait for its turn).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if all(_cpu_seconds(s.pid or 0) > 0.05 for s in spinners):
                break
            time.sleep(0.1)
        assert all(_cpu_seconds(s.pid or 0) > 0.05 for s in spinners)
    assert not any(s.is_alive() for s in spinners)
    assert multiprocessing.active_children() == []


def test_a_negative_busy_count_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    parsed = parser.parse_args(["bench", "embed", "corpus.json", "--busy", "2"])
    assert parsed.busy == 2
    with pytest.raises(SystemExit):
        parser.parse_args(["bench", "embed", "corpus.json", "--busy", "-1"])
    assert "must be 0 or more, got -1" in capsys.readouterr().err
