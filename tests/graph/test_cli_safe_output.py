"""The CLI's smaller safety items: a folder's bad file or outward link never stops the rest,
names are shown literally, URLs' secrets are masked, `view --out` keeps an existing file, the
progress line says what it waits on, and a full disk is named as such."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from sqlalchemy import Engine, text

from graphs.agent.context import GraspContext
from graphs.agent.graph import build_grasp_graph
from graphs.cli.index_progress import IndexProgress
from graphs.cli.main import main
from graphs.indexing.context import IndexContext
from graphs.indexing.graph import build_index_graph
from graphs.indexing.state import IndexInput
from graphs.runtime.checkpoints import open_checkpointer
from graphs.runtime.users import token_digest
from store.corpora import InvalidCorpusName, corpus_id, ensure_corpus
from store.engine import make_engine, migrate
from store.failures import list_failures
from tests.fixtures.films import PAPER_VOTE, build_corpus, chain_rules, services
from tests.graph.test_dev_server import QUESTION
from tests.store.corpus_snapshot import index, snapshot

SECRET = "hunter2-" + token_digest("x")[:8]


@pytest.fixture
def cli(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("GRASP_EMBEDDER", "hash")
    monkeypatch.setenv("GRASP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("COLUMNS", "200")


def test_a_folder_indexes_around_bad_files_and_outward_links(
    engine: Engine, cli: None, tmp_path: Path, capsys: Any
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "salaries.txt").write_text("Ann earns 90k.", encoding="utf-8")
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "good.md").write_text("Oslo meets Rome.", encoding="utf-8")
    (folder / "sub" / "kept.txt").write_text("Rome is old.", encoding="utf-8")
    (folder / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    (folder / "wide.txt").write_bytes("Lima is high.".encode("utf-16"))
    (folder / "out.txt").symlink_to(outside / "salaries.txt")
    (folder / "gone.txt").symlink_to(outside / "no-such-file.txt")
    (folder / "inside.txt").symlink_to(folder / "sub" / "kept.txt")
    (folder / "linked-dir").symlink_to(outside, target_is_directory=True)

    assert main(["index", str(folder), "--corpus", "docs", "--extractor", "synthetic"]) == 1
    out, err = capsys.readouterr()
    # Both outward links are skipped alike: nothing says which target exists.
    assert "note: 2 linked file(s) lead out of the folder (or nowhere): skipped" in err
    assert "salaries" not in out + err and "no-such-file" not in out + err
    assert "2 passages failed" in out
    stored = {row[0]: row[2] for row in snapshot(engine, "docs")["passages"]}
    # A link inside the folder is followed (its file is read under the link's name too).
    assert stored == {
        "good": "done",
        "kept": "done",
        "inside": "done",
        "binary": "failed",
        "wide": "failed",
    }
    failures = list_failures(engine, corpus_id(engine, "docs"))
    assert sorted(f.title for f in failures) == ["binary", "wide"]
    assert all("fix the file's encoding" in f.error for f in failures)


def test_names_are_shown_literally_and_controls_refused(
    engine: Engine, database_url: str, cli: None, tmp_path: Path, capsys: Any
) -> None:
    docs = tmp_path / "docs.json"
    docs.write_text('[{"title": "A", "text": "Oslo is cold."}]', encoding="utf-8")
    name = "[red]rich[/red]"
    assert main(["index", str(docs), "--corpus", name, "--extractor", "synthetic"]) == 0
    assert f"corpus {name}" in capsys.readouterr().out
    assert main(["corpus", "list"]) == 0
    assert name in capsys.readouterr().out
    assert main(["stats", "--corpus", name]) == 0
    assert f"corpus {name}" in capsys.readouterr().out

    for bad in ("a\x1b[31mb", "two\nlines", "bidi\u202eeman"):
        assert main(["index", str(docs), "--corpus", bad, "--extractor", "synthetic"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: InvalidCorpusName: a corpus name cannot hold control")
        assert len(err.strip().splitlines()) == 1 and "\x1b" not in err
    with pytest.raises(InvalidCorpusName, match="U\\+0007 at offset 1"):
        ensure_corpus(engine, "a\ab", "hash")
    # A name stored before the check existed is still listed, its controls escaped.
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO corpora (name) VALUES ('old\x1b[2Jname')"))
    assert main(["corpus", "list"]) == 0
    listed = capsys.readouterr().out
    assert "old\\x1b[2Jname" in listed and "\x1b" not in listed


def test_secrets_of_a_database_url_are_masked(
    cli: None, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    url = f"postgresql://ann:{SECRET}@127.0.0.1:1/nowhere?sslmode=disable&password={SECRET}"
    monkeypatch.setenv("DATABASE_URL", url)
    assert main(["db", "url"]) == 0
    assert capsys.readouterr().out.strip() == (
        "postgresql://ann:***@127.0.0.1:1/nowhere?sslmode=disable&password=***"
    )
    assert main(["corpus", "list"]) == 1
    err = capsys.readouterr().err
    assert "cannot reach PostgreSQL at postgresql+psycopg://ann:***@127.0.0.1:1/nowhere?" in err
    assert "password=***" in err and SECRET not in err
    monkeypatch.setenv("DATABASE_URL", f"mysql://127.0.0.1/db?password={SECRET}")
    assert main(["corpus", "list"]) == 1
    err = capsys.readouterr().err
    assert "mysql://127.0.0.1/db?password=***" in err and SECRET not in err


async def test_view_keeps_an_existing_out_file_unless_forced(
    engine: Engine, database_url: str, cli: None, tmp_path: Path, capsys: Any
) -> None:
    thread = f"view-{uuid.uuid4().hex[:8]}"
    rules = chain_rules(build_corpus(engine))
    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(services(engine, database_url, rules), saver)
        await graph.ainvoke(
            {"question": QUESTION},
            {"configurable": {"thread_id": thread}},
            context=GraspContext(corpus="films", **PAPER_VOTE),
        )
    out = tmp_path / "page.html"
    out.write_text("my notes", encoding="utf-8")
    from graphs.cli.main import build_parser

    args = build_parser().parse_args(["view", thread, "--out", str(out)])
    assert await args.handler(args) == 1
    assert capsys.readouterr().err.strip() == (
        f"error: {out} already exists; add --force to overwrite it"
    )
    assert out.read_text(encoding="utf-8") == "my notes"
    args = build_parser().parse_args(["view", thread, "--out", str(out), "--force"])
    assert await args.handler(args) == 0
    assert out.read_text(encoding="utf-8").startswith("<!")


async def test_progress_says_what_it_waits_on(engine: Engine, database_url: str) -> None:
    progress = IndexProgress()
    progress.update("register_passages", {"batches": [[{}] * 2], "counters": {}})
    assert progress.detail == "0 already indexed"
    progress.update("index_batch", {"counters": {"passages_done": 2}})
    assert (
        progress.detail
        == "done 2 · failed 0 · waiting on passage vectors, unit index, entity linking"
    )
    progress.custom({"event": "passage_vectors", "stored": 512, "total": 1000})
    assert "waiting on passage vectors 512/1000, unit index" in progress.detail
    progress.update("build_unit_index", {})
    progress.update("link_entities", {})
    assert progress.detail.endswith("waiting on passage vectors 512/1000")
    progress.update("embed_passages", {})
    assert progress.detail == "done 2 · failed 0 · building the passage index"

    # The graph reports the passage vectors as they are stored.
    from graphs.models.scripted_model import ScriptedChatModel
    from tests.graph.test_index_graph import services as index_services

    graph = build_index_graph(index_services(engine, database_url, ScriptedChatModel(rules=[])))
    passages = [{"title": f"P{n}", "text": f"Town{n} is near Oslo."} for n in range(600)]
    events = [
        chunk
        async for chunk in graph.astream(
            {"corpus": "progress", "passages": passages},
            context=IndexContext(extractor="synthetic"),
            stream_mode="custom",
        )
    ]
    assert events == [
        {"event": "passage_vectors", "stored": 512, "total": 600},
        {"event": "passage_vectors", "stored": 600, "total": 600},
    ]


def test_a_full_disk_is_named_as_such(
    fresh_database: str, cli: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """PostgreSQL's own disk-full error (SQLSTATE 53100), raised where a write would extend."""
    migrate(fresh_database)
    full = make_engine(fresh_database, pool_size=1)
    with full.begin() as conn:
        conn.execute(
            text("""
            CREATE FUNCTION no_space() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'could not extend file "base/1/2": No space left on device'
                    USING ERRCODE = 'disk_full', HINT = 'Check free disk space.';
            END $$;
            CREATE TRIGGER full_disk BEFORE INSERT ON passages
                FOR EACH STATEMENT EXECUTE FUNCTION no_space();
            """)
        )
    full.dispose()
    monkeypatch.setenv("DATABASE_URL", fresh_database)
    docs = tmp_path / "docs.json"
    docs.write_text('[{"title": "A", "text": "Oslo is cold."}]', encoding="utf-8")
    assert main(["index", str(docs), "--corpus", "c", "--extractor", "synthetic"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        'error: the database\'s disk is full: could not extend file "base/1/2": No space left '
        "on device; free space where it keeps its data (`grasp db url` shows which database), "
        "then run the same command again"
    )


async def test_the_index_graph_reads_no_file(engine: Engine, database_url: str) -> None:
    """A served client's `source_path` is no input of the graph: nothing is read or removed."""
    await index(engine, database_url, "c", [("A", "Oslo is cold.")], source="/srv/a.json")
    with pytest.raises(ValueError, match="the index graph takes its passages in the input"):
        await index(engine, database_url, "c", None, source_path="/etc/passwd")
    assert [row[:3] for row in snapshot(engine, "c")["passages"]] == [
        ("A", "Oslo is cold.", "done")
    ]


async def test_the_graphs_check_the_served_user_themselves(
    engine: Engine, database_url: str
) -> None:
    """Behind the server's request check, the graphs refuse by the run's user too."""
    from graphs.models.scripted_model import ScriptedChatModel
    from graphs.runtime.wiring import CorpusNotAllowed, NotAnAdmin
    from tests.graph.test_index_graph import services as index_services

    graph = build_index_graph(index_services(engine, database_url, ScriptedChatModel(rules=[])))
    passages = [{"title": "A", "text": "Oslo is cold."}]
    given: IndexInput = {"corpus": "films", "passages": passages}

    def as_user(admin: bool) -> RunnableConfig:
        user = {"identity": "bob", "admin": admin, "corpora": ["papers"]}
        return {"configurable": {"langgraph_auth_user": user}}

    synthetic = IndexContext(extractor="synthetic")
    with pytest.raises(NotAnAdmin, match="indexing is for admins on this server"):
        await graph.ainvoke(given, as_user(False), context=synthetic)
    with pytest.raises(CorpusNotAllowed, match="corpus 'films' is not open to user 'bob'"):
        await graph.ainvoke(given, as_user(True), context=synthetic)
    papers: IndexInput = {"corpus": "papers", "passages": passages}
    summary = await graph.ainvoke(papers, as_user(True), context=synthetic)
    assert summary["summary"]["passages_done"] == 1
