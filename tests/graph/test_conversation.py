"""A thread is a conversation: later turns see earlier questions and answers, each turn its own."""

import io
import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import Engine

from graphs.agent.context import GraspContext
from graphs.agent.graph import GraspGraph, build_grasp_graph
from graphs.cli.main import main
from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply
from graphs.runtime.checkpoints import last_run, read_steps
from nodes.agent.plan import history_block
from store.corpora import corpus_id
from store.corpus_reads import corpus_passages
from tests.fixtures.films import (
    PAPER_VOTE,
    PAPER_VOTE_ARGS,
    PLAN,
    REWRITE,
    SYNTHESIZE,
    build_corpus,
    chain_rules,
    rule,
    services,
)
from tests.fixtures.scripted_cli import use_scripted_model

FIRST = "Who directed Blue Harbor?"
FOLLOW_UP = "Where was he born?"
HISTORY_LINE = f"Q: {FIRST}\nA: Tomas Reyd"
#: Each turn: plan, rewrite, select, evaluate, synthesize (one search round).
TURN_TOKENS = {"input_tokens": 950, "output_tokens": 100, "calls": 5}


def conversation_rules(ids: dict[str, int]) -> list[ScriptedReply]:
    """Turn 1 asks who directed Blue Harbor; turn 2's "he" is only clear from turn 1."""
    return [
        rule(
            PLAN,
            "Earlier in this conversation",
            HISTORY_LINE,
            f"Question: {FOLLOW_UP}",
            reply={"plan": "He is Tomas Reyd.", "sub_questions": ["Where was Tomas Reyd born?"]},
        ),
        rule(
            PLAN,
            f"Question: {FIRST}",
            reply={"plan": "Look up the director.", "sub_questions": [FIRST]},
        ),
        rule(
            REWRITE,
            "Sub-question: Where was Tomas Reyd born?",
            reply={
                "search_statement": "Tomas Reyd was born in a city.",
                "keywords": ["Tomas Reyd", "born"],
            },
        ),
        rule(
            SYNTHESIZE,
            f"Question: {FIRST}",
            f"1. {FIRST} → Tomas Reyd",
            reply={"answer": "Tomas Reyd", "justification": "He directed it."},
        ),
        rule(
            SYNTHESIZE,
            f"Question: {FOLLOW_UP}",
            "1. Where was Tomas Reyd born? → Lisbon",
            reply={"answer": "Lisbon", "justification": "Tomas Reyd was born in Lisbon."},
        ),
        *chain_rules(ids),
    ]


async def ask(graph: GraspGraph, thread: str, question: str | None, **context: Any) -> Any:
    config: Any = {"configurable": {"thread_id": thread}}
    return await graph.ainvoke(
        {"question": question} if question is not None else None,
        config,
        context=GraspContext(corpus="films", **{**PAPER_VOTE, **context}),
    )


def plan_prompts(model: ScriptedChatModel) -> list[str]:
    return [p for p in model.prompts if p.startswith(PLAN)]


async def test_a_follow_up_is_planned_against_the_earlier_turn(
    engine: Engine, database_url: str
) -> None:
    svc = services(engine, database_url, conversation_rules(build_corpus(engine)))
    model = svc.llm.model
    assert isinstance(model, ScriptedChatModel)
    graph = build_grasp_graph(svc, InMemorySaver())

    first = await ask(graph, "conv-1", FIRST)
    state = await ask(graph, "conv-1", FOLLOW_UP)

    assert first["final_answer"] == "Tomas Reyd"
    assert state["final_answer"] == "Lisbon"
    turn_1_prompt, turn_2_prompt = plan_prompts(model)
    assert "Earlier in this conversation" not in turn_1_prompt  # turn 1's prompt is unchanged
    assert turn_1_prompt.endswith(f"Question: {FIRST}")
    assert f"{HISTORY_LINE}\n\nQuestion: {FOLLOW_UP}" in turn_2_prompt
    # Only questions and final answers cross turns: no evidence, no justification.
    assert "1998 drama film" not in turn_2_prompt and "He directed it" not in turn_2_prompt

    # The turn's own fields were reset; the conversation fields span both turns.
    assert state["turn"] == 2
    assert state["sub_questions"] == [
        {"index": 1, "text": "Where was Tomas Reyd born?", "depends_on": []}
    ]
    assert state["answers"] == {1: "Lisbon"}
    tokens = state["tokens"]
    assert {k: tokens[k] for k in TURN_TOKENS} == TURN_TOKENS
    assert sorted(tokens["by_node"]) == [
        "evaluate",
        "plan",
        "rewrite",
        "select_entities",
        "synthesize",
    ]
    assert state["turns"] == [
        {"question": FIRST, "answer": "Tomas Reyd", "tokens": TURN_TOKENS},
        {"question": FOLLOW_UP, "answer": "Lisbon", "tokens": TURN_TOKENS},
    ]
    assert state["conversation_tokens"] == {"input_tokens": 1900, "output_tokens": 200, "calls": 10}

    # Each turn has its own checkpoints, from its own input checkpoint on.
    steps = await read_steps(graph, "conv-1")
    starts = [s for s in steps if (s.metadata or {}).get("source") == "input"]
    assert len(starts) == 2
    latest = last_run(steps)
    assert latest[1].values["question"] == FOLLOW_UP
    assert all(s.values.get("turn") in (None, 1, 2) for s in latest)
    assert (
        latest[-1].values["turn"] == 2 and steps[len(steps) - len(latest) - 1].values["turn"] == 1
    )


