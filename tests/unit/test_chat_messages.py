"""The chat form's rules: which message is the question, what the planner sees, the reply's shape."""

from langchain_core.messages import AIMessage, HumanMessage

from graphs.agent.chat_messages import (
    answer_message,
    conversation_history,
    given_question,
    turn_question,
)
from nodes.citations.attribution import Citation

CITED = Citation(
    passage_id=4,
    title="Tomas Reyd",
    source="https://films.example/reyd",
    text="Tomas Reyd was born in Lisbon in 1950.",
    hop=None,
    round=None,
    verified=True,
)


def test_the_question_is_an_unanswered_last_human_message_else_the_question_input() -> None:
    waiting = [HumanMessage("Who?"), AIMessage("Reyd"), HumanMessage("  Where was he born? ")]
    assert turn_question({"messages": waiting, "question": "old"}) == ("Where was he born?", [])
    question, asked = turn_question({"messages": waiting[:2], "question": " Why? "})
    assert question == "Why?" and [m.text for m in asked] == ["Why?"]
    assert turn_question({}) == ("", [])


def test_the_planner_sees_answered_exchanges_or_the_turns_of_an_older_thread() -> None:
    messages = [
        HumanMessage("Who directed it?"),
        AIMessage("Tomas Reyd"),
        HumanMessage("unanswered, then asked again"),
        HumanMessage("Where was he born?"),
    ]
    assert conversation_history({"messages": messages}, []) == [("Who directed it?", "Tomas Reyd")]
    turns = [{"question": "a", "answer": "b"}, {"question": "c", "answer": "d"}]
    assert conversation_history({"messages": messages}, turns) == [("a", "b"), ("c", "d")]


def test_the_question_of_an_input_as_a_checkpoint_keeps_it() -> None:
    assert given_question({"question": "Q?"}) == "Q?"
    assert given_question({"messages": [{"role": "user", "content": "M?"}]}) == "M?"
    blocks = [{"type": "text", "text": "B"}, {"type": "text", "text": "?"}]
    assert given_question({"messages": [{"role": "user", "content": blocks}]}) == "B?"
    assert given_question({"messages": [HumanMessage("H?")]}) == "H?"
    assert given_question({}) == ""


def test_the_reply_is_one_text_block_with_a_citation_per_source() -> None:
    reply = answer_message(" Lisbon ", [CITED])
    assert reply.text == "Lisbon"
    assert reply.content_blocks == [
        {
            "type": "text",
            "text": "Lisbon",
            "annotations": [
                {
                    "type": "citation",
                    "id": "source-1",
                    "title": "Tomas Reyd",
                    "cited_text": "Tomas Reyd was born in Lisbon in 1950.",
                    "start_index": 0,
                    "end_index": 6,
                    "extras": {
                        "number": 1,
                        "passage_id": 4,
                        "source": "https://films.example/reyd",
                        "hop": None,
                        "round": None,
                        "verified": True,
                    },
                    "url": "https://films.example/reyd",  # a web source is the citation's url
                }
            ],
        }
    ]
    assert answer_message("", []).text == "(no answer)"
