import pytest

from evals.gold import gold_passage_ids
from evals.loaders import GoldPassage, GoldPassageMissing, QAExample, SubQuestion
from evals.retrieval_eval import (
    agentic_union,
    evaluate_retrieval,
    mean_recalls,
    queries_for,
)
from graphs.indexing.corpus_files import passage_match_key
from nodes.embedding import HashingEmbedder
from store.retrieval import FloatVector

GOLD_A = GoldPassage("Blue Harbor", "Blue Harbor was directed by  Tomas Reyd.")
GOLD_B = GoldPassage("Tomas Reyd", "Tomas Reyd was born in Lisbon.")
GOLD_C = GoldPassage("Lisbon", "Lisbon is the capital of Portugal.")
INDEX = {
    passage_match_key("Blue Harbor", "Blue Harbor was directed by Tomas Reyd."): 11,
    passage_match_key("Tomas Reyd", "Tomas Reyd was born in Lisbon."): 12,
    passage_match_key("Lisbon", "Lisbon is the capital of Portugal."): 13,
}

TWO_HOP = QAExample(
    id="2hop__1",
    question="Where was the director of Blue Harbor born?",
    answers=["Lisbon"],
    gold_passages=[GOLD_A, GOLD_B],
    decomposition=[
        SubQuestion("Who directed Blue Harbor?", "Tomas Reyd"),
        SubQuestion("Where was #1 born?", "Lisbon"),
    ],
    hops=2,
    dataset="musique",
)
THREE_HOP = QAExample(
    id="3hop__2",
    question="What country is the birthplace of the director of Blue Harbor the capital of?",
    answers=["Portugal"],
    gold_passages=[GOLD_A, GOLD_B, GOLD_C],
    decomposition=[
        SubQuestion("Who directed Blue Harbor?", "Tomas Reyd"),
        SubQuestion("Where was #1 born?", "Lisbon"),
        SubQuestion("#2 is the capital of which country?", "Portugal"),
    ],
    hops=3,
    dataset="musique",
)
NO_STEPS = QAExample(
    "q3", "Who directed Blue Harbor?", ["Tomas Reyd"], [GOLD_A], [], None, "hotpotqa"
)

# What the fake retriever returns per query, best first (ids 90+ are distractors).
RANKED = {
    TWO_HOP.question: [90, 11, 91, 92, 93, 12, 94, 95, 96, 97, 98, 99],
    THREE_HOP.question: [11, 90, 91, 92, 93, 94, 95, 96, 97, 13, 12, 98],
    NO_STEPS.question: [11],
    "Who directed Blue Harbor?": [11, 90, 91],
    "Where was Tomas Reyd born?": [90, 91, 92, 12],
    "Lisbon is the capital of which country?": [91, 92, 90, 93, 94, 95, 13],
}


def fake_retriever(calls: list[tuple[str, int]]):  # type: ignore[no-untyped-def]
    def retrieve(query: str, vector: FloatVector, k: int) -> list[int]:
        calls.append((query, k))
        return RANKED[query][:k]

    return retrieve


def test_gold_passages_resolve_by_title_and_text_ignoring_whitespace() -> None:
    assert gold_passage_ids(THREE_HOP, INDEX, "toy") == [11, 12, 13]


def test_a_gold_passage_missing_from_the_corpus_is_a_clear_error() -> None:
    missing = QAExample("x", "q", ["a"], [GoldPassage("Nowhere", "Not indexed.")], [], 2, "musique")
    with pytest.raises(GoldPassageMissing) as info:
        gold_passage_ids(missing, INDEX, "toy")
    assert str(info.value) == (
        "question x: gold passage 'Nowhere' is not in the corpus 'toy'; was it indexed from "
        "this split's corpus file (and without --limit)?"
    )


def test_agentic_queries_substitute_earlier_answers() -> None:
    assert queries_for(THREE_HOP, "agentic") == [
        "Who directed Blue Harbor?",
        "Where was Tomas Reyd born?",
        "Lisbon is the capital of which country?",
    ]
    assert queries_for(THREE_HOP, "single") == [THREE_HOP.question]


def test_agentic_union_keeps_order_and_drops_repeats() -> None:
    assert agentic_union([[1, 2, 3], [2, 4, 5], [6]], 2) == [1, 2, 4, 6]


def test_single_pass_recall() -> None:
    calls: list[tuple[str, int]] = []
    run = evaluate_retrieval(
        [TWO_HOP, THREE_HOP], INDEX, "toy", fake_retriever(calls), HashingEmbedder(), "single", "f"
    )
    assert calls == [(TWO_HOP.question, 10), (THREE_HOP.question, 10)]
    assert [r["recall"] for r in run.records] == [
        {"2": 0.5, "5": 0.5, "10": 1.0},
        {"2": 1 / 3, "5": 1 / 3, "10": 2 / 3},
    ]
    assert run.records[0]["gold"] == [11, 12]
    assert mean_recalls(run.records) == {
        "all": {"n": 2.0, "2": (0.5 + 1 / 3) / 2, "5": (0.5 + 1 / 3) / 2, "10": (1 + 2 / 3) / 2},
        "2hop": {"n": 1.0, "2": 0.5, "5": 0.5, "10": 1.0},
        "3hop": {"n": 1.0, "2": 1 / 3, "5": 1 / 3, "10": 2 / 3},
    }


def test_simulated_agentic_recall_takes_k_per_sub_question() -> None:
    calls: list[tuple[str, int]] = []
    run = evaluate_retrieval(
        [TWO_HOP, THREE_HOP, NO_STEPS],
        INDEX,
        "toy",
        fake_retriever(calls),
        HashingEmbedder(),
        "agentic",
        "f",
    )
    assert run.skipped == ["q3"]
    assert [q for q, _ in calls] == [
        "Who directed Blue Harbor?",
        "Where was Tomas Reyd born?",
        "Who directed Blue Harbor?",
        "Where was Tomas Reyd born?",
        "Lisbon is the capital of which country?",
    ]
    # 2-hop: k=2 → {11, 90} ∪ {90, 91}: 1 of 2; k=5 adds 12 (4th of sub-question 2).
    # 3-hop: 13 is 7th for its sub-question, so only k=10 finds all three.
    assert [r["recall"] for r in run.records] == [
        {"2": 0.5, "5": 1.0, "10": 1.0},
        {"2": 1 / 3, "5": 2 / 3, "10": 1.0},
    ]


def test_single_wide_gets_k_times_the_sub_questions() -> None:
    calls: list[tuple[str, int]] = []
    run = evaluate_retrieval(
        [TWO_HOP, THREE_HOP],
        INDEX,
        "toy",
        fake_retriever(calls),
        HashingEmbedder(),
        "single-wide",
        "f",
    )
    assert calls == [(TWO_HOP.question, 20), (THREE_HOP.question, 30)]
    # 2-hop: k=2 → top 4 holds 11; k=5 → top 10 holds 12 too. 3-hop: top 6 holds only 11,
    # top 15 holds all three.
    assert [r["recall"] for r in run.records] == [
        {"2": 0.5, "5": 1.0, "10": 1.0},
        {"2": 1 / 3, "5": 1.0, "10": 1.0},
    ]
