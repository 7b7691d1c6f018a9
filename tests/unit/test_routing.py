import re

import pytest
from langgraph.runtime import Runtime
from langgraph.types import Send

from graphs.agent.context import GraspContext
from graphs.agent.graph import dispatch
from graphs.agent.state import GraspState, SubAgentState
from graphs.agent.subagent import after_evaluate, after_rewrite
from nodes.agent.plan_dag import build_dag
from nodes.prompt_blocks import cut as truncate
from store.scoring import adaptive_k


def runtime(**overrides: object) -> Runtime[GraspContext]:
    return Runtime(context=GraspContext(**overrides))  # type: ignore[arg-type]


def test_after_rewrite_goes_to_graph_search_or_dense_retrieval() -> None:
    assert after_rewrite({}, runtime()) == "search"
    assert after_rewrite({}, runtime(retrieval="dense")) == "gather_evidence"
    assert after_rewrite({}, Runtime(context=None)) == "search"  # no context: the defaults


@pytest.mark.parametrize(
    ("state", "overrides", "route"),
    [
        ({"decision": "DONE", "iteration": 1}, {}, "__end__"),
        ({"decision": "QUERY_AGAIN", "iteration": 2}, {}, "search"),
        ({"decision": "QUERY_AGAIN", "iteration": 3}, {}, "search"),
        ({"decision": "QUERY_AGAIN", "iteration": 4}, {}, "__end__"),
        ({"decision": "QUERY_AGAIN", "iteration": 2}, {"max_iterations": 1}, "__end__"),
        ({"decision": "QUERY_AGAIN", "iteration": 2}, {"retrieval": "dense"}, "gather_evidence"),
        ({}, {}, "__end__"),
    ],
)
def test_after_evaluate(state: SubAgentState, overrides: dict[str, object], route: str) -> None:
    assert after_evaluate(state, runtime(**overrides)) == route


def parent(answers: dict[int, str], *texts: str) -> GraspState:
    return GraspState(
        question="Q?", corpus_id=7, sub_questions=build_dag(list(texts)), answers=answers
    )


def test_dispatch_sends_independent_sub_questions_together() -> None:
    sends = dispatch(parent({}, "When was Ivo born?", "When was Lena born?"))
    assert sends == [
        Send(
            "sub_agent",
            {
                "question": "Q?",
                "corpus_id": 7,
                "index": 1,
                "sub_question": "When was Ivo born?",
                "final": True,
                "dependencies": [],
            },
        ),
        Send(
            "sub_agent",
            {
                "question": "Q?",
                "corpus_id": 7,
                "index": 2,
                "sub_question": "When was Lena born?",
                "final": True,
                "dependencies": [],
            },
        ),
    ]


def test_dispatch_runs_a_chain_in_order_with_answers_filled_in() -> None:
    texts = ("Who directed Blue Harbor?", "Where was #1 born?")
    first = dispatch(parent({}, *texts))
    assert isinstance(first, list) and [s.arg["index"] for s in first] == [1]
    # Hop 2 builds on hop 1: only hop 2 is final (with final_hops=read, left to the reader).
    assert first[0].arg["final"] is False
    second = dispatch(parent({1: "Tomas Reyd"}, *texts))
    assert second == [
        Send(
            "sub_agent",
            {
                "question": "Q?",
                "corpus_id": 7,
                "index": 2,
                "sub_question": "Where was Tomas Reyd born?",
                "final": True,
                "dependencies": [
                    {"sub_question": "Who directed Blue Harbor?", "answer": "Tomas Reyd"}
                ],
            },
        )
    ]
    assert dispatch(parent({1: "Tomas Reyd", 2: "Lisbon"}, *texts)) == "synthesize"


def test_adaptive_k_cuts_at_the_largest_gap() -> None:
    assert adaptive_k([0.9, 0.88, 0.5, 0.45]) == 2
    assert adaptive_k([0.9, 0.3, 0.29]) == 1
    assert adaptive_k([0.75, 0.5, 0.25]) == 1  # equal drops: the first one
    assert adaptive_k([0.7]) == 1
    assert adaptive_k([]) == 0
    scores = [float(100 - i) for i in range(25)] + [0.0]
    assert adaptive_k(scores, window=20) == 1  # the big drop at 30 is outside the window


def test_truncate() -> None:
    assert truncate("abcdef", 10) == "abcdef"
    assert truncate("abcdef", 4) == "abc…"
    assert truncate("abcdef", 0) == "abcdef"


def test_context_rejects_bad_values_clearly() -> None:
    with pytest.raises(ValueError, match="max_iterations must be at least 1, not 0"):
        GraspContext(max_iterations=0)
    with pytest.raises(
        ValueError, match=re.escape("evidence must be one of passages | propositions")
    ):
        GraspContext(evidence="sentences")  # type: ignore[arg-type]
    params = GraspContext(passage_scoring="uniform", k_passages=3).retrieval_params()
    assert (params.uniform_vote, params.k_passages, params.k_props) == (True, 3, 50)
