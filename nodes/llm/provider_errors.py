"""Which provider errors are worth a retry, and what a failed call was billed."""

from __future__ import annotations

import re

#: HTTP statuses that mean "try again later" rather than "your request is wrong".
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})

#: Words in a provider error's type or message that mean the same, when it carries no status.
TRANSIENT_WORDS = (
    "rate limit",
    "ratelimit",
    "resource_exhausted",
    "resourceexhausted",
    "quota",
    "unavailable",
    "overloaded",
    "timeout",
    "timed out",
    "deadline",
    "connection reset",
    "connection refused",
    "connecterror",
    "connectionerror",
    "apiconnectionerror",
)

#: A status code named as one in a message ("Error code: 429", "HTTP 503", "status=500", or a
#: message that opens with it, as Google's do): a bare number elsewhere (prompt_tokens=503) is not.
STATUS_IN_TEXT = re.compile(
    r"(?:^|\b(?:status|code|http)(?:[ _]code)?\W{0,3})(\d{3})\b", re.IGNORECASE
)


def status_of(error: BaseException) -> int | None:
    """The HTTP status a provider error carries (`status_code`, `code`, `status` or its response)."""
    candidates = [getattr(error, name, None) for name in ("status_code", "code", "status")]
    response = getattr(error, "response", None)
    candidates.append(getattr(response, "status_code", None))
    for value in candidates:
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    return None


def is_transient(error: BaseException) -> bool:
    """Whether a provider error is worth retrying (rate limits, 5xx, time-outs, lost connections).

    The error's type and status attribute decide first; only an error without either is judged by
    its words, and a number in it counts only where it is named as a status.
    """
    if isinstance(error, TimeoutError | ConnectionError):
        return True
    status = status_of(error)
    if status is not None:
        return status in TRANSIENT_STATUSES
    message = str(error)
    if any(int(code) in TRANSIENT_STATUSES for code in STATUS_IN_TEXT.findall(message)):
        return True
    text = f"{type(error).__name__} {message}".lower()
    if any(word in text for word in TRANSIENT_WORDS):
        return True
    cause = error.__cause__
    return cause is not None and cause is not error and is_transient(cause)


def error_usage(error: BaseException) -> tuple[int, int]:
    """Tokens a failed call was billed, where its error says (a `usage_metadata` mapping), else 0."""
    usage = getattr(error, "usage_metadata", None)
    if not isinstance(usage, dict):
        return 0, 0
    return int(usage.get("input_tokens", 0) or 0), int(usage.get("output_tokens", 0) or 0)
