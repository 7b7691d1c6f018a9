"""The run page's ledger line: failed attempts are counted apart from the answers used."""

from graphs.cli.view import ledger_summary
from store.ledger_reads import LedgerCall


def call(
    tokens_in: int, tokens_out: int, *, cached: bool = False, failed: bool = False
) -> LedgerCall:
    return LedgerCall(
        node="evaluate",
        agent="1",
        iteration=1,
        model="scripted",
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        latency_s=0.5,
        cached=cached,
        failed=failed,
        created_at="",
    )


def test_failed_attempts_are_not_calls_but_their_tokens_show() -> None:
    summary = ledger_summary(
        [
            call(100, 10),
            call(120, 0, failed=True),
            call(100, 10, cached=True),
            call(0, 0, failed=True),
        ]
    )
    assert (summary.calls, summary.cached, summary.input_tokens, summary.output_tokens) == (
        2,
        1,
        200,
        20,
    )
    assert (summary.failed, summary.failed_tokens) == (2, 120)
    assert summary.latency_s == 2.0  # model time includes the failed attempts
