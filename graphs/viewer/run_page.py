"""A run's page: answer, plan DAG, each sub-agent's rounds, the call chart, the steps, incidents."""

from __future__ import annotations

from html import escape
from typing import Any

from graphs.agent.hop_end import shown_answer
from graphs.viewer.html_page import page, table
from graphs.viewer.model import AgentView, RoundView, RunView, StepView
from graphs.viewer.sources import marks_html, sources_html
from graphs.viewer.steering_page import branches_html, review_html
from graphs.viewer.svg import calls_svg, plan_svg

CANDIDATES_SHOWN = 12


def header(view: RunView) -> str:
    """Question, answer, status and what the run cost."""
    tally = view.tally
    wall = f"{view.wall_s:.1f} s" if view.wall_s is not None else "n/a"
    settings = ", ".join(f"{k}={v}" for k, v in sorted(view.settings.items())) or "defaults"
    earlier = (
        f' <span class="muted">· turn {view.turn} of {len(view.turns)}</span>'
        if len(view.turns) > 1
        else ""
    )
    answer = escape(view.answer) if view.answer else '<span class="muted">(none yet)</span>'
    marks = marks_html(view.citations or [])
    why = f'<p class="muted">{escape(view.justification)}</p>' if view.justification else ""
    return (
        f"<h1>{escape(view.question) or escape(view.graph + ' run')}</h1>"
        f"<p>thread <code>{escape(view.thread)}</code> · graph <b>{escape(view.graph)}</b> · "
        f'<span class="badge {escape(view.status)}" id="status">{escape(view.status)}</span>'
        f"{earlier}</p>"
        f'<p class="answer"><span id="answer">{answer}</span>{marks}</p>{why}'
        f'<p id="totals">tokens (from the run state): <b>{tally.get("input_tokens", 0):,}</b> in / '
        f"<b>{tally.get('output_tokens', 0):,}</b> out, {tally.get('calls', 0)} LLM calls · "
        f"wall time {wall}</p>"
        f'<p class="muted" id="settings">settings: {escape(settings)}</p>'
    )


def conversation(view: RunView) -> str:
    """A conversation thread's turns in order; this page details the marked one."""
    if len(view.turns) < 2:
        return ""
    rows = []
    for t in view.turns:
        here = t.number == view.turn
        marker = ' id="this-turn"' if here else ""
        where = "shown below" if here else f"grasp view {escape(view.thread)} --turn {t.number}"
        answer = escape(t.answer) or "(no answer yet)"
        rows.append(
            f'<li class="turn" data-turn="{t.number}"{marker}><b>{escape(t.question)}</b> → '
            f'{answer} <span class="muted">{t.input_tokens:,} in / {t.output_tokens:,} out · '
            f"{escape(t.status)} · {where}</span></li>"
        )
    return f'<h2>Conversation</h2><ol id="turns">{"".join(rows)}</ol>'


def clipped(text: str, limit: int = 160) -> str:
    """Escaped text; a long one cut, the whole of it one click away."""
    if len(text) <= limit:
        return escape(text)
    return f"<details><summary>{escape(text[:limit])}…</summary>{escape(text)}</details>"


def incidents(view: RunView) -> str:
    """Errors and resumptions, by step."""
    if not view.incidents:
        return ""
    items = "".join(
        f'<li class="incident {escape(i.kind)}" data-kind="{escape(i.kind)}" data-step="{i.step}">'
        f"step {i.step}: <b>{escape(i.kind)}</b> {clipped(i.text)}</li>"
        for i in view.incidents
    )
    return f'<h2>Errors and resumptions</h2><ul id="incidents">{items}</ul>'


def plan(view: RunView) -> str:
    """The plan text and its DAG (boxes in one column ran in the same superstep)."""
    if not view.plan_nodes:
        return ""
    text = escape(view.plan) if view.plan else "(no plan: the question is answered as one hop)"
    return (
        f"<h2>Plan</h2><p>{text}</p>"
        '<p class="muted">One column per superstep: sub-questions in the same column ran '
        "concurrently. Arrows point from a sub-question to the ones that use its answer (#k). "
        "Click a box to see its sub-agent.</p>"
        f'<div class="scroll">{plan_svg(view.plan_nodes, view.plan_edges)}</div>'
    )


