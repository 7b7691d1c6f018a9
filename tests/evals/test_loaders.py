import json
from collections import Counter
from pathlib import Path

import pytest

from evals.gold import gold_steps
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
from graphs.indexing.corpus_files import SourcePassage, passage_match_key, read_corpus

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def _ids(corpus_file: str) -> dict[tuple[str, str], int]:
    passages = read_corpus(DATA / corpus_file)
    return {passage_match_key(p.title, p.text): i for i, p in enumerate(passages)}


def _index(corpus_file: str) -> dict[tuple[str, str], str]:
    passages = read_corpus(DATA / corpus_file)
    return {passage_match_key(p.title, p.text): f"p{i}" for i, p in enumerate(passages)}


def test_musique_train_counts() -> None:
    examples = load_questions(DATA / "musique_train.json")
    assert len(examples) == 100
    # counted independently from the raw JSON: id prefixes 2hop 68, 3hop1 24, 3hop2 3,
    # 4hop1 3, 4hop3 2 -> by hop count 68 / 27 / 5
    assert Counter(e.hops for e in examples) == {2: 68, 3: 27, 4: 5}
    assert {e.dataset for e in examples} == {"musique"}
    # one gold passage per hop: 68*2 + 27*3 + 5*4 = 237
    assert sum(len(e.gold_passages) for e in examples) == 237
    assert all(len(e.decomposition) == e.hops for e in examples)
    # answer_aliases lengths 0:72, 1:16, 2:6, 3:2, 4:1, 5:3, none duplicating the answer
    assert Counter(len(e.answers) for e in examples) == {1: 72, 2: 16, 3: 6, 4: 2, 5: 1, 6: 3}


def test_musique_first_example() -> None:
    first = load_questions(DATA / "musique_train.json")[0]
    assert first.id == "2hop__150763_14904"
    assert first.question == (
        "Who was the first president of the association which published "
        "Journal of Psychotherapy Integration?"
    )
    assert first.answers == ["G. Stanley Hall", "Stanley Hall"]
    assert [g.title for g in first.gold_passages] == [
        "Journal of Psychotherapy Integration",
        "Adolescence",
    ]
    assert [(s.question, s.answer) for s in first.decomposition] == [
        (
            "What company published Journal of Psychotherapy Integration?",
            "American Psychological Association",
        ),
        ("Who was the first president of #1 ?", "G. Stanley Hall"),
    ]
    # Each step keeps the paragraph its paragraph_support_idx names.
    assert [s.passage for s in first.decomposition] == first.gold_passages
    assert substitute_placeholders(first.decomposition) == [
        "What company published Journal of Psychotherapy Integration?",
        "Who was the first president of American Psychological Association ?",
    ]


def test_musique_gold_passages_follow_hop_order() -> None:
    examples = {e.id: e for e in load_questions(DATA / "musique_train.json")}
    four_hop = examples["4hop1__709382_146811_31223_91015"]
    # paragraph_support_idx 15, 14, 6, 16: hop order, not paragraph order
    assert [g.title for g in four_hop.gold_passages] == [
        "Hello Love (song)",
        "Hank Snow",
        "Tennessee",
        "Publix",
    ]
    assert substitute_placeholders(four_hop.decomposition) == [
        "Hello Love >> performer",
        "What city did Hank Snow live when he died?",
        "Which state borders Tennessee to the east?",
        "how many publix stores are in North Carolina",
    ]
    # two placeholders in one sub-question: #2 = White County, #1 = Arkansas
    assert substitute_placeholders(examples["3hop2__130734_798404_834843"].decomposition)[2] == (
        "Midway (near Pleasant Plains), White County , Arkansas >> country"
    )


def test_every_musique_gold_passage_is_in_its_corpus() -> None:
    index = _index("musique_train_corpus.json")
    examples = load_questions(DATA / "musique_train.json")
    resolved = [resolve_gold_passages(e, index) for e in examples]
    assert [len(keys) for keys in resolved] == [len(e.gold_passages) for e in examples]
    # 237 gold passages, 234 distinct: three passages serve two questions each
    assert len({key for keys in resolved for key in keys}) == 234
    # "Canon law" has two different gold paragraphs in the same question
    canon = next(e for e in examples if e.id == "2hop__6584_6587")
    assert [g.title for g in canon.gold_passages] == ["Canon law", "Canon law"]
    assert len(set(resolve_gold_passages(canon, index))) == 2


def test_hotpotqa_train() -> None:
    examples = load_questions(DATA / "hotpotqa_train.json")
    assert len(examples) == 100
    assert {e.hops for e in examples} == {2}
    assert {e.dataset for e in examples} == {"hotpotqa"}
    assert all(e.decomposition == [] for e in examples)
    first = examples[0]
    assert first.id == "5a77ec115542992a6e59dff7"
    assert first.answers == ["a spirit"]
    assert first.gold_passages[1] == GoldPassage(
        "Lilu (mythology)",
        "A lilu or lilû is a masculine Akkadian word for a spirit, related to Alû, demon.",
    )
    index = _index("hotpotqa_train_corpus.json")
    resolved = [resolve_gold_passages(e, index) for e in examples]
    # two distinct supporting titles per question, 200 distinct passages overall
    assert [len(keys) for keys in resolved] == [2] * 100
    assert len({key for keys in resolved for key in keys}) == 200


def test_sample_question() -> None:
    (example,) = load_questions(DATA / "sample.json")
    assert example.id == "sample/question_1.json"
    assert example.answers == ["Thomas C. Sudhof"]
    assert example.hops is None
    assert example.dataset == "sample"
    assert resolve_gold_passages(example, _index("sample_corpus.json")) == ["p0"]


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


def test_gold_steps_of_a_musique_decomposition() -> None:
    examples = {e.id: e for e in load_questions(DATA / "musique_train.json")}
    example = examples["4hop1__709382_146811_31223_91015"]
    index = _ids("musique_train_corpus.json")
    steps = gold_steps(example, index)
    assert [(s.hop, s.title, s.depends_on) for s in steps] == [
        (1, "Hello Love (song)", ()),
        (2, "Hank Snow", (1,)),
        (3, "Tennessee", (2,)),
        (4, "Publix", (3,)),
    ]
    assert [s.passage_id for s in steps] == resolve_gold_passages(example, index)
    # The last step also accepts the question's answer and aliases.
    assert steps[-1].answers[0] == example.decomposition[-1].answer
    assert set(example.answers) <= set(steps[-1].answers)
    assert steps[0].answers == (example.decomposition[0].answer,)


def test_gold_steps_from_supporting_titles_only() -> None:
    example = load_questions(DATA / "hotpotqa_train.json")[0]
    steps = gold_steps(example, {})  # a corpus without these passages: ids unknown
    assert [(s.title, s.passage_id, s.question, s.answers) for s in steps] == [
        ("Alû", None, None, ()),
        ("Lilu (mythology)", None, None, ()),
    ]
