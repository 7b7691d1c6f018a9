"""Ask under fire: kill -9 at three moments, provider faults, or the database stopped mid-run.

Every trial must end with the uninterrupted run's answer, and the ledger's successful calls of
its thread must be exactly the uninterrupted run's: none missing, none made twice.
"""

from __future__ import annotations

import time
from collections import Counter
from functools import partial

from evals.faults import scenario
from evals.faults.harness import CaseResult, Finished, Scratch, verdict, wait_until
from store.ledger import run_call_keys, run_failed_calls

CallKey = tuple[str, str | None, int | None]
#: Seconds after a call reached the ledger before the kill, so its checkpoint is written too.
SETTLE_S = 0.7


def ask_args(thread: str) -> list[str]:
    """The `grasp ask` command line of one trial."""
    return ["ask", scenario.QUESTION, "--corpus", scenario.CORPUS, "--thread", thread]


def answer_line(finished: Finished) -> str | None:
    """The `answer: …` line a finished ask printed."""
    return next((ln for ln in finished.stdout.splitlines() if ln.startswith("answer:")), None)


def calls(scratch: Scratch, thread: str) -> Counter[CallKey]:
    """The successful calls a thread's ledger holds."""
    return Counter(run_call_keys(scratch.engine, thread, failed=False))


def has_call(scratch: Scratch, thread: str, key: CallKey) -> bool:
    """Whether the call `key` of the thread has finished."""
    return key in calls(scratch, thread)


class AskCases:
    """The ask cases over one scratch install, sharing the corpus and the uninterrupted run."""

    def __init__(self, scratch: Scratch) -> None:
        self.scratch = scratch
        scenario.build_corpus(scratch.engine)
        self.plain = scenario.write_rules(scratch.path("rules.json"), scenario.replies())
        done = scratch.run(ask_args("faults-baseline"), self.model(self.plain))
        self.answer = answer_line(done)
        if done.returncode != 0 or self.answer is None:
            raise RuntimeError(f"the uninterrupted ask failed: {done.last_error_line}")
        self.expected = calls(scratch, "faults-baseline")

    @staticmethod
    def model(spec: str) -> dict[str, str]:
        """The environment that points `grasp` at a chat model spec."""
        return {"GRASP_CHAT_MODEL": spec}

    def _judge(
        self, result: CaseResult, thread: str, finished: Finished, shown: Finished | None = None
    ) -> None:
        """Count the trial: completed when the answer and the successful calls are the baseline's.

        `shown` is the command whose last stderr line the table reports (default: `finished`).
        """
        found = calls(self.scratch, thread)
        result.rows_lost += sum((self.expected - found).values())
        result.rows_duplicated += sum((found - self.expected).values())
        result.trials += 1
        result.saw((shown or finished).last_error_line)
        if (
            finished.returncode == 0
            and answer_line(finished) == self.answer
            and found == self.expected
        ):
            result.completed += 1
        elif finished.traceback:
            result.notes.append(f"{thread}: traceback")

    def kill(self, point: str, trials: int) -> CaseResult:
        """kill -9 while the call after `point` is in flight, then resume with `--thread`."""
        result = CaseResult(f"kill -9 ask {point}, resume")
        after, slow = scenario.KILL_POINTS[point]
        spec = scenario.write_rules(
            self.scratch.path(f"rules-{slow.replace(' ', '-')}.json"), scenario.replies(slow)
        )
        for trial in range(trials):
            thread = f"faults-kill-{slow.replace(' ', '-')}-{trial}"
            running = self.scratch.start(ask_args(thread), self.model(spec))
            landed = wait_until(running, partial(has_call, self.scratch, thread, after))
            time.sleep(SETTLE_S)
            running.kill()
            running.finish()
            finished_before = sum(calls(self.scratch, thread).values())
            if not landed:
                result.notes.append(f"{thread}: ended before the kill point")
            result.notes.append(
                f"trial {trial}: killed after {finished_before} of "
                f"{sum(self.expected.values())} calls"
            )
            self._judge(result, thread, self.scratch.run(ask_args(thread), self.model(spec)))
        return result

    def provider_faults(self, rate: float, trials: int) -> CaseResult:
        """Faults injected into a fraction `rate` of calls; the run must still answer."""
        result = CaseResult(f"provider faults {rate:.0%}")
        attempts = tokens = 0
        for seed in range(trials):
            thread = f"faults-provider-{rate}-{seed}"
            spec = f"faulty:{rate}:{seed}:{self.plain}"
            self._judge(result, thread, self.scratch.run(ask_args(thread), self.model(spec)))
            failed, tokens_in, tokens_out = run_failed_calls(self.scratch.engine, thread)
            attempts, tokens = attempts + failed, tokens + tokens_in + tokens_out
        result.notes.append(f"{attempts} failed attempts retried, {tokens} tokens flagged failed")
        return result

    def stop_database(self, trials: int) -> CaseResult:
        """`grasp db stop --force` while a call is in flight; resume with `--thread` if it stopped."""
        result = CaseResult("db stopped mid-ask")
        _, slow = scenario.KILL_POINTS["mid sub-agent"]
        spec = scenario.write_rules(self.scratch.path("rules-db.json"), scenario.replies(slow))
        for trial in range(trials):
            thread = f"faults-dbstop-{trial}"
            running = self.scratch.start(ask_args(thread), self.model(spec))
            landed = wait_until(
                running, partial(has_call, self.scratch, thread, ("rewrite", "sq1", 1))
            )
            committed = calls(self.scratch, thread)
            stopped = landed and self.scratch.stop_server()
            first = running.finish()
            result.notes.append(verdict(first, stopped))
            final = first
            if first.returncode != 0:
                final = self.scratch.run(ask_args(thread), self.model(spec))
            lost = committed - calls(self.scratch, thread)
            if lost:
                result.notes.append(f"{thread}: committed calls lost {dict(lost)}")
            self._judge(result, thread, final, shown=first)
        return result
