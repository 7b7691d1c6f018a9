"""One method's runs on several question sets, summarised as one pool of questions.

Issue 31 compares the agentic methods on MuSiQue 1–40 and HotpotQA 1–20 together. Each set is
run on its own corpus (`grasp eval … --name M`); this reads the answer lines of those runs, each
set's closed-book estimates, and writes one summary in the format `grasp eval` writes, so
`grasp eval-report results --markdown docs/results.md` shows the pool as a question set of its
own. SE is computed over the pooled questions, not averaged from the sets' SEs.

    python -m evals.pooled --out results/pooled60/M.summary.json \\
        runs/eval/musique_train/M.jsonl runs/eval/hotpotqa_train/M.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.citation_metrics import summarise_citations
from evals.provenance import run_command
from evals.qa_evaluate import summary_path
from evals.reports import closed_book_estimates
from evals.results import read_jsonl
from evals.summary import summarise


def _summary_of(lines: Path) -> dict[str, Any]:
    path = summary_path(lines)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: no readable summary beside the lines ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not an eval summary")
    return data


def pooled_summary(
    lines: Sequence[Path], p_model: str | None, command: str, first: int | None = None
) -> dict[str, Any]:
    """The pooled summary of the runs whose answer lines are `lines` (one file per set).

    `first`: only each run's first questions, in the order answered (issue 32 reports MuSiQue
    1–20 of runs over 1–40).
    p_i are each set's closed-book estimates (`p_model`'s, else the best-covered model's, as
    `grasp eval-report` reads them); SE is n/a unless every pooled question has one.
    """
    records: list[dict[str, Any]] = []
    probabilities: dict[str, float] = {}
    summaries = []
    for path in lines:
        found = read_jsonl(path)[:first]
        if not found:
            raise ValueError(f"{path}: no answer lines")
        summary = _summary_of(path)
        summaries.append(summary)
        probabilities |= closed_book_estimates(path.parent, p_model) or {}
        records += found
    ids = [str(r["id"]) for r in records]
    if len(set(ids)) != len(ids):
        raise ValueError("the runs share question ids: pooling them would count a question twice")
    methods = {str(s.get("method")) for s in summaries}
    if len(methods) != 1:
        raise ValueError(f"the runs are of different methods: {', '.join(sorted(methods))}")
    commits = list(dict.fromkeys(str(s.get("commit")) for s in summaries))
    groups = summarise(records, probabilities)
    cited = summarise_citations(records)
    return {
        "method": methods.pop(),
        "settings": summaries[0].get("settings"),
        "questions": len(records),
        "answered_now": 0,
        "skipped": len(records),
        "failed": [f for s in summaries for f in s.get("failed", [])],
        "p_samples": min(int(s.get("p_samples") or 0) for s in summaries),
        "groups": [g.as_json() for g in groups],
        "command": command,
        # One commit when the pooled runs agree; otherwise each, so a mixed pool shows as one.
        "commit": " + ".join(commits),
        "pooled_from": [s.get("command") for s in summaries],
        **({"citations": cited.as_json()} if cited is not None else {}),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Write the pooled summary; a bad input is one line on stderr and exit status 2."""
    parser = argparse.ArgumentParser(prog="python -m evals.pooled", description=__doc__)
    parser.add_argument("lines", nargs="+", type=Path, help="a run's <name>.jsonl, one per set")
    parser.add_argument("--out", type=Path, required=True, help="the pooled <name>.summary.json")
    parser.add_argument("--p-model", help="closed-book estimates of this model (default: most)")
    parser.add_argument("--first", type=int, help="only each run's first N questions")
    args = parser.parse_args(argv)
    if args.first is not None and args.first < 1:
        print("error: --first must be at least 1", file=sys.stderr)
        return 2
    given = list(argv) if argv is not None else sys.argv[1:]
    command = run_command(["python", "-m", "evals.pooled", *given])
    try:
        payload = pooled_summary(args.lines, args.p_model, command, args.first)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    overall = payload["groups"][0]
    print(f"{args.out}: {overall['n']} questions, EM {overall['em']:.3f}, F1 {overall['f1']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
