import json
from pathlib import Path

import pytest

from graphs.indexing.corpus_files import (
    CorpusFormatError,
    SourcePassage,
    join_sentences,
    passage_match_key,
    read_corpus,
)

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def test_join_sentences_uses_single_spaces() -> None:
    # HotpotQA style: later sentences start with a space, one does not
    assert join_sentences(["First.", " Second.", "Third.", "  "]) == "First. Second. Third."
    assert join_sentences([]) == ""


def test_passage_match_key_ignores_whitespace_runs() -> None:
    assert passage_match_key(" Title ", "a  b\n\tc ") == ("Title", "a b c")


def test_read_list_json(tmp_path: Path) -> None:
    path = tmp_path / "corpus.json"
    entries = [
        {"title": " A ", "text": " alpha \n", "idx": 0},
        {"title": "B", "text": "   "},
    ]
    path.write_text(json.dumps(entries), encoding="utf-8")
    # whitespace is stripped, empty texts are kept for the indexer to report
    assert read_corpus(path) == [SourcePassage("A", "alpha"), SourcePassage("B", "")]


def test_read_title_to_sentences_json(tmp_path: Path) -> None:
    path = tmp_path / "v1.json"
    path.write_text(json.dumps({"Demon": ["One.", " Two."], "Empty": []}), encoding="utf-8")
    assert read_corpus(path) == [SourcePassage("Demon", "One. Two."), SourcePassage("Empty", "")]


def test_read_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        '{"title": "A", "text": "alpha"}\n\n{"title": "B", "text": "beta", "extra": 1}\n',
        encoding="utf-8",
    )
    assert read_corpus(path) == [SourcePassage("A", "alpha"), SourcePassage("B", "beta")]


def test_read_folder_recursive_sorted(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("  bee\n", encoding="utf-8")
    (tmp_path / "a.md").write_text("# Ay\n\nbody", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.TXT").write_text("sea", encoding="utf-8")
    (tmp_path / "notes.csv").write_text("ignored", encoding="utf-8")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "d.txt").write_text("ignored", encoding="utf-8")
    assert read_corpus(tmp_path) == [
        SourcePassage("a", "# Ay\n\nbody", "a.md"),
        SourcePassage("b", "bee", "b.txt"),
        SourcePassage("c", "sea", "sub/c.TXT"),
    ]


def test_empty_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusFormatError, match="no .txt or .md files"):
        read_corpus(tmp_path)


def test_json_lines_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"title": "A", "text": "a"}\n{"title": "B"\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"bad\.jsonl: line 2: invalid JSON"):
        read_corpus(path)
    path.write_text('{"title": "A", "text": "a"}\n\n{"title": "B"}\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"bad\.jsonl: line 3: missing 'text'"):
        read_corpus(path)
    path.write_text('["A", "a"]\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"line 1: expected an object"):
        read_corpus(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[{"title": "A", "text": "a"},', r"bad\.json: invalid JSON at line 1"),
        ('[{"title": "A", "text": 3}]', r"bad\.json: entry 0: 'title' and 'text' must be strings"),
        ('[{"text": "a"}]', r"bad\.json: entry 0: missing 'title'"),
        ('{"A": "not a list"}', r"bad\.json: title 'A': expected a list of sentence strings"),
        ('"just a string"', r"bad\.json: expected a list of \{title, text\} objects"),
    ],
)
def test_json_errors_name_the_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=message):
        read_corpus(path)


def test_unsupported_and_missing_paths(tmp_path: Path) -> None:
    other = tmp_path / "corpus.csv"
    other.write_text("title,text\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="unsupported corpus file"):
        read_corpus(other)
    with pytest.raises(FileNotFoundError):
        read_corpus(tmp_path / "absent.json")
    bad_utf8 = tmp_path / "latin.jsonl"
    bad_utf8.write_bytes(b'{"title": "caf\xe9", "text": "x"}\n')
    with pytest.raises(CorpusFormatError, match="not valid UTF-8"):
        read_corpus(bad_utf8)


@pytest.mark.parametrize(
    ("name", "count"),
    [
        ("musique_train_corpus.json", 1890),
        ("hotpotqa_train_corpus.json", 994),
        ("2wikimultihopqa_corpus.json", 6119),
        ("sample_corpus.json", 3),
    ],
)
def test_shared_corpora_sizes(name: str, count: int) -> None:
    passages = read_corpus(DATA / name)
    assert len(passages) == count
    # every passage is distinct by title + text, though MuSiQue repeats titles
    assert len({passage_match_key(p.title, p.text) for p in passages}) == count


def test_shared_corpora_first_passages() -> None:
    assert read_corpus(DATA / "2wikimultihopqa_corpus.json")[0] == SourcePassage(
        "Teutberga",
        "Teutberga( died 11 November 875) was a queen of Lotharingia by marriage to Lothair II. "
        "She was a daughter of Bosonid Boso the Elder and sister of Hucbert, the lay- abbot of "
        "St. Maurice's Abbey.",
    )
    hotpot = read_corpus(DATA / "hotpotqa_train_corpus.json")
    assert hotpot[0].title == "Demon Dice"
    assert hotpot[0].text.startswith(
        "Demon Dice, originally published as Chaos Progenitus, is a collectible dice game "
        "created by Lester Smith (designer of the better-known Dragon Dice) and Tim Brown. "
        "In it, each player controls a demon"
    )
    musique = read_corpus(DATA / "musique_train_corpus.json")
    assert len({p.title for p in musique}) == 1764
