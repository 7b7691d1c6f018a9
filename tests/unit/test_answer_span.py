"""The final answer's span: a closing parenthetical aside is dropped by every reader."""

import pytest

from nodes.agent.synthesize import SynthesisReply
from nodes.peers.answer import AnswerReply, without_aside
from nodes.peers.cot import ThoughtReply


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("6.8 inches (17.3 cm)", "6.8 inches"),
        ("  Paris (France) ", "Paris"),
        ("Socialist Party of Austria (SPÖ)", "Socialist Party of Austria"),
        # Only the last aside goes, and only at the very end.
        ("Mary (Queen of Scots) Stuart", "Mary (Queen of Scots) Stuart"),
        ("Henry (the Young King) (England)", "Henry (the Young King)"),
        # Nothing would be left: the reply is kept as it is.
        ("(1987)", "(1987)"),
        # An unclosed or nested bracket is not an aside we can cut cleanly.
        ("Lisbon (Portugal", "Lisbon (Portugal"),
        ("B-29 (Boeing (US))", "B-29 (Boeing (US))"),
        ("Victoria Falls", "Victoria Falls"),
        ("", ""),
    ],
)
def test_without_aside(reply: str, answer: str) -> None:
    assert without_aside(reply) == answer


def test_every_answer_reply_shape_drops_the_aside() -> None:
    assert AnswerReply.model_validate({"answer": "6.8 inches (17.3 cm)"}).answer == "6.8 inches"
    synthesis = SynthesisReply.model_validate({"answer": "Hank Snow (singer)", "justification": ""})
    assert synthesis.answer == "Hank Snow"
    thought = ThoughtReply.model_validate(
        {"thought": "Snow lived in Madison (Tennessee).", "done": True, "answer": "Madison (TN)"}
    )
    # The thought is a search query, not an answer: it keeps its words.
    assert (thought.thought, thought.answer) == ("Snow lived in Madison (Tennessee).", "Madison")
