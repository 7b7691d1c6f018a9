"""What a run is asked with: typed `--set` overrides, input checks, and the thread's config.

The checks refuse a question or corpus before anything runs; the config's metadata is the run's
identity (method, question, corpus, settings) that a resume is checked against.
"""

from __future__ import annotations

import argparse
import json
import uuid
from dataclasses import fields
from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.agent.context import GraspContext
from graphs.peers.registry import DEFAULT_METHOD, METHODS
from graphs.runtime.checkpoints import ATTEMPT_KEY
from graphs.runtime.run_history import METHOD_KEY, Refused
from graphs.runtime.services import Services
from store.corpora import CorpusNotFound, corpus_id, other_embedder

GRASP_FLAGS = ("max_iterations", "planner", "entity_selection")


def setting_examples(context: type[Any]) -> dict[str, Any]:
    """Each setting's example value, whose type `--set` parses to.

    Its default, or for a setting whose default is unset (a profile's choice) its metadata's example.
    """
    return {f.name: f.metadata.get("example", f.default) for f in fields(context)}


def set_items(items: list[str], context: type[Any]) -> dict[str, Any]:
    """`--set KEY=VALUE` items as settings of `context`, typed like their defaults."""
    defaults = setting_examples(context)
    settings: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise Refused(f"--set takes KEY=VALUE, not {item!r}")
        if key == "corpus":
            raise Refused("--set corpus=… is not a setting: name the corpus with --corpus")
        settings[key] = typed_value(key, raw, defaults.get(key))
    return settings


def overrides_of(args: argparse.Namespace) -> dict[str, Any]:
    """Context overrides from --set KEY=VALUE and the named flags (the flags win)."""
    method = getattr(args, "method", DEFAULT_METHOD)
    context = GraspContext if method == DEFAULT_METHOD else METHODS[method].context
    overrides = set_items(args.set, context)
    for key in GRASP_FLAGS:
        if getattr(args, key) is not None:
            if method != DEFAULT_METHOD:
                flag = "--" + key.replace("_", "-")
                raise Refused(f"{flag} is a GRASP setting; {method} takes --set KEY=VALUE")
            overrides[key] = getattr(args, key)
    return overrides


#: How `--set` spells booleans.
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


def typed_value(key: str, raw: str, default: Any) -> Any:
    """`raw` in the type of the setting's default (numbers, booleans); anything else stays text."""
    if isinstance(default, bool):  # before int: a bool is an int
        word = raw.strip().lower()
        if word not in TRUE_WORDS | FALSE_WORDS:
            raise Refused(f"--set {key}={raw}: {key} is true or false")
        return word in TRUE_WORDS
    kind = int if isinstance(default, int) else float if isinstance(default, float) else None
    if kind is None:
        return raw
    try:
        return kind(raw)
    except ValueError:
        expected = "a whole number" if kind is int else "a number"
        raise Refused(f"--set {key}={raw}: {key} takes {expected}") from None


def check_question(question: str) -> None:
    """Refuse an empty question before anything runs or is recorded."""
    if not question.strip():
        raise Refused('the question is empty; ask something, e.g. grasp ask "Who …?" --corpus C')


def check_corpus(services: Services, name: str) -> None:
    """Refuse an unknown corpus, or one whose vectors another embedder made (as eval does)."""
    try:
        corpus = corpus_id(services.engine, name)
    except CorpusNotFound as exc:
        raise Refused(str(exc)) from None
    indexed_with = other_embedder(services.engine, corpus, services.embedder.name)
    if indexed_with is not None:
        raise Refused(
            f"corpus {name!r} was indexed with embedder {indexed_with}, but GRASP_EMBEDDER gives "
            f"{services.embedder.name}: its vectors cannot be compared; set GRASP_EMBEDDER to match"
        )


def run_config(
    thread: str,
    question: str,
    corpus: str,
    settings: dict[str, Any],
    method: str = DEFAULT_METHOD,
) -> RunnableConfig:
    """The thread's config; its metadata lands in every checkpoint, so a resume can check it."""
    return {
        "configurable": {"thread_id": thread},
        "metadata": {
            METHOD_KEY: method,
            "grasp_question": question,
            "grasp_corpus": corpus,
            "grasp_settings": json.dumps(settings, sort_keys=True),
            # One id per invocation: a viewer sees where a killed run was resumed.
            ATTEMPT_KEY: uuid.uuid4().hex,
        },
    }
