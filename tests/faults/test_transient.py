"""Which provider errors are retried: status attributes and types first, words only as a fallback."""

import pytest

from graphs.models.faulty import InjectedProviderError, InjectedTimeout
from nodes.llm.provider_errors import is_transient, status_of


class StatusError(Exception):
    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class Response:
    def __init__(self, status_code: int) -> None:
        self.status_code = status_code


class ResponseError(Exception):
    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.response = Response(status_code)


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (StatusError("too many requests", 429), True),
        (StatusError("bad gateway", 502), True),
        (StatusError("invalid argument: prompt_tokens=503 over the limit", 400), False),
        (StatusError("server hiccup 429 times", 404), False),
        (ResponseError("whatever", 503), True),
        (ResponseError("whatever", 401), False),
        (InjectedProviderError(429, "slow down"), True),
        (InjectedProviderError(500, "oops"), True),
        (InjectedTimeout(10), True),
        (TimeoutError(), True),
        (ConnectionResetError(), True),
        # No status attribute: the message decides, and a number must be named as a status.
        (ValueError("context too long: prompt_tokens=503, max 500"), False),
        (RuntimeError("used 429 tokens of 500"), False),
        (RuntimeError("Error code: 429 - rate limited"), True),
        (RuntimeError("HTTP 503 Service Unavailable"), True),
        (RuntimeError("status_code=500"), True),
        (RuntimeError("429 Resource has been exhausted (e.g. check quota)."), True),
        (RuntimeError("Error code: 400 - bad request"), False),
        (RuntimeError("Request timed out."), True),
        (ValueError("schema is not valid"), False),
    ],
)
def test_transient_errors_are_told_from_permanent_ones(
    error: BaseException, transient: bool
) -> None:
    assert is_transient(error) is transient


def test_a_wrapped_transient_cause_counts() -> None:
    try:
        try:
            raise StatusError("overloaded", 503)
        except StatusError as inner:
            raise RuntimeError("the SDK gave up") from inner
    except RuntimeError as outer:
        assert is_transient(outer)


def test_status_of_ignores_non_status_codes() -> None:
    error = StatusError("x", 429)
    error.code = "rate_limit_exceeded"  # type: ignore[attr-defined]  # a string code, as OpenAI's
    assert status_of(error) == 429
    assert status_of(ValueError("no status")) is None
    flag = Exception("x")
    flag.code = True  # type: ignore[attr-defined]
    assert status_of(flag) is None