def round_html(r: RoundView) -> str:
    """One search round: statement, candidates with scores, choice, passages, notes, decision."""
    keywords = " ".join(f'<span class="kw">{escape(k)}</span>' for k in r.keywords) or "(none)"
    rows = [
        [
            f'<span class="{"chosen" if c.chosen else ""}">{escape(c.name)}</span>',
            escape(c.type),
            f"{c.score:.3f}",
            "✓" if c.chosen else "",
        ]
        for c in r.candidates[:CANDIDATES_SHOWN]
    ]
    more = len(r.candidates) - CANDIDATES_SHOWN
    candidates = (
        table(["entity", "type", "score", "chosen"], rows, {2})
        + (f'<p class="muted">… {more} more</p>' if more > 0 else "")
        if r.candidates
        else '<p class="muted">no graph search this round</p>'
    )
    passages = "".join(
        f'<li data-passage="{p.id}"><details><summary><b>{escape(p.title)}</b> · vote '
        f"{p.score:.3f}</summary>{escape(p.text)}</details></li>"
        for p in r.passages
    )
    names = {c.id: c.name for c in r.candidates}
    chosen = escape(", ".join(names.get(i, f"#{i}") for i in r.chosen)) or "(none)"
    notes = "".join(f"<li>{escape(o)}</li>" for o in r.observations)
    if r.decision == "DONE":
        verdict = f"DONE → <b>{escape(shown_answer(r.answer))}</b>"
    else:
        verdict = escape(r.decision or "(not decided: the run stopped here)")
    return (
        f'<div class="round" data-iteration="{r.iteration}" data-decision="{escape(r.decision)}" '
        f'data-candidates="{len(r.candidates)}" data-chosen="{len(r.chosen)}" '
        f'data-passages="{len(r.passages)}">'
        f"<h4>round {r.iteration}</h4>"
        f"<p>search: “{escape(r.statement)}” · keywords {keywords}</p>"
        f"{candidates}"
        f"<p>entities chosen ({len(r.chosen)}): {chosen}</p>"
        f"<p>passages read ({len(r.passages)}):</p><ul>{passages}</ul>"
        f"<p>observations:</p><ul>{notes or '<li class=muted>(none)</li>'}</ul>"
        f'<p class="decision">decision: {verdict}</p></div>'
    )


def agent_html(agent: AgentView) -> str:
    """A sub-agent's section."""
    deps = "".join(f"<li>{escape(q)} → {escape(a)}</li>" for q, a in agent.dependencies)
    error = f'<p class="incident error">error: {clipped(agent.error)}</p>' if agent.error else ""
    return (
        f'<section class="agent" id="agent-{agent.index}" data-index="{agent.index}" '
        f'data-rounds="{len(agent.rounds)}" data-status="{escape(agent.status)}" '
        f'data-step="{agent.step}" data-input="{agent.input_tokens}" '
        f'data-output="{agent.output_tokens}">'
        f"<h3>sq{agent.index}: {escape(agent.sub_question)} "
        f'<span class="badge {escape(agent.status)}">{escape(agent.status)}</span></h3>'
        f'<p class="muted">superstep {agent.step} · {len(agent.rounds)} round(s) · '
        f"{agent.input_tokens:,} in / {agent.output_tokens:,} out tokens</p>"
        + (f"<p>builds on:</p><ul>{deps}</ul>" if deps else "")
        + error
        + "".join(round_html(r) for r in agent.rounds)
        + "</section>"
    )


