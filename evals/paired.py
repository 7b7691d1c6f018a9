"""How far apart two methods' rows are: a paired bootstrap over the questions both answered.

A row of the pooled 60 is one draw: a rerun, a decoding change or a prompt's whitespace moves
several of its answers. Two methods' SEs, and their counts of correct answers, are compared here
by resampling the shared questions with replacement (the same resample for both methods, so a
question hard for one is hard for the other), overall and by hop count as the summaries group
them. Lines are read as `python -m evals.pooled` reads them, each set's closed-book estimates
beside them. No model call; a fixed seed makes the printout repeatable.

    python -m evals.paired --a runs/eval/musique_train/A.jsonl runs/eval/hotpotqa_train/A.jsonl \\
        --b runs/eval/musique_train/B.jsonl runs/eval/hotpotqa_train/B.jsonl
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.metrics import success_economy
from evals.reports import closed_book_estimates
from evals.results import read_jsonl
from evals.summary import ALL, hop_group, is_correct

#: The interval's tails: a central 95 % of the resamples.
TAIL = 0.025


@dataclass(frozen=True)
class Pair:
    """One question as the two methods answered it: tokens, correctness and its bits."""

    tokens_a: int
    tokens_b: int
    correct_a: int
    correct_b: int
    #: The closed-book probability p_i; its bits are −log2 p_i.
    p: float

    @property
    def bits(self) -> float:
        """The question's bits of closed-book surprise."""
        return -math.log2(self.p)


@dataclass(frozen=True)
class PairedGroup:
    """Method A against method B on one group of shared questions.

    `ratio` is SE A / SE B (below 1: A is cheaper per bit solved), NaN where neither solved
    anything; `a_cheaper` the share of resamples where A's SE is below B's, `tied` where they are
    equal (both solve nothing, say). The intervals are the central 95 % of the resamples; the
    ratio's is taken over the resamples where it is defined (`defined` of `resamples`).
    """

    group: str
    n: int
    se_a: float
    se_b: float
    ratio: float
    ratio_low: float
    ratio_high: float
    a_cheaper: float
    tied: float
    correct_diff: int
    diff_low: int
    diff_high: int
    resamples: int
    defined: int


def _totals(pairs: Sequence[Pair]) -> tuple[int, int, float, float, int]:
    tokens_a = sum(p.tokens_a for p in pairs)
    tokens_b = sum(p.tokens_b for p in pairs)
    bits_a = sum(p.correct_a * p.bits for p in pairs)
    bits_b = sum(p.correct_b * p.bits for p in pairs)
    diff = sum(p.correct_a - p.correct_b for p in pairs)
    return tokens_a, tokens_b, bits_a, bits_b, diff


def _ratio(tokens_a: int, tokens_b: int, bits_a: float, bits_b: float) -> float:
    # SE_a / SE_b = (T_a · bits_b) / (T_b · bits_a); zero bits on one side make it 0 or ∞.
    top, bottom = tokens_a * bits_b, tokens_b * bits_a
    if bottom == 0:
        return math.nan if top == 0 else math.inf
    return top / bottom


def _quantile(ordered: Sequence[float], share: float) -> float:
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def paired_group(group: str, pairs: Sequence[Pair], resamples: int, seed: int) -> PairedGroup:
    """A against B on `pairs`, with `resamples` bootstrap draws from `seed`."""
    if not pairs:
        raise ValueError(f"group {group}: no shared questions")
    # The reported SEs are the project's own, which first checks that each p_i lies in (0, 1].
    ps = [p.p for p in pairs]
    se_a = success_economy([p.tokens_a for p in pairs], [p.correct_a for p in pairs], ps)
    se_b = success_economy([p.tokens_b for p in pairs], [p.correct_b for p in pairs], ps)
    tokens_a, tokens_b, bits_a, bits_b, diff = _totals(pairs)
    rng = random.Random(seed)
    ratios: list[float] = []
    diffs: list[int] = []
    cheaper = tied = 0
    for _ in range(resamples):
        drawn = _totals([pairs[rng.randrange(len(pairs))] for _ in pairs])
        left, right = drawn[0] * drawn[3], drawn[1] * drawn[2]  # T_a·bits_b against T_b·bits_a
        cheaper += left < right
        tied += left == right
        ratio = _ratio(*drawn[:4])
        if not math.isnan(ratio):
            ratios.append(ratio)
        diffs.append(drawn[4])
    ratios.sort()
    diffs.sort()
    return PairedGroup(
        group=group,
        n=len(pairs),
        se_a=se_a,
        se_b=se_b,
        ratio=_ratio(tokens_a, tokens_b, bits_a, bits_b),
        ratio_low=_quantile(ratios, TAIL) if ratios else math.nan,
        ratio_high=_quantile(ratios, 1 - TAIL) if ratios else math.nan,
        a_cheaper=cheaper / resamples,
        tied=tied / resamples,
        correct_diff=diff,
        diff_low=int(_quantile(diffs, TAIL)),
        diff_high=int(_quantile(diffs, 1 - TAIL)),
        resamples=resamples,
        defined=len(ratios),
    )


