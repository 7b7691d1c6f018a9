"""What a served run request may hold, checked before the run is created (see auth.py).

A request is refused in one response, naming what is wrong: a graph only admins may run, a
context field the graph does not have, an input field it does not take (a server path among
them), a question over the length limit, or a corpus the user was not given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any, get_type_hints

from graphs.runtime.users import User

#: The longest question (or chat message) a served run takes, in characters.
MAX_QUESTION_CHARS = 2000


class RequestRefused(Exception):
    """A request the server turns away: the HTTP status and the one-line reason sent back."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class ServedGraph:
    """What a served graph accepts: its context fields and input keys, and who may run it."""

    name: str
    context_fields: frozenset[str]
    input_keys: frozenset[str]
    #: The corpus a run names when its context names none (None: the graph has no corpus field).
    default_corpus: str | None
    admin_only: bool = False

    @classmethod
    def of(cls, name: str, graph: Any, *, admin_only: bool = False) -> ServedGraph:
        """Read a compiled graph's Context dataclass and input schema."""
        context = graph.builder.context_schema
        found = {f.name: f for f in fields(context)} if context is not None else {}
        corpus = found.get("corpus")
        default = None if corpus is None or corpus.default is MISSING else str(corpus.default)
        return cls(
            name=name,
            context_fields=frozenset(found),
            input_keys=frozenset(get_type_hints(graph.builder.input_schema)),
            default_corpus=default,
            admin_only=admin_only,
        )


def _names(values: set[str] | frozenset[str]) -> str:
    return ", ".join(repr(v) for v in sorted(values))


def _text_chars(content: Any) -> int:
    """Characters of a message's content: a string, or a list of text blocks."""
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(_text_chars(b.get("text", "") if isinstance(b, dict) else b) for b in content)
    return 0


def longest_question(given: Mapping[str, Any]) -> int:
    """The longest question text in a run's input: its `question` or any chat message."""
    lengths = [_text_chars(given.get("question"))]
    messages = given.get("messages")
    if isinstance(messages, list):
        lengths += [_text_chars(m.get("content")) for m in messages if isinstance(m, dict)]
    return max(lengths)


def check_input(graph: ServedGraph, given: Any) -> None:
    """Refuse input fields the graph does not take and over-long questions."""
    if given is None:  # a resumed run: it goes on from its checkpoint
        return
    if not isinstance(given, Mapping):
        raise RequestRefused(422, f"the input of graph {graph.name!r} must be an object")
    if "source_path" in given:
        raise RequestRefused(
            422,
            "source_path is not accepted: the server reads no file a client names; "
            "send the passages themselves in the input",
        )
    unknown = set(given) - graph.input_keys
    if unknown:
        raise RequestRefused(
            422,
            f"graph {graph.name!r} takes no input field {_names(unknown)}; "
            f"its input fields: {_names(graph.input_keys)}",
        )
    if longest_question(given) > MAX_QUESTION_CHARS:
        raise RequestRefused(
            422,
            f"the question has {longest_question(given)} characters; "
            f"this server takes at most {MAX_QUESTION_CHARS}",
        )


def check_context(graph: ServedGraph, context: Mapping[str, Any]) -> None:
    """Refuse context fields the graph does not have (a typo would be silently ignored)."""
    unknown = set(context) - graph.context_fields
    if unknown:
        raise RequestRefused(
            422,
            f"graph {graph.name!r} has no context field {_names(unknown)}; "
            f"its fields: {_names(graph.context_fields)}",
        )


def run_corpus(graph: ServedGraph, given: Any, context: Mapping[str, Any]) -> str | None:
    """The corpus a run will read or write: the index graph's input names it, others' context."""
    if graph.admin_only and isinstance(given, Mapping):
        corpus = given.get("corpus")
        return corpus if isinstance(corpus, str) else None
    corpus = context.get("corpus", graph.default_corpus)
    return corpus if isinstance(corpus, str) else None


def check_run_request(
    graph: ServedGraph, user: User, given: Any, context: Mapping[str, Any]
) -> None:
    """Everything a run request must pass before the server creates the run."""
    if graph.admin_only and not user.admin:
        raise RequestRefused(
            403, f"graph {graph.name!r} is for admins on this server; user {user.name!r} is not one"
        )
    check_context(graph, context)
    check_input(graph, given)
    corpus = run_corpus(graph, given, context)
    if corpus is not None and user.corpora is not None and corpus not in user.corpora:
        raise RequestRefused(
            403,
            f"corpus {corpus!r} is not open to user {user.name!r}; "
            f"its corpora: {_names(set(user.corpora)) or 'none'}",
        )
