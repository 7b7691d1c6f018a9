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
from graphs.agent.context import GraspContext
from graphs.agent.fork import fork_metadata, plan_fork, run_settings, start_fork
from graphs.agent.graph import GraspGraph, build_grasp_graph
from graphs.api import make_context
from graphs.cli.ask_input import run_config, set_items
from graphs.runtime.branches import Checkpoint, chain_to
from graphs.runtime.checkpoints import open_checkpointer, read_all_steps
from graphs.runtime.run_history import Refused
from graphs.runtime.services import resolve_database_url
from graphs.runtime.settings import Settings


def original_leaf(checkpoints: Sequence[Checkpoint]) -> Checkpoint:
    """The run's own last checkpoint: the oldest leaf, as every fork branches off later."""
    parents = {c.parent_id for c in checkpoints}
    return min((c for c in checkpoints if c.id not in parents), key=lambda c: c.id)


async def reread_one(
    graph: GraspGraph, line: dict[str, Any], changed: dict[str, Any]
) -> dict[str, Any]:
    """Fork `line`'s run at its synthesis with `changed`; its new answer, scored."""
    thread = str(line["thread_id"])
    checkpoints = [Checkpoint.of_snapshot(s) for s in await read_all_steps(graph, thread)]
    if not checkpoints:
        raise ValueError(f"no checkpoints for thread {thread}")
    chain = chain_to(checkpoints, original_leaf(checkpoints).id)
    plan = plan_fork(chain, "synthesis")
    corpus, stored = run_settings(chain[-1].metadata)
    if corpus is None:
        raise ValueError(f"thread {thread} does not record its corpus")
    settings = {**stored, **changed}
    metadata = {
        **(run_config(thread, plan.question, corpus, settings).get("metadata") or {}),
        **fork_metadata(plan, changed, None),
    }
    config = await start_fork(graph, thread, plan, metadata)
    values = await graph.ainvoke(None, config, context=make_context(corpus, **settings))
    prediction = str(values.get("final_answer") or "").strip()
    tokens = values.get("tokens") or {}
    reader = (tokens.get("by_node") or {}).get("synthesize") or {}
    return {
        "id": line["id"],
        "prediction": prediction,
        "before": line["prediction"],
        "em": exact_match(prediction, line["gold"]),
        "f1": token_f1(prediction, line["gold"]),
        "em_before": line["em"],
        "f1_before": line["f1"],
        "tokens": int(tokens.get("input_tokens", 0)) + int(tokens.get("output_tokens", 0)),
        "tokens_before": line["tokens"],
        "synthesis_input": int(reader.get("input", 0)),
        "citations": values.get("citations") or [],
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
    except (Refused, ValueError, OSError) as exc:  # a bad setting, no such file, no such run
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    for text in report(rows):
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
