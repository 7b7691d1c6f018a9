"""The server's users: bearer tokens mapped to a name, the corpora it may read, and admin rights.

Read from the JSON named by GRASP_AUTH_FILE (or given inline in GRASP_AUTH_USERS), shaped as
`{TOKEN: {"user": NAME, "corpora": [NAME, ...] | "*", "admin": BOOL}}` (docs/serving.md). A
token may be written as `sha256:HEX` (its digest), so the file need not hold the secret itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphs.runtime.settings import Settings

#: The shortest plain token accepted: a guessable token is no authentication.
MIN_TOKEN_CHARS = 16
#: What a user entry may hold.
USER_KEYS = frozenset({"user", "corpora", "admin"})
DIGEST_PREFIX = "sha256:"


class UsersFileError(ValueError):
    """The users file (or GRASP_AUTH_USERS) is not a valid token → user mapping."""


@dataclass(frozen=True)
class User:
    """One authenticated user: a name, the corpora it may read (None: all), admin or not."""

    name: str
    corpora: tuple[str, ...] | None
    admin: bool = False

    def as_auth_user(self) -> dict[str, Any]:
        """What the LangGraph server keeps for the request (runs see it in their config)."""
        return {
            "identity": self.name,
            "permissions": ["admin"] if self.admin else [],
            "corpora": None if self.corpora is None else list(self.corpora),
            "admin": self.admin,
        }


def token_digest(token: str) -> str:
    """The sha256 hex digest tokens are looked up by."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class UserBook:
    """Users by their token's digest."""

    by_digest: Mapping[str, User]

    def user_for(self, authorization: str | None) -> User | None:
        """The user an `Authorization: Bearer TOKEN` header names, or None."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self.by_digest.get(token_digest(token.strip()))


def _user(entry: Any, where: str) -> User:
    if not isinstance(entry, dict):
        raise UsersFileError(f"{where}: expected an object with 'user', 'corpora' and 'admin'")
    unknown = sorted(set(entry) - USER_KEYS)
    if unknown:
        raise UsersFileError(f"{where}: unknown keys {', '.join(map(repr, unknown))}")
    name, corpora, admin = entry.get("user"), entry.get("corpora"), entry.get("admin", False)
    if not isinstance(name, str) or not name.strip():
        raise UsersFileError(f"{where}: 'user' must be a non-empty name")
    if not isinstance(admin, bool):
        raise UsersFileError(f"{where}: 'admin' must be true or false")
    if corpora == "*":
        return User(name, None, admin)
    if not isinstance(corpora, list) or not all(isinstance(c, str) for c in corpora):
        raise UsersFileError(f"{where}: 'corpora' must be a list of corpus names, or \"*\"")
    return User(name, tuple(corpora), admin)


def parse_users(text: str, where: str) -> UserBook:
    """The users of a JSON text; anything malformed is refused naming the entry (never its token)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsersFileError(f"{where}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(data, dict) or not data:
        raise UsersFileError(f"{where}: expected an object mapping tokens to users")
    by_digest: dict[str, User] = {}
    for number, (token, entry) in enumerate(data.items(), start=1):
        place = f"{where}: entry {number}"
        user = _user(entry, place)
        if token.startswith(DIGEST_PREFIX):
            digest = token[len(DIGEST_PREFIX) :].lower()
            if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
                raise UsersFileError(f"{place}: a sha256: token needs 64 hex digits")
        elif len(token) < MIN_TOKEN_CHARS:
            raise UsersFileError(f"{place}: a token needs at least {MIN_TOKEN_CHARS} characters")
        else:
            digest = token_digest(token)
        by_digest[digest] = user
    return UserBook(by_digest)


def load_users(settings: Settings) -> UserBook | None:
    """The configured users, or None when none are (every request is then refused)."""
    if settings.auth_file is not None:
        try:
            text = settings.auth_file.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsersFileError(
                f"GRASP_AUTH_FILE {settings.auth_file}: cannot be read ({exc.strerror})"
            ) from None
        return parse_users(text, f"GRASP_AUTH_FILE {settings.auth_file}")
    if settings.auth_users is not None:
        return parse_users(settings.auth_users, "GRASP_AUTH_USERS")
    return None
