"""`grasp chat`: a conversation over one thread, with live progress and the answer streamed.

Each line read from stdin is a new turn on the thread; the planner sees the earlier turns'
questions and answers, so "Where was she born?" can follow "Who directed Blue Harbor?". `/new`
starts a fresh thread, `/quit` (or end of input) stops. `--thread` resumes a conversation: its
turns are shown first, and a turn that was interrupted is finished before the next question.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any, TextIO, cast

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from rich.markup import escape

from graphs.agent.chat_messages import turn_question
from graphs.agent.context import GraspContext
from graphs.agent.graph import GraspGraph, build_grasp_graph
from graphs.agent.hop_end import shown_answer
from graphs.agent.state import GraspInput
from graphs.api import make_context
from graphs.cli.ask_input import check_corpus, run_config, set_items
from graphs.cli.ask_report import short, tokens_text
from graphs.cli.sources import markers, source_lines
from graphs.peers.registry import DEFAULT_METHOD
from graphs.runtime.checkpoints import open_checkpointer
from graphs.runtime.run_history import METHOD_KEY, Refused, say
from graphs.runtime.services import services_for
from graphs.runtime.settings import Settings
from graphs.runtime.wiring import CorpusNotAllowed, check_corpus_allowed

COMMANDS = "commands: /new (a fresh thread), /quit"


def register(sub: Any) -> None:
    """Add the `chat` command."""
    chat = sub.add_parser("chat", help="a conversation with GRASP on one thread (reads stdin)")
    chat.add_argument("--corpus", required=True, help="the indexed corpus to answer from")
    chat.add_argument("--thread", help="continue this conversation (its turns are shown first)")
    chat.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any GraspContext field, e.g. --set history_turns=5 (repeatable)",
    )
    chat.set_defaults(handler=handle_chat)


def chat_settings(items: list[str]) -> dict[str, Any]:
    """Context overrides from --set KEY=VALUE, typed like their defaults; bad ones refused."""
    settings = set_items(items, GraspContext)
    try:
        make_context("check", **settings)
    except (TypeError, ValueError) as exc:
        raise Refused(str(exc)) from None
    return settings


@dataclass
class AnswerPrinter:
    """Prints progress events as lines and the answer as it grows, from the run's stream."""

    shown: str | None = None  # None: no answer text printed yet
    lines: list[str] = field(default_factory=list)

    def progress(self, event: dict[str, Any]) -> None:
        """One line per hop event; the plan only when it has several steps."""
        name = event.get("event")
        if name == "plan" and len(event["sub_questions"]) > 1:
            say(f"plan: {event['plan']}")
        elif name == "hop_started":
            say(f"hop {event['index']} of {event['of']}: {event['question']}")
        elif name == "searching" and event["round"] > 1:
            say(f"  searching again: {short(event['query'], 80)}")
        elif name == "reading":
            what = "passage" if "passages" in event else "proposition"
            count = event.get(f"{what}s", 0)
            say(f"  reading {count} {what}{'' if count == 1 else 's'}")
        elif name == "hop_done":
            say(f"  → {shown_answer(event['answer'])}")
        elif name == "hop_skipped":
            after = " and ".join(f"hop {k}" for k in event["after"])
            say(f"hop {event['index']} of {event['of']}: not searched ({after} found nothing)")
        elif name == "answer_delta":
            self.delta(event["text"])
        elif name == "answer_restart":
            self.restart()
        elif name == "answer":
            self.final(event["answer"], event.get("justification", ""), event.get("citations"))

    def delta(self, text: str) -> None:
        """The answer's next words (an "answer_delta" event)."""
        if self.shown is None:
            write("answer: ")
            self.shown = ""
        write(text)
        self.shown += text

    def restart(self) -> None:
        """The answer starts over (the model was asked again): end the streamed line."""
        if self.shown is not None:
            write("\n")
            self.shown = None

    def final(
        self, answer: str, justification: str, citations: list[dict[str, Any]] | None = None
    ) -> None:
        """End the answer line with its sources' marks, then say why and list the sources.

        The answer is printed whole when what streamed differs from it.
        """
        marks = markers(citations or [])
        if self.shown is None:
            say(f"answer: {answer}{marks}")
        elif self.shown.strip() != answer:
            write("\n")
            say(f"answer: {answer}{marks}")
        else:
            write(f"{marks}\n")
        if justification:
            say(f"why: {justification}")
        for line in source_lines(citations):
            say(line)


def write(text: str) -> None:
    """Print without a line end (streamed text)."""
    from graphs.cli.main import console

    console.print(escape(text), end="", soft_wrap=True, highlight=False)


