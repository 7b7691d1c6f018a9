"""Reading a corpus to index from HippoRAG JSON, JSON lines, or a folder of .txt/.md files.

A folder is read without leaving it: a symbolic link is followed only when it leads to a file
inside the folder; links leading out of it (or nowhere) are skipped unopened, and
`links_leaving` counts them without saying where they point or whether that exists. A folder's
file that is not UTF-8 (binary, UTF-16) does not stop the folder: it is read with its bad bytes
kept as lone surrogates, so the indexer records that passage as failed and indexes the rest.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TEXT_SUFFIXES = frozenset({".txt", ".md"})
JSON_LINES_SUFFIXES = frozenset({".jsonl", ".ndjson"})


@dataclass(frozen=True)
class SourcePassage:
    """One passage of a corpus as read from disk, before any indexing.

    `file`: a folder's passage's file, relative to the folder (POSIX separators); None for a
    passage of a corpus file.
    """

    title: str
    text: str
    file: str | None = None


class CorpusFormatError(ValueError):
    """A corpus file or folder that cannot be read as any supported format."""


def join_sentences(sentences: Sequence[str]) -> str:
    """Join a passage's sentences with single spaces (HotpotQA/2Wiki sentence lists)."""
    # HotpotQA sentences carry a leading space but a few do not; stripping first makes the
    # join the same whichever convention a file follows, so gold passages and corpus agree.
    return " ".join(part for part in (s.strip() for s in sentences) if part)


def passage_match_key(title: str, text: str) -> tuple[str, str]:
    """Key that identifies a passage by title and text, insensitive to whitespace runs."""
    return title.strip(), " ".join(text.split())


def read_corpus(path: Path) -> list[SourcePassage]:
    """Read every passage of the corpus at `path`, in file order; empty texts are kept."""
    path = Path(path)
    if path.is_dir():
        return _read_folder(path)
    if not path.exists():
        raise FileNotFoundError(f"corpus not found: {path}")
    if path.suffix.lower() in JSON_LINES_SUFFIXES:
        return _non_empty(_read_json_lines(path), path)
    if path.suffix.lower() == ".json":
        return _non_empty(_read_json(path), path)
    raise CorpusFormatError(
        f"{path}: unsupported corpus file; expected .json, .jsonl or a folder of .txt/.md files"
    )


def _non_empty(passages: list[SourcePassage], path: Path) -> list[SourcePassage]:
    # An empty file is a mistake (wrong file, failed export), never a corpus to index.
    if not passages:
        raise CorpusFormatError(f"{path}: no passages in the file")
    return passages


def _read_text(path: Path) -> str:
    try:
        # utf-8-sig tolerates the byte-order mark some editors write.
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CorpusFormatError(f"{path}: not valid UTF-8 ({exc.reason})") from exc


def _read_lenient(path: Path) -> str:
    """A folder file's text; bytes that are not UTF-8 become lone surrogates (see the module)."""
    return path.read_bytes().decode("utf-8", errors="surrogateescape").removeprefix("\ufeff")


def _passage_from_object(obj: Any, where: str) -> SourcePassage:
    if not isinstance(obj, dict):
        raise CorpusFormatError(f"{where}: expected an object with 'title' and 'text'")
    missing = [key for key in ("title", "text") if key not in obj]
    if missing:
        raise CorpusFormatError(f"{where}: missing {', '.join(repr(k) for k in missing)}")
    title, text = obj["title"], obj["text"]
    if not isinstance(title, str) or not isinstance(text, str):
        raise CorpusFormatError(f"{where}: 'title' and 'text' must be strings")
    return SourcePassage(title=title.strip(), text=text.strip())


def _read_json(path: Path) -> list[SourcePassage]:
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise CorpusFormatError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    except RecursionError as exc:
        raise CorpusFormatError(f"{path}: JSON nested too deeply to be a corpus") from exc
    if isinstance(data, list):
        return [_passage_from_object(obj, f"{path}: entry {i}") for i, obj in enumerate(data)]
    if isinstance(data, dict):
        if "title" in data and "text" in data and not isinstance(data["text"], list):
            raise CorpusFormatError(
                f"{path}: one {{title, text}} object; a corpus is a list of them: "
                "wrap it in [ ] (or write one object per line in a .jsonl file)"
            )
        return [_passage_from_sentences(title, value, path) for title, value in data.items()]
    raise CorpusFormatError(
        f"{path}: expected a list of {{title, text}} objects or a dict title -> sentences"
    )


def _passage_from_sentences(title: str, value: Any, path: Path) -> SourcePassage:
    # HippoRAG v1 corpora map each title to the passage's list of sentences.
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise CorpusFormatError(f"{path}: title {title!r}: expected a list of sentence strings")
    return SourcePassage(title=title.strip(), text=join_sentences(value))


def iter_json_lines(path: Path, error: type[ValueError] = ValueError) -> Iterator[tuple[str, Any]]:
    """Yield (location, parsed object) per non-blank line; bad JSON raises `error` naming the line."""
    # Split at newlines only: str.splitlines also breaks at U+2028 and friends, which JSON
    # strings may hold unescaped.
    for lineno, line in enumerate(_read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {lineno}"
        try:
            yield where, json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{where}: invalid JSON: {exc.msg}") from exc
        except RecursionError as exc:
            raise error(f"{where}: JSON nested too deeply") from exc


def _read_json_lines(path: Path) -> list[SourcePassage]:
    return [
        _passage_from_object(obj, where) for where, obj in iter_json_lines(path, CorpusFormatError)
    ]


def _is_corpus_file(folder: Path, path: Path) -> bool:
    # Hidden files and folders (.git, editor backups) are never corpus content.
    relative = path.relative_to(folder)
    return path.suffix.lower() in TEXT_SUFFIXES and not any(
        part.startswith(".") for part in relative.parts
    )


def _folder_files(folder: Path) -> tuple[list[Path], int]:
    """The folder's corpus files in name order, and how many links leading out were skipped.

    Linked folders are not entered (a link's files inside the folder are reached on their
    own path), and a linked file counts only when its target lies inside the folder.
    """
    inside = folder.resolve()
    files: list[Path] = []
    skipped = 0
    for root, _, names in os.walk(folder, followlinks=False):
        for name in names:
            path = Path(root) / name
            if not _is_corpus_file(folder, path):
                continue
            if path.is_symlink():
                target = path.resolve()
                if not target.is_relative_to(inside) or not target.is_file():
                    skipped += 1
                    continue
            elif not path.is_file():
                continue
            files.append(path)
    return sorted(files, key=lambda p: p.relative_to(folder).as_posix()), skipped


def links_leaving(folder: Path) -> int:
    """How many linked corpus files of the folder lead out of it (or nowhere) and are skipped."""
    return _folder_files(Path(folder))[1] if Path(folder).is_dir() else 0


def _read_folder(folder: Path) -> list[SourcePassage]:
    files, _ = _folder_files(folder)
    if not files:
        raise CorpusFormatError(f"{folder}: no .txt or .md files found")
    return [
        SourcePassage(
            title=p.stem.strip(),
            text=_read_lenient(p).strip(),
            file=p.relative_to(folder).as_posix(),
        )
        for p in files
    ]
