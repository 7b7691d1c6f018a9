"""Question and LongBench file formats on small hand-written files: records, splits, errors."""

import json
from pathlib import Path

import pytest

from evals.loaders import (
    GoldPassage,
    GoldPassageMissing,
    LongBenchSample,
    QAExample,
    QuestionFormatError,
    SubQuestion,
    load_longbench,
    load_questions,
    resolve_gold_passages,
    split_longbench_context,
    substitute_placeholders,
)
from graphs.indexing.corpus_files import SourcePassage, passage_match_key


def _two_wiki_record(supporting: list[list[object]]) -> dict[str, object]:
    return {
        "_id": "q1",
        "type": "compositional",
        "question": "When did Lothair II's mother die?",
        "context": [
            ["Teutberga", ["Teutberga died in 875."]],
            ["Lothair II", ["Lothair II was a king.", "His mother was Ermengarde of Tours."]],
            ["Ermengarde of Tours", ["Ermengarde died on 20 March 851."]],
        ],
        "supporting_facts": supporting,
        "evidences": [],
        "answer": "20 March 851",
    }


def test_two_wiki_record(tmp_path: Path) -> None:
    path = tmp_path / "2wiki.json"
    facts: list[list[object]] = [["Ermengarde of Tours", 0], ["Lothair II", 1], ["Lothair II", 0]]
    path.write_text(json.dumps([_two_wiki_record(facts)]), encoding="utf-8")
    assert load_questions(path) == [
        QAExample(
            id="q1",
            question="When did Lothair II's mother die?",
            answers=["20 March 851"],
            gold_passages=[
                GoldPassage("Ermengarde of Tours", "Ermengarde died on 20 March 851."),
                GoldPassage(
                    "Lothair II", "Lothair II was a king. His mother was Ermengarde of Tours."
                ),
            ],
            decomposition=[],
            hops=None,
            dataset="2wikimultihopqa",
        )
    ]
    assert load_questions(path, dataset="custom")[0].dataset == "custom"


def test_question_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps([_two_wiki_record([["Nowhere", 0]])]), encoding="utf-8")
    with pytest.raises(QuestionFormatError, match=r"record 0 \(q1\): supporting fact titles"):
        load_questions(path)
    path.write_text(json.dumps([{"question": "?", "answer": "x"}]), encoding="utf-8")
    with pytest.raises(QuestionFormatError, match="neither 'paragraphs' nor 'context'"):
        load_questions(path)
    path.write_text(json.dumps({"not": "a list"}), encoding="utf-8")
    with pytest.raises(QuestionFormatError, match="expected a list"):
        load_questions(path)


def test_resolve_tolerates_whitespace_and_reports_missing() -> None:
    example = QAExample(
        id="2hop__1_2",
        question="?",
        answers=["x"],
        gold_passages=[GoldPassage("A", "alpha  beta\n"), GoldPassage("B", "gamma")],
        decomposition=[],
        hops=2,
        dataset="musique",
    )
    index = {passage_match_key("A", "alpha beta"): "k1", passage_match_key("B", "gamma"): "k2"}
    assert resolve_gold_passages(example, index) == ["k1", "k2"]
    del index[("B", "gamma")]
    with pytest.raises(GoldPassageMissing, match=r"question 2hop__1_2: gold passage 'B'"):
        resolve_gold_passages(example, index)


def test_substitute_placeholders_rejects_unknown_step() -> None:
    steps = [SubQuestion("Who wrote X?", "Ann"), SubQuestion("Where was #3 born?", "Oslo")]
    with pytest.raises(ValueError, match="#3"):
        substitute_placeholders(steps)
    assert substitute_placeholders([]) == []


def test_split_longbench_context() -> None:
    context = (
        "Passage 1:\nGrown Ups (film)\nGrown Ups is a film.\n\nPlot\nFriends meet.\n"
        "Passage 2:\nNotes\nSee Passage 7:\nabove.\n"
        "Passage 3:\nEmpty"
    )
    # "Passage 7:" is out of sequence, so it stays inside passage 2
    assert split_longbench_context(context) == [
        SourcePassage("Grown Ups (film)", "Grown Ups is a film.\n\nPlot\nFriends meet."),
        SourcePassage("Notes", "See Passage 7:\nabove."),
        SourcePassage("Empty", ""),
    ]


def test_load_longbench(tmp_path: Path) -> None:
    path = tmp_path / "musique.jsonl"
    records = [
        {
            "input": "Who?",
            "context": "Passage 1:\nA\nalpha\nPassage 2:\nB\nbeta",
            "answers": ["Ann", "Ann"],
            "length": 12,
            "dataset": "musique",
            "_id": "abc",
        },
        {
            "input": "Where?",
            "context": "Passage 1:\nC\ngamma",
            "answers": ["Oslo"],
            "length": 3,
            "_id": "def",
        },
    ]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n\n", encoding="utf-8")
    assert load_longbench(path) == [
        LongBenchSample(
            id="abc",
            question="Who?",
            answers=["Ann"],
            passages=[SourcePassage("A", "alpha"), SourcePassage("B", "beta")],
            length=12,
            dataset="musique",
        ),
        LongBenchSample(
            id="def",
            question="Where?",
            answers=["Oslo"],
            passages=[SourcePassage("C", "gamma")],
            length=3,
            dataset="musique",
        ),
    ]


@pytest.mark.parametrize(
    ("second_line", "message"),
    [
        ("{not json", r"bad\.jsonl: line 2: invalid JSON"),
        (
            '{"input": "?", "context": "A\\nB", "answers": ["x"], "length": 1, "_id": "i"}',
            r"bad\.jsonl: line 2: context does not start with 'Passage 1:'",
        ),
        (
            '{"input": "?", "context": "Passage 1:\\nA\\nB", "answers": [], "length": 1}',
            r"bad\.jsonl: line 2: 'answers' must be a non-empty list",
        ),
        (
            '{"context": "Passage 1:\\nA\\nB", "answers": ["x"], "length": 1, "_id": "i"}',
            r"bad\.jsonl: line 2: missing 'input'",
        ),
    ],
)
def test_longbench_errors_name_the_line(tmp_path: Path, second_line: str, message: str) -> None:
    good = {"input": "?", "context": "Passage 1:\nA\nB", "answers": ["x"], "length": 1, "_id": "g"}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(good) + "\n" + second_line + "\n", encoding="utf-8")
    with pytest.raises(QuestionFormatError, match=message):
        load_longbench(path)
