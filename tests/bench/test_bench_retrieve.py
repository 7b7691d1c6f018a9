"""`grasp bench retrieve --scale`: one corpus per size, built once, with passage vectors."""

import re

import pytest
from sqlalchemy import Engine

from graphs.cli.main import main
from store.corpora import CorpusNotFound, corpus_id, corpus_stats
from store.databases import database_name, database_url
from store.engine import make_engine
from store.graph_writes import passages_without_embedding

ROW = re.compile(r"^ +([\d,]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+)  (.+)$")
GROWTH = re.compile(r"^100 against 50: 2× the propositions, ([\d.]+)× the p50$", re.M)


@pytest.fixture
def database_url_(database_url: str) -> str:
    """The session server's URL (renamed: store.databases.database_url is used here too)."""
    return database_url


def _rows(out: str) -> list[tuple[str, ...]]:
    return [m.groups() for line in out.splitlines() if (m := ROW.match(line))]


def test_a_scale_curve_builds_each_size_once_with_passage_vectors(
    engine: Engine,
    database_url_: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url_)
    monkeypatch.delenv("GRASP_ALLOWED_CORPORA", raising=False)
    args = ["bench", "retrieve", "--scale", "50,100", "--queries", "5"]
    assert main([*args, "--corpus", "bench-scale-test"]) == 0

    out = capsys.readouterr().out
    first = _rows(out)
    assert [(size, "writing" in build) for size, *_, build in first] == [
        ("50", True),
        ("100", True),
    ]
    assert all(float(p50) <= float(p95) for _, p50, p95, *_ in first)
    # Each half is timed inside the step, query by query, so neither's p50 exceeds the step's.
    assert all(float(s) <= float(p50) and float(v) <= float(p50) for _, p50, _, s, v, *_ in first)
    # 50 and 100 units are fewer than the search's ef_search (100): the walk sees every unit, so
    # its top-10 is the exact scan's.
    assert [recall for *_, recall, _ in first] == ["1.000", "1.000"]
    growth = GROWTH.search(out)
    assert growth is not None
    # The printed p50s are rounded to 0.05 ms either way; the ratio is of the unrounded ones.
    small, big = float(first[0][1]), float(first[1][1])
    low, high = (big - 0.05) / (small + 0.05), (big + 0.05) / max(small - 0.05, 1e-9)
    assert low - 0.005 <= float(growth.group(1)) <= high + 0.005
    sizes = {"bench-scale-test-50": 50, "bench-scale-test-100": 100}
    for name, propositions in sizes.items():
        own = make_engine(database_url(database_url_, database_name(name)))
        assert corpus_stats(own, name).propositions == propositions
        # The vote's dense prior needs passage vectors, as `grasp index` writes them.
        assert passages_without_embedding(own, corpus_id(own, name)) == []
        # Each size lives alone in a database of its own: not beside the other, not in the main one.
        for elsewhere, other in ((own, next(n for n in sizes if n != name)), (engine, name)):
            with pytest.raises(CorpusNotFound):
                corpus_id(elsewhere, other)
        own.dispose()

    assert main([*args, "--corpus", "bench-scale-test"]) == 0
    again = _rows(capsys.readouterr().out)
    assert [build for *_, build in again] == ["reused (built earlier)"] * 2


def test_a_bad_scale_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "retrieve", "--scale", "6000,lots"])
    assert exit_.value.code == 2
    assert "expected sizes like 6000,60000,600000" in capsys.readouterr().err


def test_cold_needs_the_embedded_server(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "retrieve", "--cold", "--corpus", "bench-cold-test"])
    assert "--cold restarts the embedded server; unset DATABASE_URL" in str(exit_.value.code)


def test_database_names_come_from_corpus_names() -> None:
    assert database_name("bench-retrieve-600k") == "bench_retrieve_600k"
    with pytest.raises(ValueError, match="cannot name a database"):
        database_name("bench; DROP TABLE corpora")
