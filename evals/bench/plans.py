"""`grasp bench plans`: run only the planner on real questions and count how its plans are linked.

Per unwritten-needs rule: plans parsed, sub-questions against the gold decomposition's length, and
broken links (a gold hop that uses #k whose counterpart, the predicted step at the same position,
has no dependency). Cheap enough for a CPU: one planner call per question and rule.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from nodes.agent.plan import PlanRejected, make_plan
from nodes.agent.plan_dag import SubQuestion, placeholders
from nodes.agent.plan_links import UnwrittenNeeds
from nodes.llm.client import CallTag, LlmClient, MalformedOutput


def register_bench(sub: Any) -> None:
    """Add `bench plans` to the bench sub-commands."""
    parser = sub.add_parser("plans", help="run only the planner on questions; count broken links")
    parser.add_argument("--questions", required=True, type=Path, help="MuSiQue-style JSON")
    parser.add_argument("--limit", type=int, default=20, help="the first N questions (default 20)")
    parser.add_argument(
        "--unwritten-needs",
        dest="needs_modes",
        nargs="+",
        choices=get_args(UnwrittenNeeds),
        default=["append"],
        help="what becomes of a listed need the text has no place for; several give a column "
        "each (default: append)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the summary table")
    parser.set_defaults(handler=handle)


@dataclass(frozen=True)
class GoldQuestion:
    """A question and, where the file has one, its gold decomposition's hops."""

    question: str
    hops: list[str]


def read_questions(path: Path, limit: int) -> list[GoldQuestion]:
    """The first `limit` questions of a JSON list (or JSON lines) with `question_decomposition`."""
    if not path.is_file():
        raise SystemExit(f"error: no such file: {path}")
    text = path.read_text(encoding="utf-8")
    try:
        records = json.loads(text) if text.lstrip().startswith("[") else _json_lines(text)
    except json.JSONDecodeError as exc:
        raise SystemExit(f"error: {path} is not JSON or JSON lines ({exc})") from None
    questions = []
    for record in records[:limit]:
        if not isinstance(record, dict) or not isinstance(record.get("question"), str):
            raise SystemExit(f"error: {path}: every record needs a 'question' string")
        hops = [str(hop.get("question", "")) for hop in record.get("question_decomposition") or []]
        questions.append(GoldQuestion(record["question"], hops))
    if not questions:
        raise SystemExit(f"error: {path} holds no questions")
    return questions


def _json_lines(text: str) -> list[Any]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@dataclass
class Tally:
    """One column's counts over the questions."""

    plans: int = 0
    parsed: int = 0
    rejected: int = 0
    malformed: int = 0
    reasked: int = 0
    with_gold: int = 0
    same_length: int = 0
    fewer: int = 0
    more: int = 0
    gold_links: int = 0
    broken: int = 0
    missing: int = 0
    fully_linked: int = 0
    steps: int = 0
    gold_steps: int = 0
    seconds: float = 0.0
    fresh_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    repairs: Counter[str] = field(default_factory=Counter)


def compare(gold: GoldQuestion, steps: list[SubQuestion], tally: Tally) -> str:
    """Count one parsed plan against its gold hops; returns the plan's link summary."""
    tally.steps += len(steps)
    if not gold.hops:
        return ""
    tally.with_gold += 1
    tally.gold_steps += len(gold.hops)
    if len(steps) == len(gold.hops):
        tally.same_length += 1
    elif len(steps) < len(gold.hops):
        tally.fewer += 1
    else:
        tally.more += 1
    broken = missing = links = 0
    for position, hop in enumerate(gold.hops, start=1):
        if not placeholders(hop):
            continue
        links += 1
        if position > len(steps):
            missing += 1
        elif not steps[position - 1]["depends_on"]:
            broken += 1
    tally.gold_links += links
    tally.broken += broken
    tally.missing += missing
    tally.fully_linked += broken == missing == 0
    return f"gold {len(gold.hops)} / planned {len(steps)}, links {links}: broken {broken}, missing {missing}"