def paired(
    records_a: Sequence[Mapping[str, Any]],
    records_b: Sequence[Mapping[str, Any]],
    probabilities: Mapping[str, float],
    resamples: int = 10_000,
    seed: int = 0,
) -> list[PairedGroup]:
    """A against B overall, then by hop count; both must have answered the same questions."""
    by_id_b = {str(r["id"]): r for r in records_b}
    ids_a = [str(r["id"]) for r in records_a]
    if len(set(ids_a)) != len(ids_a) or len(by_id_b) != len(records_b):
        raise ValueError("a question appears twice in one method's lines")
    if set(ids_a) != set(by_id_b):
        raise ValueError("the two methods answered different questions: nothing to pair")
    missing = [i for i in ids_a if i not in probabilities]
    if missing:
        raise ValueError(
            f"no closed-book estimate for {len(missing)} question(s), e.g. {missing[0]}"
        )
    groups: dict[str, list[Pair]] = {ALL: []}
    for record in records_a:
        other = by_id_b[str(record["id"])]
        pair = Pair(
            tokens_a=int(record["tokens"]),
            tokens_b=int(other["tokens"]),
            correct_a=is_correct(record),
            correct_b=is_correct(other),
            p=probabilities[str(record["id"])],
        )
        groups[ALL].append(pair)
        hop = hop_group(record)
        if hop is not None:
            groups.setdefault(hop, []).append(pair)
    order = [ALL, *sorted((g for g in groups if g != ALL), key=lambda g: int(g[:-3]))]
    return [paired_group(g, groups[g], resamples, seed) for g in order]


def _lines_and_estimates(paths: Sequence[Path]) -> tuple[list[dict[str, Any]], dict[str, float]]:
    records: list[dict[str, Any]] = []
    estimates: dict[str, float] = {}
    for path in paths:
        found = read_jsonl(path)
        if not found:
            raise ValueError(f"{path}: no answer lines")
        records += found
        estimates |= closed_book_estimates(path.parent) or {}
    return records, estimates


def _number(value: float, digits: int) -> str:
    return "n/a" if math.isnan(value) else "∞" if math.isinf(value) else f"{value:,.{digits}f}"


def table(groups: Sequence[PairedGroup], name_a: str, name_b: str) -> list[str]:
    """The comparison as aligned text lines, one group a line."""
    header = (
        f"{'group':6} {'n':>3} {'SE A':>10} {'SE B':>10} {'ratio':>6} "
        f"{'95% interval':>16} {'A cheaper':>9} {'correct A-B':>11} {'95% interval':>12}"
    )
    lines = [f"A = {name_a}, B = {name_b}", header]
    for g in groups:
        interval = f"[{_number(g.ratio_low, 3)}, {_number(g.ratio_high, 3)}]"
        lines.append(
            f"{g.group:6} {g.n:>3} {_number(g.se_a, 1):>10} {_number(g.se_b, 1):>10} "
            f"{_number(g.ratio, 3):>6} {interval:>16} {g.a_cheaper:>9.3f} "
            f"{g.correct_diff:>+11d} {f'[{g.diff_low:+d}, {g.diff_high:+d}]':>12}"
        )
        notes = [f"SEs tied in {g.tied:.3f} of the resamples"] if g.tied else []
        if g.defined < g.resamples:
            notes.append(f"ratio undefined in {g.resamples - g.defined} (neither solved any)")
        if notes:
            lines.append("       " + "; ".join(notes))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Print the paired comparison; a bad input is one line on stderr and exit status 2."""
    parser = argparse.ArgumentParser(prog="python -m evals.paired", description=__doc__)
    parser.add_argument("--a", nargs="+", type=Path, required=True, help="method A's lines")
    parser.add_argument("--b", nargs="+", type=Path, required=True, help="method B's lines")
    parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap draws")
    parser.add_argument("--seed", type=int, default=0, help="the draws' seed")
    args = parser.parse_args(argv)
    try:
        if args.resamples < 1:
            raise ValueError("--resamples must be at least 1")
        records_a, estimates = _lines_and_estimates(args.a)
        records_b, more = _lines_and_estimates(args.b)
        groups = paired(records_a, records_b, estimates | more, args.resamples, args.seed)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(table(groups, args.a[0].stem, args.b[0].stem)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
