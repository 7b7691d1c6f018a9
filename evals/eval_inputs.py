"""The eval commands' input checks: `--set` pairs typed per Context, and the corpus's embedder."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from graphs.agent.context import GraspContext
from graphs.cli.ask_input import setting_examples, typed_value
from graphs.peers.registry import method_named
from graphs.runtime.run_history import Refused
from graphs.runtime.services import Services
from store.corpora import corpus_id, other_embedder


def typed_settings(kind: type[Any], pairs: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE` pairs as overrides of the dataclass `kind`, typed like each default."""
    defaults = setting_examples(kind)
    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in defaults or key == "corpus":
            known = sorted(name for name in defaults if name != "corpus")
            raise ValueError(f"--set {pair!r}: expected KEY=VALUE with KEY one of {known}")
        try:  # the spelling `grasp ask --set` takes: a bool is never `bool("false")`
            settings[key] = typed_value(key, value, defaults[key])
        except Refused as exc:
            raise ValueError(str(exc)) from None
    kind(**settings)  # fails now, before any question, on a bad value
    return settings


def grasp_settings(pairs: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE` pairs as GraspContext overrides."""
    return typed_settings(GraspContext, pairs)


def method_settings(method: str, pairs: list[str], k: int | None = None) -> dict[str, Any]:
    """`--set KEY=VALUE` pairs (and `--k`) as overrides of the method's Context."""
    context = method_named(method).context
    settings = typed_settings(context, pairs)
    if k is not None:
        if "k" not in {f.name for f in fields(context)}:
            raise ValueError(f"--k: {method} has no k setting; use --set KEY=VALUE")
        settings["k"] = k
        context(**settings)  # a bad k fails now, like a bad --set
    return settings


def check_corpus(services: Services, name: str) -> int:
    """The corpus id, refusing one whose vectors another embedder made."""
    corpus = corpus_id(services.engine, name)
    indexed_with = other_embedder(services.engine, corpus, services.embedder.name)
    if indexed_with is not None:
        raise ValueError(
            f"corpus {name!r} was indexed with {indexed_with}, but GRASP_EMBEDDER gives "
            f"{services.embedder.name}: set GRASP_EMBEDDER to match"
        )
    return corpus
