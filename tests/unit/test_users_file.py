"""The server's users file: tokens to users, digests instead of secrets, one clear line when bad."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphs.runtime.settings import Settings
from graphs.runtime.users import User, UsersFileError, load_users, parse_users, token_digest

ALICE = "alice-token-0123456789"


def test_tokens_name_users_plain_or_by_digest(tmp_path: Path) -> None:
    path = tmp_path / "users.json"
    path.write_text(
        json.dumps(
            {
                ALICE: {"user": "alice", "corpora": ["films"]},
                f"sha256:{token_digest('root-secret-0123456789')}": {
                    "user": "root",
                    "corpora": "*",
                    "admin": True,
                },
            }
        )
    )
    book = load_users(Settings.from_env({"GRASP_AUTH_FILE": str(path)}))
    assert book is not None
    assert book.user_for(f"Bearer {ALICE}") == User("alice", ("films",), admin=False)
    assert book.user_for("bearer root-secret-0123456789") == User("root", None, admin=True)
    assert book.user_for(f"Basic {ALICE}") is None
    assert book.user_for(None) is None
    assert book.user_for("Bearer alice-token-0123456780") is None
    assert load_users(Settings.from_env({})) is None  # no users: the server refuses everyone


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "GRASP_AUTH_USERS: invalid JSON at line 1: Expecting property name"),
        ("[]", "GRASP_AUTH_USERS: expected an object mapping tokens to users"),
        (
            json.dumps({"short": {"user": "a", "corpora": []}}),
            "GRASP_AUTH_USERS: entry 1: a token needs at least 16 characters",
        ),
        (
            json.dumps({ALICE: {"user": "a", "corpora": "films"}}),
            "GRASP_AUTH_USERS: entry 1: 'corpora' must be a list of corpus names, or \"*\"",
        ),
        (
            json.dumps({ALICE: {"user": "a", "corpora": [], "admin": "yes"}}),
            "GRASP_AUTH_USERS: entry 1: 'admin' must be true or false",
        ),
        (
            json.dumps({ALICE: {"user": "a", "corpora": [], "role": "x"}}),
            "GRASP_AUTH_USERS: entry 1: unknown keys 'role'",
        ),
        (
            json.dumps({"sha256:abc": {"user": "a", "corpora": []}}),
            "GRASP_AUTH_USERS: entry 1: a sha256: token needs 64 hex digits",
        ),
    ],
)
def test_a_bad_users_text_is_refused_without_its_tokens(text: str, message: str) -> None:
    with pytest.raises(UsersFileError) as refused:
        parse_users(text, "GRASP_AUTH_USERS")
    assert str(refused.value).startswith(message)
    assert ALICE not in str(refused.value)


def test_an_unreadable_users_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(UsersFileError, match=f"GRASP_AUTH_FILE {missing}: cannot be read"):
        load_users(Settings.from_env({"GRASP_AUTH_FILE": str(missing)}))