async def test_the_planner_sees_only_the_last_turns_cut_short(
    engine: Engine, database_url: str
) -> None:
    svc = services(engine, database_url, conversation_rules(build_corpus(engine)))
    model = svc.llm.model
    assert isinstance(model, ScriptedChatModel)
    graph = build_grasp_graph(svc, InMemorySaver())
    config: Any = {"configurable": {"thread_id": "conv-2"}}
    earlier = [
        {
            "question": f"Old question {n} " + "x" * 50,
            "answer": f"answer {n}",
            "tokens": TURN_TOKENS,
        }
        for n in range(1, 5)
    ]
    await graph.aupdate_state(config, {"turns": earlier}, as_node="synthesize")

    state = await ask(graph, "conv-2", FIRST, history_turns=2, history_chars=16)

    prompt = plan_prompts(model)[-1]
    assert "Q: Old question 3 …\nA: answer 3\nQ: Old question 4 …\nA: answer 4\n\n" in prompt
    assert "Old question 2" not in prompt
    assert state["turn"] == 5 and len(state["turns"]) == 5
    assert state["conversation_tokens"]["calls"] == 5 * 4 + 5


async def test_no_history_when_history_turns_is_zero(engine: Engine, database_url: str) -> None:
    svc = services(engine, database_url, conversation_rules(build_corpus(engine)))
    model = svc.llm.model
    assert isinstance(model, ScriptedChatModel)
    graph = build_grasp_graph(svc, InMemorySaver())
    await ask(graph, "conv-3", FIRST)
    await ask(graph, "conv-3", FIRST, history_turns=0)

    assert all("Earlier in this conversation" not in p for p in plan_prompts(model))


async def test_an_interrupted_turn_resumes_and_is_recorded_once(
    engine: Engine, database_url: str
) -> None:
    rules = conversation_rules(build_corpus(engine))
    failing = rules[4].model_copy(update={"error": "the model went away", "times": 1})
    svc = services(engine, database_url, [failing, *rules])
    model = svc.llm.model
    assert isinstance(model, ScriptedChatModel)
    graph = build_grasp_graph(svc, InMemorySaver())
    await ask(graph, "conv-4", FIRST)

    with pytest.raises(Exception, match="the model went away"):
        await ask(graph, "conv-4", FOLLOW_UP)
    stopped = await graph.aget_state({"configurable": {"thread_id": "conv-4"}})
    assert stopped.next == ("synthesize",)
    assert len(stopped.values["turns"]) == 1

    state = await ask(graph, "conv-4", None)  # continue the interrupted turn

    assert state["final_answer"] == "Lisbon"
    assert [t["question"] for t in state["turns"]] == [FIRST, FOLLOW_UP]
    assert len(plan_prompts(model)) == 2  # the follow-up was planned once


def test_history_block_is_empty_without_turns_and_cuts_long_text() -> None:
    assert history_block([], 10) == ""
    block = history_block([("a  very\nlong question", "short")], 8)
    assert "Q: a very …\nA: short\n\n" in block


