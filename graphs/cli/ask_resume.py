"""What a thread allows `grasp ask` to do (start, resume, or replay), and the line that continues it."""

from __future__ import annotations

import argparse
import json
import shlex
from typing import Any

from langgraph.types import StateSnapshot

from graphs.cli.ask_report import short
from graphs.peers.registry import DEFAULT_METHOD
from graphs.runtime.run_history import METHOD_KEY, Refused, say


def resume_plan(
    snapshot: StateSnapshot,
    question: str,
    corpus: str,
    settings: dict[str, Any],
    method: str = DEFAULT_METHOD,
) -> tuple[str, dict[str, Any]]:
    """What to do on this thread: 'new', 'resume' or 'finished', and the settings to run with.

    A thread is bound to its method, question and corpus; a resumed run keeps its settings.
    """
    if snapshot.metadata is None:  # no checkpoint yet
        return "new", settings
    metadata: dict[str, Any] = dict(snapshot.metadata or {})
    stored_method = metadata.get(METHOD_KEY) or DEFAULT_METHOD
    if stored_method != method:
        raise Refused(
            f"thread {snapshot.config['configurable']['thread_id']} was run by {stored_method}, "
            f"not {method}; pass --method {stored_method} or leave out --thread"
        )
    stored_question = snapshot.values.get("question") or metadata.get("grasp_question", "")
    stored_corpus = metadata.get("grasp_corpus", corpus)
    if stored_question.strip() != question.strip():
        raise Refused(
            f"thread {snapshot.config['configurable']['thread_id']} belongs to another question "
            f"({short(stored_question, 80)!r}); leave out --thread to start a new run"
        )
    if stored_corpus != corpus:
        raise Refused(f"this thread ran over corpus {stored_corpus!r}, not {corpus!r}")
    stored = json.loads(metadata.get("grasp_settings", "{}"))
    if stored != settings:
        say(f"note: the thread keeps its original settings {stored or '(defaults)'}")
    return ("resume" if snapshot.next else "finished"), stored


def resume_command(args: argparse.Namespace) -> str:
    """The command line that continues this run."""
    method = getattr(args, "method", DEFAULT_METHOD)
    shown = "" if method == DEFAULT_METHOD else f" --method {method}"
    return (
        f"grasp ask {shlex.quote(args.question)} --corpus {shlex.quote(args.corpus)}"
        f"{shown} --thread {args.thread}"
    )
