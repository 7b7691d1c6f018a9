"""Inline SVG of a run: the plan's dependency graph and the per-call token and latency chart.

Plain strings, no library: the page must open offline. Every drawn thing carries data attributes
(what it stands for), so a browser test can check the picture against the checkpoints.
"""

from __future__ import annotations

import textwrap
from html import escape

from graphs.agent.hop_end import shown_answer
from graphs.viewer.model import CallView, PlanNode

BOX_W, BOX_H, COL_GAP, ROW_GAP, HEAD = 230, 74, 70, 18, 28
INPUT_COLOUR, OUTPUT_COLOUR = "#4a78b5", "#e08a3c"


def depth(node: PlanNode, by_index: dict[int, PlanNode], seen: frozenset[int] = frozenset()) -> int:
    """Longest chain of dependencies below a sub-question (0 for one that needs none)."""
    below = [by_index[k] for k in node.depends_on if k in by_index and k not in seen]
    return 1 + max((depth(d, by_index, seen | {node.index}) for d in below), default=-1)


def plan_columns(nodes: list[PlanNode]) -> list[tuple[str, list[PlanNode]]]:
    """Columns left to right: one per superstep that ran sub-agents, then the unrun by depth."""
    by_index = {n.index: n for n in nodes}
    keyed: dict[tuple[int, int], list[PlanNode]] = {}
    for node in nodes:
        key = (0, node.superstep) if node.superstep is not None else (1, depth(node, by_index))
        keyed.setdefault(key, []).append(node)
    columns = []
    for (unrun, number), members in sorted(keyed.items()):
        label = f"not run (layer {number + 1})" if unrun else f"superstep {number}"
        if len(members) > 1 and not unrun:
            label += " · concurrent"
        columns.append((label, members))
    return columns


def box_lines(node: PlanNode) -> list[str]:
    """The text lines of one plan box: the sub-question wrapped, then its answer."""
    lines = textwrap.wrap(f"#{node.index} {node.text}", 34)[:3]
    answer = shown_answer(node.answer) if node.answer is not None else "…"
    lines.append("→ " + textwrap.shorten(answer, 32, placeholder="…"))
    return lines


def plan_svg(nodes: list[PlanNode], edges: list[tuple[int, int]]) -> str:
    """The plan as columns of boxes (a column = one superstep) joined by dependency arrows."""
    if not nodes:
        return '<p class="muted">No plan was made.</p>'
    columns = plan_columns(nodes)
    tallest = max(len(members) for _, members in columns)
    width = len(columns) * (BOX_W + COL_GAP) - COL_GAP + 20
    height = HEAD + tallest * (BOX_H + ROW_GAP) + 10
    where: dict[int, tuple[int, int]] = {}
    parts = [
        f'<svg class="plan" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" data-nodes="{len(nodes)}" data-edges="{len(edges)}" '
        f'role="img" aria-label="plan dependency graph">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
    ]
    for c, (label, members) in enumerate(columns):
        x = 10 + c * (BOX_W + COL_GAP)
        parts.append(f'<text class="col-label" x="{x}" y="16">{escape(label)}</text>')
        for r, node in enumerate(members):
            y = HEAD + r * (BOX_H + ROW_GAP)
            where[node.index] = (x, y)
            state = "answered" if node.answer is not None else "open"
            parts.append(
                f'<g class="plan-node {state}" data-index="{node.index}" '
                f'data-superstep="{node.superstep if node.superstep is not None else ""}" '
                f'tabindex="0"><title>{escape(node.text)}</title>'
                f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="6"/>'
            )
            for i, line in enumerate(box_lines(node)):
                parts.append(f'<text x="{x + 8}" y="{y + 17 + 15 * i}">{escape(line)}</text>')
            parts.append("</g>")
    for source, target in edges:
        if source not in where or target not in where:
            continue
        (x1, y1), (x2, y2) = where[source], where[target]
        start, end = (x1 + BOX_W, y1 + BOX_H / 2), (x2 - 2, y2 + BOX_H / 2)
        bend = (end[0] - start[0]) / 2
        parts.append(
            f'<path class="plan-edge" data-from="{source}" data-to="{target}" '
            f'd="M{start[0]},{start[1]} C{start[0] + bend},{start[1]} {end[0] - bend},{end[1]} '
            f'{end[0]},{end[1]}" marker-end="url(#arrow)"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


LABEL_W, BAR_W, LAT_W, ROW_H = 250, 420, 160, 20


def calls_svg(calls: list[CallView]) -> str:
    """One row per LLM call: input and output tokens stacked, then its latency; cache hits hatched."""
    if not calls:
        return '<p class="muted">No LLM calls were recorded in the checkpoints.</p>'
    most = max(max(c.input + c.output for c in calls), 1)
    slowest = max(max(c.latency_s for c in calls), 1e-9)
    lat_x = LABEL_W + BAR_W + 70
    width = lat_x + LAT_W + 50
    height = 40 + len(calls) * ROW_H + 10
    parts = [
        f'<svg class="calls" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="tokens and latency per LLM call" data-calls="{len(calls)}" '
        f'data-input="{sum(c.input for c in calls)}" data-output="{sum(c.output for c in calls)}">',
        '<defs><pattern id="cached" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#ddd"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#888" stroke-width="3"/></pattern></defs>',
        f'<text class="axis" x="{LABEL_W}" y="14">tokens per call (blue: input, orange: output; '
        f"full width = {most:,})</text>",
        f'<text class="axis" x="{lat_x}" y="14">latency, s (max {slowest:.3f})</text>',
    ]
    for i, call in enumerate(calls):
        y = 28 + i * ROW_H
        w_in = BAR_W * call.input / most
        w_out = BAR_W * call.output / most
        fill_in = "url(#cached)" if call.cached else INPUT_COLOUR
        fill_out = "url(#cached)" if call.cached else OUTPUT_COLOUR
        note = " · cached" if call.cached else ""
        note += "" if call.in_tally else " · not yet in the tally"
        parts.append(
            f'<g class="call{" cached" if call.cached else ""}" data-step="{call.step}" '
            f'data-node="{escape(call.node)}" data-agent="{escape(call.agent or "")}" '
            f'data-input="{call.input}" data-output="{call.output}" '
            f'data-cached="{str(call.cached).lower()}" data-in-tally="{str(call.in_tally).lower()}" '
            f'data-latency="{call.latency_s}"><title>{escape(call.label)}: {call.input} in, '
            f"{call.output} out, {call.latency_s:.3f} s{note}</title>"
            f'<text x="{LABEL_W - 6}" y="{y + 13}" text-anchor="end">{escape(call.label)}{note}</text>'
            f'<rect x="{LABEL_W}" y="{y}" width="{w_in:.1f}" height="{ROW_H - 5}" fill="{fill_in}"/>'
            f'<rect x="{LABEL_W + w_in:.1f}" y="{y}" width="{w_out:.1f}" height="{ROW_H - 5}" '
            f'fill="{fill_out}" opacity="0.9"/>'
            f'<text x="{LABEL_W + w_in + w_out + 4:.1f}" y="{y + 13}" class="num">'
            f"{call.input}/{call.output}</text>"
            f'<rect x="{lat_x}" y="{y}" width="{LAT_W * call.latency_s / slowest:.1f}" '
            f'height="{ROW_H - 5}" fill="#7a9a5a"/>'
            f'<text x="{lat_x + LAT_W + 4}" y="{y + 13}" class="num">{call.latency_s:.3f}</text>'
            "</g>"
        )
    parts.append("</svg>")
    return "".join(parts)
