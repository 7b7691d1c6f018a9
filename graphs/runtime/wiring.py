"""The one wiring every graph uses: a run's context → its services, resolved off the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import Field, dataclass, replace
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from langgraph.config import get_config
from langgraph.runtime import Runtime

from graphs.runtime.services import Services, services_for
from graphs.runtime.settings import Settings


class ModelChoice(Protocol):
    """A run context that may name a chat model overriding GRASP_CHAT_MODEL."""

    # A dataclass, as LangGraph requires of a context schema.
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def chat_model(self) -> str | None:
        """The chat model spec of this run, or None for the environment's."""
        ...


ContextT = TypeVar("ContextT", bound=ModelChoice)

#: Services for a run's context; fixed services ignore it, the default reads the environment.
ServicesProvider = Callable[[Any], Services]


def default_services(context: ModelChoice) -> Services:
    """Services from the environment, with the context's chat model if it names one."""
    settings = Settings.from_env()
    return services_for(replace(settings, chat_model=context.chat_model or settings.chat_model))


def as_provider(services: Services | ServicesProvider | None) -> ServicesProvider:
    """Fixed services (tests, embedding apps), a provider, or None for the environment's."""
    if services is None:
        return default_services
    if isinstance(services, Services):
        fixed = services
        return lambda _context: fixed
    return services


class CorpusNotAllowed(ValueError):
    """The deployment does not let runs read this corpus (GRASP_ALLOWED_CORPORA).

    A ValueError: bad input from the client, whose message the LangGraph server passes on.
    """


def check_corpus_allowed(corpus: str | None, allowed: tuple[str, ...] | None) -> None:
    """Refuse a corpus outside the deployment's allowed list (None allows every corpus)."""
    if allowed is not None and corpus is not None and corpus not in allowed:
        raise CorpusNotAllowed(
            f"corpus {corpus!r} is not open on this deployment (GRASP_ALLOWED_CORPORA); "
            "name a corpus you were given"
        )


class NotAnAdmin(ValueError):
    """A run only admins may start (indexing over the server), started by another user."""


def run_user() -> Any | None:
    """The user the server authenticated for this run (auth.py), or None (the CLI, tests).

    The LangGraph server puts it in the run's config; it reads like a mapping (`.get`).
    """
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:  # called outside a graph run
        return None
    user = configurable.get("langgraph_auth_user")
    return user if user is not None and callable(getattr(user, "get", None)) else None


def check_user_corpus(corpus: str | None) -> None:
    """Refuse a corpus the run's user was not given (users without a list may read any)."""
    user = run_user()
    if user is None or corpus is None:
        return
    mine = user.get("corpora")
    if mine is not None and corpus not in mine:
        raise CorpusNotAllowed(
            f"corpus {corpus!r} is not open to user {user.get('identity')!r}; "
            "name a corpus you were given"
        )


def check_may_index(corpus: str, allowed: tuple[str, ...] | None) -> None:
    """Refuse an index run of a non-admin user, or into a corpus the run may not name."""
    user = run_user()
    if user is not None and not user.get("admin"):
        raise NotAnAdmin("indexing is for admins on this server (see docs/serving.md)")
    check_corpus_allowed(corpus, allowed)
    check_user_corpus(corpus)


def run_id() -> str | None:
    """The LangGraph thread id, so ledger rows of one run can be found again."""
    try:
        thread = get_config().get("configurable", {}).get("thread_id")
    except RuntimeError:  # called outside a graph run
        return None
    return str(thread) if thread else None


@dataclass(frozen=True)
class Wiring(Generic[ContextT]):
    """How a graph's nodes reach their services: a provider called with the run's context."""

    provide: ServicesProvider
    default_context: Callable[[], ContextT]
    #: The context a run uses, given its services (e.g. defaults that depend on the model).
    settle: Callable[[ContextT, Services], ContextT] | None = None

    async def resolve(self, runtime: Runtime[ContextT]) -> tuple[ContextT, Services]:
        """The run's context (defaults when none was given) and its services.

        Every node of every graph starts here, so a corpus the deployment, or the run's user,
        does not allow is refused before any retrieval or model call (CorpusNotAllowed).
        """
        context = runtime.context or self.default_context()
        # The default provider may start the embedded server or load a model: not on the loop.
        services = await asyncio.to_thread(self.provide, context)
        corpus = getattr(context, "corpus", None)
        check_corpus_allowed(corpus, services.settings.allowed_corpora)
        check_user_corpus(corpus)
        if self.settle is not None:
            context = self.settle(context, services)
        return context, services
