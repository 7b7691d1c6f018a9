"""The LangGraph server's authentication and ownership (langgraph.json "auth"; docs/serving.md).

Every request needs `Authorization: Bearer TOKEN` naming a user of GRASP_AUTH_FILE (or
GRASP_AUTH_USERS); GRASP_AUTH=off serves one local admin without tokens. Threads and runs carry
their owner in their metadata and every read, search, update and delete is filtered by it, so a
user never sees another's threads. A run request is checked before the run exists
(graphs/runtime/run_requests.py): the index graph only for admins, only known context and input
fields, questions up to a limit, corpora the user was given. Assistants are the server's
own (one per graph), and crons and the store are not served.
"""

from __future__ import annotations

import importlib
import json
from functools import cache
from pathlib import Path
from typing import Any
from uuid import UUID, uuid5

from langgraph_sdk import Auth

from graphs.runtime.run_requests import RequestRefused, ServedGraph, check_run_request
from graphs.runtime.settings import Settings
from graphs.runtime.users import User, UserBook, load_users

REPO = Path(__file__).resolve().parents[2]
#: Graphs only admins may run: indexing writes corpora.
ADMIN_GRAPHS = frozenset({"index"})
#: The namespace the LangGraph server derives each graph's own assistant id from
#: (langgraph_api.graph.NAMESPACE_GRAPH: uuid5(namespace, graph name)).
ASSISTANT_NAMESPACE = UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
#: The one user of a server started with GRASP_AUTH=off (local use only).
LOCAL_USER = User("local", None, admin=True)
#: The metadata key threads and runs record their owner under.
OWNER = "owner"

auth = Auth()
SETTINGS = Settings.from_env()
#: Read once when the server starts, so a malformed file stops it with the reason.
USERS: UserBook | None = None if SETTINGS.auth_off else load_users(SETTINGS)


@cache
def served_graphs() -> dict[str, ServedGraph]:
    """Every graph langgraph.json serves, by its own assistant's id and by its name."""
    config = json.loads((REPO / "langgraph.json").read_text(encoding="utf-8"))
    found: dict[str, ServedGraph] = {}
    for name, spec in config["graphs"].items():
        path, attribute = spec.split(":")
        module = path.removeprefix("./").removesuffix(".py").replace("/", ".")
        graph = getattr(importlib.import_module(module), attribute)
        served = ServedGraph.of(name, graph, admin_only=name in ADMIN_GRAPHS)
        found[name] = found[str(uuid5(ASSISTANT_NAMESPACE, name))] = served
    return found


def refuse(status: int, message: str) -> Auth.exceptions.HTTPException:
    """The one response a refused request gets."""
    return Auth.exceptions.HTTPException(status_code=status, detail=message)


@auth.authenticate
async def authenticate(authorization: str | None) -> dict[str, Any]:
    """The user a request's bearer token names; no token or an unknown one is refused."""
    if SETTINGS.auth_off:
        return LOCAL_USER.as_auth_user()
    if USERS is None:
        raise refuse(401, "this server has no users: set GRASP_AUTH_FILE (see docs/serving.md)")
    user = USERS.user_for(authorization)
    if user is None:
        raise refuse(
            401, "a valid token is required: send the header 'Authorization: Bearer TOKEN'"
        )
    return user.as_auth_user()


def request_user(ctx: Auth.types.AuthContext) -> User:
    """The authenticated user of a request, as authenticate() described it."""
    name = ctx.user.identity
    lookup = getattr(ctx.user, "get", None)
    corpora = lookup("corpora") if callable(lookup) else []
    if not name:
        raise refuse(401, "a valid token is required")
    return User(name, None if corpora is None else tuple(corpora), "admin" in ctx.permissions)


@auth.on
async def refuse_the_rest(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Crons, the store and anything not named below are not served."""
    raise refuse(403, f"{ctx.resource} {ctx.action} is not served here")


@auth.on.threads.create
async def own_new_thread(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A new thread (or a copy) is its creator's."""
    metadata = value.setdefault("metadata", {})
    metadata[OWNER] = request_user(ctx).name
    return {OWNER: request_user(ctx).name}


@auth.on.threads.update
async def update_own_thread(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Only the owner updates a thread (its state included), and never hands it to another."""
    name = request_user(ctx).name
    metadata = value.get("metadata") or {}
    if metadata.get(OWNER, name) != name:
        raise refuse(403, "a thread's owner cannot be changed")
    return {OWNER: name}


async def only_own_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Reads, searches and deletions see the user's own threads and nothing else."""
    return {OWNER: request_user(ctx).name}


auth.on.threads.read(only_own_threads)
auth.on.threads.search(only_own_threads)
auth.on.threads.delete(only_own_threads)


@auth.on.threads.create_run
async def check_run(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A run on the user's own thread, of a graph, input and context the user may send."""
    user = request_user(ctx)
    graph = served_graphs().get(str(value.get("assistant_id")))
    if graph is None:
        raise refuse(404, "no such graph: run one of the graphs this server serves, by name")
    kwargs = value.get("kwargs") or {}
    try:
        check_run_request(graph, user, kwargs.get("input"), kwargs.get("context") or {})
    except RequestRefused as refused:
        raise refuse(refused.status, refused.message) from None
    metadata = value.setdefault("metadata", {})
    metadata[OWNER] = user.name
    return {OWNER: user.name}


async def read_assistants(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Anyone may look the served graphs up."""
    request_user(ctx)
    return True


auth.on.assistants.read(read_assistants)
auth.on.assistants.search(read_assistants)


async def fixed_assistants(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Assistants are the server's own, one per graph: runs name a graph instead."""
    raise refuse(403, "assistants are fixed on this server: run a graph by its name")


auth.on.assistants.create(fixed_assistants)
auth.on.assistants.update(fixed_assistants)
auth.on.assistants.delete(fixed_assistants)