def by_node(view: RunView) -> str:
    """Tokens and calls per node, from the checkpointed calls (cache hits counted apart)."""
    sums: dict[str, list[Any]] = {}
    for c in view.calls:
        row = sums.setdefault(c.node, [0, 0, 0, 0, 0.0])
        row[0] += c.input
        row[1] += c.output
        row[2] += 1
        row[3] += int(c.cached)
        row[4] += c.latency_s
    rows = [
        [escape(node), f"{a:,}", f"{b:,}", str(n), str(cached), f"{lat:.2f}"]
        for node, (a, b, n, cached, lat) in sorted(sums.items())
    ]
    return table(["node", "input", "output", "calls", "cached", "latency s"], rows, {1, 2, 3, 4, 5})


def costs(view: RunView) -> str:
    """The call chart, the per-node table and what the ledger holds."""
    ledger = ""
    if view.ledger is not None:
        lg = view.ledger
        ledger = (
            f'<p id="ledger" data-calls="{lg.calls}" data-cached="{lg.cached}" '
            f'data-failed="{lg.failed}">ledger: '
            f"{lg.calls} calls ({lg.cached} from cache), {lg.input_tokens:,} in / "
            f"{lg.output_tokens:,} out, {lg.latency_s:.2f} s of model time · models: "
            f"{escape(', '.join(lg.models) or '(none)')}"
            + (
                f" · {lg.failed} failed attempt{'' if lg.failed == 1 else 's'} "
                f"({lg.failed_tokens:,} tokens billed, retried or given up)"
                if lg.failed
                else ""
            )
            + "</p>"
        )
        if lg.calls != len(view.calls):
            ledger += (
                '<p class="muted">The ledger counts every call made for this thread, the '
                "checkpoints only those whose step was saved (a call whose step was cut off is "
                "made again on resume, or the thread holds earlier runs).</p>"
            )
    return (
        "<h2>Tokens and latency per call</h2>"
        '<p class="muted">In run order, labelled by superstep, sub-agent, node and round. '
        "Hatched bars were served from the response cache.</p>"
        f'<div class="scroll">{calls_svg(view.calls)}</div>'
        f"<h3>By node</h3>{by_node(view)}{ledger}"
    )


def step_rows(steps: list[StepView]) -> str:
    """Every superstep and the nodes that ran in it."""
    rows = []
    for step in steps:
        for task in step.tasks:
            text = clipped(task.error) if task.error else escape(task.summary)
            rows.append(
                [
                    str(step.step),
                    escape(task.name),
                    f'<span class="badge {"done" if task.status == "done" else "failed" if task.status == "failed" else "unfinished"}">{escape(task.status)}</span>',
                    text,
                    f"{task.input_tokens:,}/{task.output_tokens:,}",
                    f"{step.seconds:.2f}" if step.seconds is not None else "",
                ]
            )
    return (
        '<h2>Steps</h2><div id="steps" data-steps="'
        + str(len(steps))
        + '">'
        + table(["step", "node", "status", "wrote", "tokens in/out", "s"], rows, {0, 4, 5})
        + "</div>"
    )


def render_run(view: RunView) -> str:
    """The whole page of one run."""
    body = (
        header(view)
        + sources_html(view.citations, view.cited_passages)
        + branches_html(view.branches)
        + conversation(view)
        + incidents(view)
        + plan(view)
        + review_html(view.values)
        + (
            "<h2>Sub-agents</h2>" + "".join(agent_html(a) for a in view.agents)
            if view.agents
            else ""
        )
        + costs(view)
        + step_rows(view.steps)
    )
    tally = view.tally
    attributes: dict[str, str | int | float] = {
        "thread": view.thread,
        "graph": view.graph,
        "status": view.status,
        "plan-nodes": len(view.plan_nodes),
        "plan-edges": len(view.plan_edges),
        "agents": len(view.agents),
        "input-tokens": int(tally.get("input_tokens", 0)),
        "output-tokens": int(tally.get("output_tokens", 0)),
        "calls": int(tally.get("calls", 0)),
        "incidents": len(view.incidents),
        "turn": view.turn,
        "turns": len(view.turns),
        "branches": len(view.branches),
    }
    return page(f"{view.graph} run {view.thread}", body, attributes)
