"""The question loaders and gold steps on the bundled MuSiQue, HotpotQA and sample files."""

from collections import Counter
from pathlib import Path

from evals.gold import gold_steps
from evals.loaders import (
    GoldPassage,
    load_questions,
    resolve_gold_passages,
    substitute_placeholders,
)
from graphs.indexing.corpus_files import passage_match_key, read_corpus

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