@pytest.fixture
def chat_env(
    engine: Engine, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_scripted_model(
        monkeypatch, database_url, tmp_path, conversation_rules(build_corpus(engine))
    )


def chat(monkeypatch: pytest.MonkeyPatch, typed: str, *args: str) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    return main(["chat", "--corpus", "films", *PAPER_VOTE_ARGS, *args])


def test_grasp_chat_two_turns_then_resume_and_show(
    chat_env: None,
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    thread = f"chat-{uuid.uuid4().hex[:8]}"
    ids = {p.title: p.id for p in corpus_passages(engine, corpus_id(engine, "films"))}
    assert (
        chat(monkeypatch, f"{FIRST}\n\n{FOLLOW_UP}\n/quit\nnever asked\n", "--thread", thread) == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"thread: {thread}",
        f"you> {FIRST}",
        f"hop 1 of 1: {FIRST}",
        out[3],  # "  reading N passages": the count is the retrieval's
        "  → Tomas Reyd",
        "answer: Tomas Reyd [1]",
        "why: He directed it.",
        "sources:",
        f"  [1] Blue Harbor (passage {ids['Blue Harbor']}, hop 1, round 1)",
        "      “Blue Harbor was directed by Tomas Reyd.”",
        "tokens: this turn 950/100 tokens, 5 calls; conversation 950/100 tokens, 5 calls",
        f"you> {FOLLOW_UP}",
        "hop 1 of 1: Where was Tomas Reyd born?",
        out[13],
        "  → Lisbon",
        "answer: Lisbon [1]",
        "why: Tomas Reyd was born in Lisbon.",
        "sources:",
        f"  [1] Tomas Reyd (passage {ids['Tomas Reyd']}, hop 1, round 1)",
        "      “Tomas Reyd was born in Lisbon in 1950.”",
        "tokens: this turn 950/100 tokens, 5 calls; conversation 1900/200 tokens, 10 calls",
    ]
    for reading in (out[3], out[13]):
        assert re.fullmatch(r"  reading (1 passage|[02-9]\d* passages)", reading)

    assert chat(monkeypatch, "/help\n/new\n", "--thread", thread) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:6] == [
        f"thread: {thread}",
        f"[1] you: {FIRST}",
        "[1] grasp: Tomas Reyd",
        f"[2] you: {FOLLOW_UP}",
        "[2] grasp: Lisbon",
        "commands: /new (a fresh thread), /quit",
    ]
    assert out[6].startswith("thread: ") and out[6] != f"thread: {thread}" and len(out) == 7

    assert main(["show", thread]) == 0
    shown = capsys.readouterr().out.splitlines()
    headers = [line for line in shown if line.startswith("turn ")]
    assert headers == [f"turn 1: {FIRST}", f"turn 2: {FOLLOW_UP}"]
    assert shown.index(headers[0]) < shown.index(headers[1])
    assert shown[-4:] == [
        "conversation: 2 turns, 1900/200 tokens, 10 calls",
        f"  1. {FIRST} → Tomas Reyd  (950/100 tokens, 5 calls)",
        f"  2. {FOLLOW_UP} → Lisbon  (950/100 tokens, 5 calls)",
        "status: done",
    ]


def test_grasp_chat_refuses_another_corpus_and_bad_settings(
    chat_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert chat(monkeypatch, "", "--set", "history_turns=-1") == 2
    assert "refused: history_turns must not be negative, not -1" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["chat", "--corpus", "no-such-corpus"]) == 2
    assert "refused:" in capsys.readouterr().err


def test_grasp_chat_finishes_an_interrupted_turn_on_resume(
    chat_env: None,
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rules = conversation_rules(build_corpus(engine))
    failing = rules[4].model_copy(update={"error": "the model went away", "times": 1})
    script = tmp_path / "failing.json"
    script.write_text(json.dumps([r.model_dump() for r in [failing, *rules]]))
    monkeypatch.setenv("GRASP_CHAT_MODEL", f"scripted:{script}")
    thread = f"chat-{uuid.uuid4().hex[:8]}"

    assert chat(monkeypatch, f"{FIRST}\n{FOLLOW_UP}\nnever asked\n", "--thread", thread) == 1
    captured = capsys.readouterr()
    assert "answer: Tomas Reyd [1]" in captured.out and "answer: Lisbon" not in captured.out
    err = " ".join(captured.err.split())
    assert "the turn stopped: LlmCallError:" in err and "the model went away" in err
    assert err.endswith(f"continue it with: grasp chat --corpus films --thread {thread}")

    assert chat(monkeypatch, "", "--thread", thread) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:4] == [
        f"thread: {thread}",
        f"[1] you: {FIRST}",
        "[1] grasp: Tomas Reyd",
        f"the last turn was interrupted; finishing it: {FOLLOW_UP}",
    ]
    # It went on from its checkpoint: only the synthesis was left to do.
    assert out[4:] == [
        "answer: Lisbon [1]",
        "why: Tomas Reyd was born in Lisbon.",
        "sources:",
        out[7],  # "  [1] Tomas Reyd (passage …, hop 1, round 1)"
        "      “Tomas Reyd was born in Lisbon in 1950.”",
        "tokens: this turn 950/100 tokens, 5 calls; conversation 1900/200 tokens, 10 calls",
    ]
