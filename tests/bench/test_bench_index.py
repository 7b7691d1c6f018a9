"""`grasp bench index`: one size or a scale curve, each with the embedder-alone floor."""

import re

import pytest
from sqlalchemy import Engine

from evals.bench.index import embedder_alone_line, report
from graphs.cli.main import main
from store.corpora import CorpusNotFound, corpus_id, corpus_stats
from store.databases import database_name
from store.databases import database_url as database_url_of
from store.engine import make_engine
from store.vector_indexes import missing_vector_indexes

PER_K = re.compile(r"^ +(\d+) +([\d.]+) +\(([\d.]+) × the first\)$")
TWO_PASSES = re.compile(
    r"^embedder alone on the same texts: [\d.]+ s before indexing, [\d.]+ s after; indexing = "
    r"[\d.]+ × their mean \([\d.]+ × before, [\d.]+ × after; target ≤ 1.1 for a model\)$"
)


def test_a_scale_curve_indexes_each_size_and_compares_it_with_the_embedder_alone(
    engine: Engine,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("GRASP_EMBEDDER", "hash")
    monkeypatch.delenv("GRASP_ALLOWED_CORPORA", raising=False)
    args = ["bench", "index", "--passages", "12,30", "--sentences", "3", "--batch-size", "8"]
    assert main([*args, "--corpus", "bench-index-test"]) == 0
    out = capsys.readouterr().out.splitlines()

    assert out[0].startswith("hardware: ") and "embedder hash" in out[0]
    assert "— 12 passages —" in out and "— 30 passages —" in out
    indexed = [line for line in out if line.startswith("indexed ")]
    assert [line.split(",")[:2] for line in indexed] == [
        ["indexed 12 passages", " 36 propositions"],
        ["indexed 30 passages", " 90 propositions"],
    ]
    # 12 and 30 passages are below the 1,000 a bulk load needs: the indexes are kept up row by row.
    assert all("vector indexes kept up row by row" in line for line in indexed)
    # Each size times the embedder alone before indexing and again after it.
    alone = [line for line in out if line.startswith("embedder alone on the same texts:")]
    assert len(alone) == 2 and all(TWO_PASSES.match(line) for line in alone)
    curve = [m.groups() for line in out if (m := PER_K.match(line))]
    assert [c[0] for c in curve] == ["12", "30"] and curve[0][2] == "1.00"
    # The bench indexes into a database of its own, so the main store's corpora cannot decide
    # whether its load is a bulk load; the last size's corpus is what is left there, whole.
    own = make_engine(database_url_of(database_url, database_name("bench-index-test")))
    try:
        assert corpus_stats(own, "bench-index-test").passages_done == 30
        assert missing_vector_indexes(own) == []
    finally:
        own.dispose()
    with pytest.raises(CorpusNotFound):
        corpus_id(engine, "bench-index-test")


def test_a_bad_size_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "index", "--passages", "1000,ten"])
    assert exit_.value.code == 2
    assert "expected counts like 1000,10000; got '1000,ten'" in capsys.readouterr().err


def test_the_database_line_is_signed_when_a_rerun_shrinks_the_store() -> None:
    result = {
        "elapsed": 9.0,
        "this_run": {"bulk_load": True, "unit_index_build_ms": 1100, "index_build_ms": 100},
        "passages_done": 1000,
        "propositions": 5000,
        "entities": 448,
        "edges": 9983,
        "db_growth": -61 * 2**20,
        "db_size": 172 * 2**20,
        "embedder_alone": None,
    }
    assert "database: -61 MiB (total 172 MiB)" in report(result)
    assert "database: +250 MiB (total 403 MiB)" in report(
        {**result, "db_growth": 250 * 2**20, "db_size": 403 * 2**20}
    )


def test_the_ratio_is_to_the_mean_of_the_passes_before_and_after_indexing() -> None:
    assert embedder_alone_line(120.0, 80.0, 120.0) == (
        "embedder alone on the same texts: 80.0 s before indexing, 120.0 s after; indexing = "
        "1.20 × their mean (1.50 × before, 1.00 × after; target ≤ 1.1 for a model)"
    )