@dataclass
class Conversation:
    """One thread of the chat: its graph, corpus and settings."""

    graph: GraspGraph
    corpus: str
    settings: dict[str, Any]
    thread: str

    def config(self, question: str) -> RunnableConfig:
        """The thread's config; its metadata names method, corpus and settings, as `ask` does."""
        return run_config(self.thread, question, self.corpus, self.settings, DEFAULT_METHOD)

    async def open(self) -> None:
        """Show the thread, its earlier turns, and finish a turn that was interrupted."""
        say(f"thread: {self.thread}")
        snapshot = await self.graph.aget_state({"configurable": {"thread_id": self.thread}})
        if snapshot.metadata is None:
            return
        metadata: dict[str, Any] = dict(snapshot.metadata)
        if (metadata.get(METHOD_KEY) or DEFAULT_METHOD) != DEFAULT_METHOD:
            raise Refused(f"thread {self.thread} was run by {metadata[METHOD_KEY]}, not grasp")
        if metadata.get("grasp_corpus", self.corpus) != self.corpus:
            raise Refused(f"this thread talks about corpus {metadata['grasp_corpus']!r}")
        for n, turn in enumerate(snapshot.values.get("turns", []), start=1):
            say(f"[{n}] you: {turn['question']}")
            say(f"[{n}] grasp: {turn['answer']}")
        # Tasks left (`next` alone misses a step that finished but was not checkpointed yet).
        if snapshot.next or snapshot.tasks:
            question = turn_question(snapshot.values)[0] or "?"
            say(f"the last turn was interrupted; finishing it: {question}")
            await self.run(None, question)

    async def run(self, question_input: GraspInput | None, question: str) -> None:
        """Run one turn (None: continue the interrupted one), printing it as it streams."""
        printer = AnswerPrinter()
        async for item in self.graph.astream(
            question_input,
            self.config(question),
            context=make_context(self.corpus, **self.settings),
            # "messages" only so that the model streams: the answer's words come as deltas.
            stream_mode=["custom", "messages"],
            subgraphs=True,  # hop events come from inside the sub-agents
            durability="sync",  # every step saved before the next, so a kill can resume
        ):
            _namespace, mode, payload = cast(tuple[tuple[str, ...], str, Any], item)
            if mode == "custom":
                printer.progress(payload)
        values = (await self.graph.aget_state(self.config(question))).values
        say(
            f"tokens: this turn {tokens_text(values.get('tokens'))}; "
            f"conversation {tokens_text(values.get('conversation_tokens'))}"
        )


def new_thread() -> str:
    """A fresh thread id."""
    return str(uuid.uuid4())


async def run_chat(args: argparse.Namespace, lines: TextIO) -> int:
    """Read questions from `lines` until /quit or the end; each is a turn on the thread."""
    settings = chat_settings(args.set)
    services = await asyncio.to_thread(services_for, Settings.from_env())
    try:
        check_corpus_allowed(args.corpus, services.settings.allowed_corpora)
    except CorpusNotAllowed as exc:
        raise Refused(str(exc)) from None
    await asyncio.to_thread(check_corpus, services, args.corpus)
    interactive = lines.isatty()
    async with open_checkpointer(services.database_url) as saver:
        graph = build_grasp_graph(None, saver)
        chat = Conversation(graph, args.corpus, settings, args.thread or new_thread())
        await chat.open()
        while True:
            if interactive:
                write("you> ")
            line = await asyncio.to_thread(lines.readline)
            text = line.strip()
            if not line or text == "/quit":
                return 0
            if text == "/new":
                chat = Conversation(graph, args.corpus, settings, new_thread())
                await chat.open()
            elif text.startswith("/"):
                say(COMMANDS)
            elif text:
                if not interactive:  # echoed, so a piped session reads as a conversation
                    say(f"you> {text}")
                try:
                    await chat.run(GraspInput(messages=[HumanMessage(text)]), text)
                except Exception as exc:  # the turn stops; its finished steps are saved
                    stopped(exc, args.corpus, chat.thread)
                    return 1


def stopped(error: Exception, corpus: str, thread: str) -> None:
    """Say in one line why a turn stopped and how to continue it."""
    from graphs.cli.main import errors, one_line

    errors.print(
        escape(
            f"the turn stopped: {one_line(error)}; continue it with: "
            f"grasp chat --corpus {shlex.quote(corpus)} --thread {thread}"
        ),
        soft_wrap=True,
    )


def handle_chat(args: argparse.Namespace) -> int:
    """`grasp chat`: refusals are one line with exit code 2."""
    from graphs.cli.main import errors

    try:
        return int(asyncio.run(run_chat(args, sys.stdin)))
    except Refused as exc:
        errors.print(escape(f"refused: {exc}"), soft_wrap=True)
        return 2
