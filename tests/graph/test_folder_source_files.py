"""A folder's passages name their file in it: a citation shows the file, and a client's file
label is checked like its source label."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from graphs.cli.main import main
from graphs.indexing.passage_intake import MAX_SOURCE_CHARS, BadIndexInput
from store.citation_reads import cited_texts
from store.corpora import corpus_id
from store.corpus_reads import corpus_passages
from store.passage_writes import add_passages
from tests.graph.test_cli_safe_output import cli  # noqa: F401  (the CLI's environment)
from tests.store.corpus_snapshot import index


def sources_by_title(engine: Engine, corpus: str) -> dict[str, str]:
    cid = corpus_id(engine, corpus)
    ids = [p.id for p in corpus_passages(engine, cid)]
    passages, _ = cited_texts(engine, cid, ids)
    return {c.title: c.source for c in passages.values()}


def test_a_folder_passage_cites_its_file_and_follows_a_move(
    engine: Engine,
    cli: None,  # noqa: F811
    tmp_path: Path,
) -> None:
    folder = tmp_path / "notes"
    (folder / "films").mkdir(parents=True)
    (folder / "films" / "harbor.md").write_text("Blue Harbor is a film.", encoding="utf-8")
    (folder / "oslo.txt").write_text("Oslo is cold.", encoding="utf-8")
    assert main(["index", str(folder), "--corpus", "notes", "--extractor", "synthetic"]) == 0
    root = str(folder.resolve())
    assert sources_by_title(engine, "notes") == {
        "harbor": f"{root}/films/harbor.md",
        "oslo": f"{root}/oslo.txt",
    }
    # Moved inside the folder, unchanged: the same passage, now cited from where it lies.
    (folder / "films" / "harbor.md").rename(folder / "harbor.md")
    assert main(["index", str(folder), "--corpus", "notes", "--extractor", "synthetic"]) == 0
    assert sources_by_title(engine, "notes") == {
        "harbor": f"{root}/harbor.md",
        "oslo": f"{root}/oslo.txt",
    }
    # A corpus file is its passages' source, with no file inside it.
    corpus = tmp_path / "more.json"
    corpus.write_text('[{"title": "Rome", "text": "Rome is old."}]', encoding="utf-8")
    assert main(["index", str(corpus), "--corpus", "more", "--extractor", "synthetic"]) == 0
    assert sources_by_title(engine, "more") == {"Rome": str(corpus.resolve())}


def test_a_passage_in_two_files_names_the_first_given(engine: Engine) -> None:
    from store.corpora import ensure_corpus

    cid = ensure_corpus(engine, "c", "hash")
    rows = add_passages(
        engine, cid, [("A", "same"), ("A", "same"), ("B", "b")], "/n", ["x/a.md", "y/a.md", None]
    )
    passages, _ = cited_texts(engine, cid, [r.id for r in rows])
    assert {c.title: c.source for c in passages.values()} == {"A": "/n/x/a.md", "B": "/n"}


@pytest.mark.parametrize(
    ("passage", "source", "message"),
    [
        ({"title": "A", "text": "t", "file": 3}, "/n", "'file' must be a label"),
        ({"title": "A", "text": "t", "file": "x" * (MAX_SOURCE_CHARS + 1)}, "/n", "'file' must"),
        ({"title": "A", "text": "t", "file": "a.md"}, None, "give the 'source' too"),
        ({"title": "A", "text": "t", "path": "/etc/passwd"}, "/n", "'title' and 'text'"),
    ],
)
async def test_a_clients_file_label_is_checked(
    engine: Engine, database_url: str, passage: dict[str, object], source: str | None, message: str
) -> None:
    with pytest.raises(BadIndexInput, match=message):
        await index(engine, database_url, "c", None, source, passages=[passage])