async def plan_one(
    llm: LlmClient, gold: GoldQuestion, unwritten_needs: UnwrittenNeeds, tally: Tally
) -> list[str]:
    """Plan one question, add it to `tally`, and return the lines that show the plan."""
    tally.plans += 1
    tag = CallTag(node="plan")
    started = time.perf_counter()
    try:
        made = await make_plan(
            llm, question=gold.question, tag=tag, unwritten_needs=unwritten_needs
        )
    except PlanRejected as exc:
        tally.rejected += 1
        tally.seconds += time.perf_counter() - started
        tally.fresh_calls += sum(not r.cached for r in exc.results)
        return [f"  rejected: {exc}"]
    except MalformedOutput as exc:
        tally.malformed += 1
        tally.seconds += time.perf_counter() - started
        return [f"  malformed: {exc}"]
    tally.seconds += time.perf_counter() - started
    tally.fresh_calls += sum(not r.cached for r in made.calls)
    tally.input_tokens += sum(r.input_tokens for r in made.calls)
    tally.output_tokens += sum(r.output_tokens for r in made.calls)
    tally.parsed += 1
    tally.reasked += len(made.calls) > 1
    tally.repairs.update(repair.kind for repair in made.repairs)
    counted = compare(gold, made.sub_questions, tally)
    lines = [f"  {counted}"] if counted else []
    lines += [f"  {s['index']}. {s['text']}  needs {s['depends_on']}" for s in made.sub_questions]
    lines += [f"  repaired {repair}" for repair in made.repairs]
    return lines


def summary(tallies: dict[str, Tally]) -> list[str]:
    """The table: a column per unwritten-needs rule."""
    rows: list[tuple[str, Callable[[Tally], str]]] = [
        ("plans parsed", lambda t: f"{t.parsed}/{t.plans}"),
        ("re-asked (then parsed)", lambda t: str(t.reasked)),
        ("rejected / malformed", lambda t: f"{t.rejected} / {t.malformed}"),
        ("steps planned / gold", lambda t: f"{t.steps} / {t.gold_steps}"),
        ("length = / < / > gold", lambda t: f"{t.same_length} / {t.fewer} / {t.more}"),
        ("gold #k links", lambda t: str(t.gold_links)),
        ("broken links", lambda t: str(t.broken)),
        ("missing hops", lambda t: str(t.missing)),
        ("plans with every link", lambda t: f"{t.fully_linked}/{t.with_gold}"),
        ("repairs", lambda t: ", ".join(f"{k} {n}" for k, n in sorted(t.repairs.items())) or "-"),
        (
            "tokens per plan in/out",
            lambda t: (
                f"{t.input_tokens / t.parsed:.0f} / {t.output_tokens / t.parsed:.0f}"
                if t.parsed
                else "-"
            ),
        ),
        (
            "s per fresh call",
            lambda t: f"{t.seconds / t.fresh_calls:.1f}" if t.fresh_calls else "-",
        ),
    ]
    cells = [[show(t) for t in tallies.values()] for _, show in rows]
    width = max(len(label) for label, _ in rows) + 2
    column = max(len(cell) for row in [list(tallies), *cells] for cell in row) + 2
    lines = [f"{'':<{width}}" + "".join(f"{name:<{column}}" for name in tallies)]
    for (label, _), row in zip(rows, cells, strict=True):
        lines.append(f"{label:<{width}}" + "".join(f"{cell:<{column}}" for cell in row))
    return [line.rstrip() for line in lines]


async def handle(args: argparse.Namespace) -> int:
    """Run `grasp bench plans`."""
    from graphs.cli.main import console
    from graphs.runtime.services import services_for
    from graphs.runtime.settings import Settings

    if args.limit < 1:
        raise SystemExit("error: --limit must be at least 1")
    questions = read_questions(args.questions, args.limit)
    settings = Settings.from_env()
    llm = services_for(settings).llm

    def say(line: str) -> None:
        console.print(line, markup=False, soft_wrap=True)

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    say(
        f"grasp bench plans — {len(questions)} questions of {args.questions}, model "
        f"{llm.model_name}, cache {'on' if settings.llm_cache else 'off'}, "
        f"{os.cpu_count()} CPUs, load average {load}"
    )
    modes: list[UnwrittenNeeds] = list(dict.fromkeys(args.needs_modes))
    tallies: dict[str, Tally] = {mode: Tally() for mode in modes}
    # Question by question, so an interrupted run still compares the rules on the same ones.
    # With the LLM cache on, a second rule re-reads the first one's reply: only the repair differs.
    for number, gold in enumerate(questions, start=1):
        for mode in modes:
            lines = await plan_one(llm, gold, mode, tallies[mode])
            if not args.quiet:
                say(f"[{mode}] q{number}: {gold.question}")
                for line in lines:
                    say(line)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    say(f"load average at the end: {load}")
    for line in summary(tallies):
        say(line)
    return 0
