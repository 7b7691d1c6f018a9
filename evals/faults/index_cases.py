"""Index under fire: kill -9 at random moments, or the database stopped, then a plain re-run.

Every trial indexes the same generated corpus into a corpus of its own and must end with exactly
the counts of an uninterrupted run: passages, units, entities, edges, and BM25 counters that
equal their recount.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict
from functools import partial

from evals.faults.harness import CaseResult, Scratch, verdict, wait_until
from store.corpora import CorpusNotFound, corpus_id, corpus_stats
from store.integrity import integrity_problems

PASSAGES = 200
#: Small batches, so a kill can land between many commits rather than a handful.
BATCH_SIZE = 8
_PEOPLE = ["Arvo", "Brita", "Cosmo", "Dagny", "Elin", "Folke", "Greta", "Hakon", "Ilse", "Jorun"]
_PLACES = ["Tarn", "Velby", "Moss", "Kalder", "Ostra", "Rune", "Sandvik", "Ulme"]
_THINGS = ["lighthouse", "mill", "choir", "ferry", "orchard", "archive", "forge", "library"]
#: Compared between a trial and the uninterrupted run (every other count follows from these).
COUNTED = ("passages", "passages_done", "propositions", "entities", "edges", "failures")


def write_corpus(scratch: Scratch, passages: int = PASSAGES) -> str:
    """A deterministic corpus of short made-up passages as a JSON file; returns its path."""
    rng = random.Random(0)
    rows = []
    for n in range(passages):
        person, other = rng.sample(_PEOPLE, 2)
        place, thing = rng.choice(_PLACES), rng.choice(_THINGS)
        text = (
            f"{person} {other[0]}{n} ran the {thing} in {place} for {rng.randint(2, 40)} years. "
            f"{other} visited {place} in {rng.randint(1800, 2000)}. "
            f"The {thing} of {place} burned down once and {person} rebuilt it with {_name(n)}."
        )
        rows.append({"title": f"{thing.title()} of {place} {n}", "text": text})
    path = scratch.path("faults-corpus.json")
    path.write_text(json.dumps(rows))
    return str(path)


def _name(n: int) -> str:
    """A capitalised made-up name, different for every n (an entity of one or a few passages)."""
    letters = "".join("bdgklmnrstv"[int(d)] for d in str(n))
    return f"Ka{letters}o"


def index_args(path: str, corpus: str) -> list[str]:
    """The `grasp index` command line every trial uses."""
    return ["index", path, "--corpus", corpus, "--extractor", "synthetic"] + [
        "--batch-size",
        str(BATCH_SIZE),
    ]


def counts(scratch: Scratch, corpus: str) -> dict[str, int]:
    """The compared counts of a corpus, plus how many integrity checks fail (BM25 counters too)."""
    stats = asdict(corpus_stats(scratch.engine, corpus))
    found = {name: int(stats[name]) for name in COUNTED}
    found["inconsistent"] = sum(
        integrity_problems(scratch.engine, corpus_id(scratch.engine, corpus)).values()
    )
    return found


def compare(result: CaseResult, expected: dict[str, int], found: dict[str, int]) -> bool:
    """Add rows missing or extra against the uninterrupted run; True when all counts match."""
    for name, want in expected.items():
        got = found.get(name, 0)
        result.rows_lost += max(0, want - got)
        result.rows_duplicated += max(0, got - want)
    return found == expected


def baseline(scratch: Scratch, path: str) -> tuple[dict[str, int], float]:
    """Counts of an uninterrupted run, and how long it took."""
    started = time.monotonic()
    done = scratch.run(index_args(path, "faults-baseline"))
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"the uninterrupted index failed: {done.last_error_line}")
    return counts(scratch, "faults-baseline"), elapsed


def kill_index(
    scratch: Scratch, path: str, expected: dict[str, int], trials: int, seed: int
) -> CaseResult:
    """kill -9 `grasp index` once a random number of passages is done, then re-run it.

    The moment is drawn in passages rather than seconds: most of a short run's wall time is the
    interpreter starting, and a kill there would test nothing.
    """
    result = CaseResult("kill -9 index, re-run")
    rng = random.Random(seed)
    moments = []
    for trial in range(trials):
        corpus = f"faults-kill-{trial}"
        target = rng.randint(0, PASSAGES * 9 // 10)  # the last batches finish too fast to hit
        running = scratch.start(index_args(path, corpus))
        if target == 0:
            wait_until(running, partial(corpus_exists, scratch, corpus))
        else:
            wait_until(running, partial(has_done, scratch, corpus, target))
        was_running = running.alive()
        running.kill()
        running.finish()
        at = done_passages(scratch, corpus)
        done = scratch.run(index_args(path, corpus))
        result.trials += 1
        result.saw(done.last_error_line)
        moments.append(str(at) if was_running else f"{at} (had exited)")
        if done.returncode == 0 and compare(result, expected, counts(scratch, corpus)):
            result.completed += 1
        elif done.traceback:
            result.notes.append(f"trial {trial}: traceback")
    result.notes.insert(0, "killed with " + ", ".join(moments) + f" of {PASSAGES} passages done")
    return result


def corpus_exists(scratch: Scratch, corpus: str) -> bool:
    """Whether `grasp index` has created the corpus yet."""
    try:
        corpus_id(scratch.engine, corpus)
    except CorpusNotFound:
        return False
    return True


def stop_database_mid_index(
    scratch: Scratch, path: str, expected: dict[str, int], trials: int
) -> CaseResult:
    """`grasp db stop --force` while `grasp index` writes; then whatever it takes to finish."""
    result = CaseResult("db stopped mid-index")
    for trial in range(trials):
        corpus = f"faults-dbstop-{trial}"
        running = scratch.start(index_args(path, corpus))
        target = max(1, PASSAGES // (2 * (trial + 1)))  # trials stop at different depths
        reached = wait_until(running, partial(has_done, scratch, corpus, target))
        committed = done_passages(scratch, corpus)
        stopped = reached and scratch.stop_server()
        first = running.finish()
        result.trials += 1
        result.saw(first.last_error_line)
        result.notes.append(verdict(first, stopped))
        final = first if first.returncode == 0 else scratch.run(index_args(path, corpus))
        found = counts(scratch, corpus)
        if found["passages_done"] < committed:
            result.notes.append(
                f"trial {trial}: {committed - found['passages_done']} committed passages lost"
            )
        if final.returncode == 0 and compare(result, expected, found):
            result.completed += 1
    return result


def has_done(scratch: Scratch, corpus: str, target: int) -> bool:
    """Whether `corpus` has at least `target` passages indexed."""
    return done_passages(scratch, corpus) >= target


def done_passages(scratch: Scratch, corpus: str) -> int:
    """Passages of `corpus` already indexed (0 before the corpus exists)."""
    try:
        return corpus_stats(scratch.engine, corpus).passages_done
    except CorpusNotFound:
        return 0
