"""Re-indexing a changed file replaces what changed and nothing else; the delete and corpus
commands say what they did, or one clear line and a non-zero exit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from graphs.cli.main import main
from graphs.indexing.corpus_files import read_corpus
from store.corpora import corpus_id
from store.engine import transaction
from store.models import Passage, Proposition
from tests.store.corpus_snapshot import (
    ALPHA,
    BETA,
    GAMMA,
    Doc,
    assert_consistent,
    fresh,
    index,
    snapshot,
    sources,
)

BETA_EDITED = ("Beta", "Rome is older. Bern is cold.")


def write(path: Path, docs: list[Doc]) -> Path:
    path.write_text(json.dumps([{"title": t, "text": x} for t, x in docs]))
    return path


async def index_file(engine: Engine, url: str, corpus: str, path: Path) -> dict[str, Any]:
    """Index a file as `grasp index` does: read here, its passages sent under its path."""
    docs = [(p.title, p.text) for p in read_corpus(path)]
    return await index(engine, url, corpus, docs, source=str(path.resolve()))


def ids_by_title(engine: Engine, corpus: str) -> dict[str, tuple[int, tuple[int, ...]]]:
    """title → (passage id, its unit ids): what an update must leave alone."""
    cid = corpus_id(engine, corpus)
    with transaction(engine) as session:
        passages = session.execute(
            select(Passage.id, Passage.title).where(Passage.corpus_id == cid)
        ).all()
        units = session.execute(
            select(Proposition.passage_id, Proposition.id)
            .where(Proposition.corpus_id == cid)
            .order_by(Proposition.id)
        ).all()
    return {title: (pid, tuple(u for p, u in units if p == pid)) for pid, title in passages}


async def test_reindexing_a_changed_file_replaces_only_the_changed_passage(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    path = write(tmp_path / "docs.json", [ALPHA, BETA, GAMMA])
    first = await index_file(engine, database_url, "c", path)
    assert first["this_run"]["passages_done"] == 3
    kept = ids_by_title(engine, "c")

    write(path, [ALPHA, BETA_EDITED, GAMMA])
    again = await index_file(engine, database_url, "c", path)
    run = again["this_run"]
    # Only the edited passage was extracted and embedded; its old version left.
    assert (run["passages_done"], run["passages_embedded"], run["passages_skipped"]) == (1, 1, 2)
    assert (run["passages_added"], run["passages_changed"], run["passages_removed"]) == (1, 1, 0)
    assert run["names_embedded"] == 1  # Bern; Rome was already there (Alpha keeps it)
    now = ids_by_title(engine, "c")
    assert now["Alpha"] == kept["Alpha"] and now["Gamma"] == kept["Gamma"]
    assert now["Beta"][0] != kept["Beta"][0]
    assert snapshot(engine, "c") == await fresh(
        engine, database_url, "f", [ALPHA, BETA_EDITED, GAMMA]
    )
    assert_consistent(engine, "c")

    unchanged = await index_file(engine, database_url, "c", path)
    assert unchanged["this_run"]["passages_skipped"] == 3
    assert "passages_done" not in unchanged["this_run"]  # no batch ran at all
    assert ids_by_title(engine, "c") == now


async def test_a_file_is_mirrored_without_touching_other_sources(
    engine: Engine, database_url: str
) -> None:
    await index(engine, database_url, "c", [ALPHA, BETA], source="/docs/a.json")
    await index(engine, database_url, "c", [BETA, GAMMA], source="/docs/b.json")
    lone = ("Delta", "Lima sleeps.")
    await index(engine, database_url, "c", [lone])
    await index(engine, database_url, "other", [ALPHA], source="/docs/a.json")
    other = snapshot(engine, "other")

    # --limit reads part of the file: nothing may be removed on its account.
    limited = await index(engine, database_url, "c", [GAMMA, ALPHA], "/docs/a.json", limit=1)
    assert "passages_removed" not in limited["this_run"]
    assert ("/docs/a.json", *BETA) in sources(engine, "c")

    run = (await index(engine, database_url, "c", [GAMMA], source="/docs/a.json"))["this_run"]
    assert (run["passages_added"], run["passages_changed"], run["passages_removed"]) == (0, 0, 1)
    # Alpha went; Beta stays for b.json; Gamma is now held by both; Delta has no source.
    assert snapshot(engine, "c") == await fresh(engine, database_url, "f", [BETA, GAMMA, lone])
    assert sources(engine, "c") == {
        ("/docs/a.json", *GAMMA),
        ("/docs/b.json", *BETA),
        ("/docs/b.json", *GAMMA),
    }
    assert snapshot(engine, "other") == other
    assert_consistent(engine, "c")


@pytest.fixture
def cli_env(database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("GRASP_EMBEDDER", "hash")
    monkeypatch.setenv("GRASP_DATA_DIR", str(tmp_path / "data"))


def grasp(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.usefixtures("cli_env")
def test_index_delete_and_corpus_commands(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "docs.json", [ALPHA, BETA, GAMMA])
    index_args = ("index", str(path), "--corpus", "c", "--extractor", "synthetic")
    assert grasp(capsys, *index_args)[0] == 0
    write(path, [ALPHA, BETA_EDITED])
    code, out, _ = grasp(capsys, *index_args)
    assert code == 0
    assert "updated from the file: 1 changed, 0 new, 1 removed, 1 unchanged" in out

    code, out, _ = grasp(capsys, "corpus", "list")
    assert code == 0
    line = next(line for line in out.splitlines() if " c " in line)
    assert [cell.strip() for cell in line.split("│")[1:7]] == ["c", "hash-384", "2", "4", "4", "1"]

    code, out, _ = grasp(capsys, "delete", "--corpus", "c", "--title", "Beta")
    assert (code, out.strip()) == (
        0,
        "deleted 1 passage from corpus 'c': 2 units and 1 entity no longer mentioned anywhere",
    )
    assert grasp(capsys, "corpus", "check", "c")[:2] == (
        0,
        "corpus 'c': consistent (no orphans, counters exact)\n",
    )
    code, out, _ = grasp(capsys, "delete", "--corpus", "c", "--source", str(path))
    assert code == 0 and out.startswith("deleted 1 passage from corpus 'c': 2 units")

    code, out, err = grasp(capsys, "delete", "--corpus", "c", "--source", str(path))
    assert (code, out) == (1, "")
    assert err.strip() == (
        f"error: nothing deleted: corpus 'c' has no passages from {path.resolve()} "
        "(it records no sources)"
    )
    code, _, err = grasp(capsys, "delete", "--corpus", "c", "--passage-id", "999999")
    assert (code, err.strip()) == (
        1,
        "error: nothing deleted: no passage with id 999999 in corpus 'c'",
    )
    code, _, err = grasp(capsys, "delete", "--corpus", "nope", "--title", "Beta")
    assert code == 1 and err.startswith("error: no corpus named 'nope'")
    assert len(err.strip().splitlines()) == 1

    assert grasp(capsys, "corpus", "drop", "c")[:2] == (
        0,
        "dropped corpus 'c' and everything in it\n",
    )
    code, _, err = grasp(capsys, "corpus", "drop", "c")
    assert (code, err.strip()) == (1, "error: no corpus named 'c' (see `grasp corpus list`)")
    code, out, _ = grasp(capsys, "corpus", "list")
    assert (code, out.strip()) == (
        0,
        "no corpora yet: index one with `grasp index PATH --corpus NAME`",
    )
