"""Re-read finished GRASP eval runs: only the final answer is asked again, with changed settings.

`python -m evals.reread eval-lines/musique_train/grasp.jsonl --out /tmp/reread.jsonl --set
reader_passages=4` forks each line's run at its synthesis, from the run as `grasp eval` left it
(not from a later fork): the plan and the hops are the run's own, so the new answers differ only
where the changed settings act, at one call a question. It prints EM, F1 and tokens before and
after, and each answer that changed. Resumable: questions already in `--out` are skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.metrics import exact_match, token_f1
from evals.qa_runner import answer_of
from graphs.agent.context import GraspContext
from graphs.agent.graph import GraspGraph, build_grasp_graph
from graphs.cli.ask_input import set_items
from graphs.cli.fork import begin_fork
from graphs.runtime.checkpoints import open_checkpointer
from graphs.runtime.run_history import Refused
from graphs.runtime.services import resolve_database_url
from graphs.runtime.settings import Settings


async def reread_one(
    graph: GraspGraph, line: dict[str, Any], changed: dict[str, Any]
) -> dict[str, Any]:
    """Fork `line`'s run at its synthesis with `changed`; its new answer, scored."""
    thread = str(line["thread_id"])
    fork = await begin_fork(graph, thread, "synthesis", changed, from_original=True)
    answer = answer_of(await graph.ainvoke(None, fork.config, context=fork.context))
    reader = answer.anatomy.get("synthesize", {})
    return {
        "id": line["id"],
        "prediction": answer.prediction,
        "before": line["prediction"],
        "em": exact_match(answer.prediction, line["gold"]),
        "f1": token_f1(answer.prediction, line["gold"]),
        "em_before": line["em"],
        "f1_before": line["f1"],
        "tokens": answer.input_tokens + answer.output_tokens,
        "tokens_before": line["tokens"],
        "synthesis_input": int(reader.get("input", 0)),
        "citations": list(answer.citations),
    }


async def reread(
    lines: Path, out: Path, changed: dict[str, Any], limit: int | None
) -> list[dict[str, Any]]:
    """Re-read every line of `lines` (the first `limit`) not yet in `out`; all rows of `out`."""
    wanted = [json.loads(text) for text in lines.read_text(encoding="utf-8").splitlines() if text]
    wanted = wanted[:limit] if limit else wanted
    done = (
        [json.loads(t) for t in out.read_text(encoding="utf-8").splitlines() if t]
        if out.exists()
        else []
    )
    seen = {row["id"] for row in done}
    url = await asyncio.to_thread(resolve_database_url, Settings.from_env())
    async with open_checkpointer(url) as saver:
        graph = build_grasp_graph(None, saver)
        for line in wanted:
            if line["id"] in seen:
                continue
            row = await reread_one(graph, line, changed)
            with out.open("a", encoding="utf-8") as sink:  # one line a question: a kill resumes
                sink.write(json.dumps(row) + "\n")
            done.append(row)
    order = {line["id"]: n for n, line in enumerate(wanted)}
    return sorted((r for r in done if r["id"] in order), key=lambda r: order[r["id"]])


def report(rows: Sequence[dict[str, Any]]) -> list[str]:
    """EM, F1 and tokens a question, before and after, then each changed answer."""
    n = max(len(rows), 1)

    def mean(key: str) -> float:
        return sum(float(r[key]) for r in rows) / n

    lines = [
        f"{len(rows)} questions: EM {mean('em_before'):.3f} → {mean('em'):.3f}, "
        f"F1 {mean('f1_before'):.3f} → {mean('f1'):.3f}, "
        f"tokens {mean('tokens_before'):,.0f} → {mean('tokens'):,.0f}"
    ]
    for r in rows:
        if r["prediction"] != r["before"]:
            lines.append(
                f"  {r['id']}: {r['before']!r} (EM {r['em_before']:.0f}) → "
                f"{r['prediction']!r} (EM {r['em']:.0f})"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Re-read, then print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lines", type=Path, help="a `grasp eval` answer-lines file of GRASP runs")
    parser.add_argument("--out", type=Path, required=True, help="the re-read lines (resumed)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        changed = set_items(args.set, GraspContext)
        rows = asyncio.run(reread(args.lines, args.out, changed, args.limit))
    except KeyError as exc:  # a line `grasp eval` did not write
        print(f"refused: a line of {args.lines} has no {exc} field", file=sys.stderr)
        return 2
    except (Refused, ValueError, OSError) as exc:  # a bad setting, no such file or run
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    for text in report(rows):
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
