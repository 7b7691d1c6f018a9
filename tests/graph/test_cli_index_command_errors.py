"""`grasp index` on bad passages, files, arguments and provider errors: one bad passage never
blocks the rest, its reason is recorded and listed, and the exit code says something failed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from graphs.cli.main import main
from graphs.models.scripted_model import ScriptedReply
from store.corpora import CorpusNotFound, corpus_id
from store.engine import transaction
from store.failures import list_failures
from store.models import ExtractionFailure, Passage

REPO = Path(__file__).resolve().parents[2]
GOOD = [
    {"title": "Alpha", "text": "Alpha lives in Oslo. Alpha paints."},
    {"title": "Beta", "text": "Beta lives in Rome."},
]


def cli_env(database_url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "GRASP_EMBEDDER": "hash",
        "GRASP_DATA_DIR": str(tmp_path / "data"),
        "COLUMNS": "80",  # a narrow terminal: long lines must still come out whole
        **extra,
    }


def grasp(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graphs.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def grasp_many(env: dict[str, str], commands: Sequence[Sequence[str]]) -> list[tuple[int, str]]:
    """Run independent commands side by side (each pays the interpreter start once, in parallel)."""
    running = [
        subprocess.Popen(
            [sys.executable, "-m", "graphs.cli", *args],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in commands
    ]
    results = []
    for process in running:
        _, err = process.communicate(timeout=120)
        results.append((process.returncode, err))
    return results


@pytest.fixture
def env_vars(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The test database and offline models, for in-process `main()` and for subprocesses."""
    env = cli_env(database_url, tmp_path)
    for key in ("DATABASE_URL", "GRASP_EMBEDDER", "GRASP_DATA_DIR", "COLUMNS"):
        monkeypatch.setenv(key, env[key])
    return env


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`grasp ARGS` in this process (no interpreter start): exit code, stdout, stderr."""
    try:
        code = main(list(args))
    except SystemExit as exit_:  # argparse's refusals
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def statuses(engine: Engine, corpus: str) -> dict[str, str]:
    with transaction(engine) as session:
        rows = session.execute(
            select(Passage.title, Passage.status).where(
                Passage.corpus_id == corpus_id(engine, corpus)
            )
        ).all()
    return {title: status for title, status in rows}


def failure_rows(engine: Engine) -> int:
    with transaction(engine) as session:
        return int(
            session.execute(select(func.count()).select_from(ExtractionFailure)).scalar_one()
        )


def test_nul_and_lone_surrogate_fail_their_passage_only(
    engine: Engine, env_vars: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "docs.json"
    # json.dumps writes "\u0000" and "\ud800" escapes: valid JSON, not storable text.
    bad = [
        {"title": "Nul", "text": "Gamma lives\u0000 in Bern."},
        {"title": "Surrogate", "text": "Delta lives in Riga \ud800."},
    ]
    path.write_text(json.dumps([GOOD[0], *bad, GOOD[1]]))
    command = ["index", str(path), "--corpus", "c", "--extractor", "synthetic"]

    first = grasp(env_vars, *command)  # the real command: its exit code and its streams
    assert first.returncode == 1, first.stdout + first.stderr
    assert "Traceback" not in first.stderr
    assert "4 (2 done, 2 failed, 0 pending)" in first.stdout
    assert "2 passages failed: `grasp corpus failures c` lists why" in first.stdout
    assert statuses(engine, "c") == {
        "Alpha": "done",
        "Beta": "done",
        "Nul": "failed",
        "Surrogate": "failed",
    }
    reasons = {row.title: row.error for row in list_failures(engine, corpus_id(engine, "c"))}
    assert reasons == {
        "Nul": "unstorable passage: the text holds a NUL character (U+0000) at offset 11; "
        "remove it from the file",
        "Surrogate": "unstorable passage: the text holds a lone surrogate (U+D800) at offset "
        "20, which is not text; fix the file's encoding",
    }

    # Again, even with --retry-failed: the same passages, still one failure row each.
    code, out, _ = in_process(capsys, *command, "--retry-failed")
    assert code == 1
    assert "4 (2 done, 2 failed, 0 pending)" in out
    assert failure_rows(engine) == 2

    code, out, _ = in_process(capsys, "corpus", "failures", "c")
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 3
    assert lines[0].endswith("'Nul': " + reasons["Nul"])  # whole, though COLUMNS is 80
    assert lines[1].endswith("'Surrogate': " + reasons["Surrogate"])
    assert lines[2].startswith("2 failed passages; `grasp index PATH --corpus NAME --retry-failed`")

    code, out, _ = in_process(capsys, "stats", "--corpus", "c")
    assert code == 0
    assert "2 passages failed: `grasp corpus failures c` lists why" in out


def test_a_passage_over_spacys_limit_fails_alone(
    engine: Engine, env_vars: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = {"title": "Huge", "text": "x" * 1_050_000}
    path = tmp_path / "docs.json"
    path.write_text(json.dumps([GOOD[0], huge, GOOD[1]]))
    code, out, err = in_process(capsys, "index", str(path), "--corpus", "s", "--extractor", "spacy")
    assert code == 1, out + err
    assert "batch error" not in err
    assert "3 (2 done, 1 failed, 0 pending)" in out
    (failure,) = list_failures(engine, corpus_id(engine, "s"))
    assert failure.title == "Huge"
    assert failure.error == (
        "passage of 1,050,000 characters is over spaCy's limit of 1,000,000; "
        "split it into smaller passages"
    )


def test_bad_arguments_and_files_are_one_line_and_no_corpus(
    engine: Engine, env_vars: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GOOD))
    files = {
        "empty-list.json": ("[]", "no passages in the file"),
        "empty-dict.json": ("{}", "no passages in the file"),
        "empty.jsonl": ("\n\n", "no passages in the file"),
        "one.json": (
            json.dumps(GOOD[0]),
            "one {title, text} object; a corpus is a list of them: wrap it in [ ] "
            "(or write one object per line in a .jsonl file)",
        ),
    }
    for name, (content, _) in files.items():
        (tmp_path / name).write_text(content)
    base = ["index", str(good), "--corpus", "c", "--extractor", "synthetic"]
    arguments = {
        "--limit": ("-1", "argument --limit: must be 0 or more, got -1"),
        "--batch-size": ("-1", "argument --batch-size: must be 0 or more, got -1"),
        "--concurrency": ("-1", "argument --concurrency: must be 0 or more, got -1"),
        "--corpus": ("", "argument --corpus: a corpus needs a name, got an empty one"),
    }
    # Two real commands side by side: the exit code and stderr a user sees.
    (arg_code, arg_err), (file_code, file_err) = grasp_many(
        env_vars,
        [
            [*base, "--limit", "-1"],
            ["index", str(tmp_path / "empty-list.json"), "--corpus", "c"],
        ],
    )
    assert arg_code == 2 and arg_err.strip().splitlines()[-1].endswith(arguments["--limit"][1])
    assert file_code == 1
    assert file_err.strip().splitlines() == [
        f"error: {tmp_path / 'empty-list.json'}: no passages in the file"
    ]
    # The rest in this process: the same handlers, without an interpreter start each.
    for flag, (value, message) in arguments.items():
        code, _, err = in_process(capsys, *base, flag, value)
        assert code == 2 and err.strip().splitlines()[-1].endswith(message), err
    for name, (_, message) in files.items():
        code, _, err = in_process(capsys, "index", str(tmp_path / name), "--corpus", "c")
        assert code == 1
        assert err.strip().splitlines() == [f"error: {tmp_path / name}: {message}"]
    with pytest.raises(CorpusNotFound):
        corpus_id(engine, "c")  # nothing was created by any of them


def test_limit_keeps_exactly_the_first_passages(
    engine: Engine, env_vars: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "docs.json"
    path.write_text(json.dumps(GOOD))
    command = ["index", str(path), "--corpus", "c", "--extractor", "synthetic", "--limit", "1"]
    code, out, err = in_process(capsys, *command)
    assert code == 0, out + err
    assert statuses(engine, "c") == {"Alpha": "done"}


def test_provider_errors_leave_passages_pending_exit_1_and_print_whole_lines(
    engine: Engine,
    env_vars: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    reason = "400 the provider refused the request: " + "this explanation is long " * 6
    script = tmp_path / "rules.json"
    script.write_text(json.dumps([ScriptedReply(reply="", error=reason).model_dump()]))
    monkeypatch.setenv("GRASP_CHAT_MODEL", f"scripted:{script}")
    monkeypatch.setenv("GRASP_LLM_CACHE", "0")
    path = tmp_path / "docs.json"
    path.write_text(json.dumps(GOOD))
    code, out, err = in_process(capsys, "index", str(path), "--corpus", "p", "--extractor", "llm")
    assert code == 1, out + err
    errors = [line for line in err.splitlines() if line.startswith("batch error")]
    assert len(errors) == 1 and errors[0].rstrip().endswith(reason.strip()), err
    assert "2 passages are still pending" in out
    assert statuses(engine, "p") == {"Alpha": "pending", "Beta": "pending"}
