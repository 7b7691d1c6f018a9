"""The chat form of a run, shared by GRASP and the peers: messages in, one AI message out.

A client sends `{"messages": [...]}` (LangGraph's chat convention) or `{"question": …}`; the
turn's question is the last message when it is a human one no answer follows yet, else the
`question` input (then a human message is appended for it, so a thread is its messages either
way). The answer comes back as an AI message whose text block carries the citations as
LangChain standard `citation` annotations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage
from langchain_core.messages.content import Citation as CitationAnnotation

from nodes.citations.attribution import Citation

#: The text of an answer message when the run gave no answer.
NO_ANSWER = "(no answer)"


def turn_question(state: Mapping[str, Any]) -> tuple[str, list[AnyMessage]]:
    """The turn's question (stripped) and the human message to append for it, if any."""
    messages: Sequence[AnyMessage] = state.get("messages") or []
    if messages and isinstance(messages[-1], HumanMessage):
        return messages[-1].text.strip(), []
    question = str(state.get("question") or "").strip()
    return question, [HumanMessage(question)] if question else []


def earlier_exchanges(messages: Sequence[AnyMessage]) -> list[tuple[str, str]]:
    """(question, answer) of each human message answered by the AI message after it.

    A human message still waiting for its answer (the turn being asked) is left out.
    """
    pairs: list[tuple[str, str]] = []
    asked: str | None = None
    for message in messages:
        if isinstance(message, HumanMessage):
            asked = message.text.strip()
        elif isinstance(message, AIMessage) and asked is not None and message.text.strip():
            pairs.append((asked, message.text.strip()))
            asked = None
    return pairs


def conversation_history(
    state: Mapping[str, Any], turns: Sequence[Mapping[str, Any]]
) -> list[tuple[str, str]]:
    """The earlier turns' (question, answer) pairs: from the messages, else from `turns`.

    `turns` stands for a thread begun before it had messages (its turns are not in them).
    """
    pairs = earlier_exchanges(state.get("messages") or [])
    if len(pairs) >= len(turns):
        return pairs
    return [(str(t["question"]), str(t["answer"])) for t in turns]


def citation_annotation(number: int, citation: Citation, answer_chars: int) -> CitationAnnotation:
    """Citation `number` as a standard annotation over the whole answer text.

    Where the passage came from and what GRASP knows of it (hop, round, verified) go in
    `extras`; `url` is set only when the source is a web address.
    """
    source = citation["source"]
    annotation = CitationAnnotation(
        type="citation",
        id=f"source-{number}",
        title=citation["title"],
        cited_text=citation["text"],
        start_index=0,
        end_index=answer_chars,
        extras={
            "number": number,
            "passage_id": citation["passage_id"],
            "source": source,
            "hop": citation["hop"],
            "round": citation["round"],
            "verified": citation["verified"],
        },
    )
    if source.startswith(("http://", "https://")):
        annotation["url"] = source
    return annotation


def answer_message(answer: str, citations: Sequence[Citation]) -> AIMessage:
    """The turn's reply: one text block, the answer, annotated with its citations."""
    text = answer.strip() or NO_ANSWER
    annotations = [citation_annotation(n, c, len(text)) for n, c in enumerate(citations, 1)]
    block: dict[str, Any] = {"type": "text", "text": text, "annotations": annotations}
    return AIMessage(content=[block], response_metadata={"output_version": "v1"})


def given_question(given: Mapping[str, Any]) -> str:
    """The question a run's input asked: its `question`, else its last message's text.

    Reads an input as a checkpoint keeps it, where a message may still be the client's dict
    (`{"role": "user", "content": …}`).
    """
    if given.get("question"):
        return str(given["question"])
    messages = given.get("messages") or []
    if not messages:
        return ""
    last = messages[-1]
    if isinstance(last, BaseMessage):
        return last.text
    content = last.get("content", "") if isinstance(last, Mapping) else last
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, Mapping))
    return str(content)
