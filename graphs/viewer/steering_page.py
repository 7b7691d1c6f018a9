"""The run page's steering parts: the plan review's decisions and the thread's branches."""

from __future__ import annotations

from html import escape
from typing import Any

from graphs.runtime.branches import Branch, tokens_phrase
from graphs.viewer.html_page import table

WHAT = {
    "accept": "accepted",
    "edit": "edited",
    "response": "answered; planned again",
    "refused": "refused",
}


def steps_list(texts: list[str]) -> str:
    """Sub-question texts as a numbered list."""
    return "<ol>" + "".join(f"<li>{escape(text)}</li>" for text in texts) + "</ol>"


def review_html(values: dict[str, Any]) -> str:
    """Each decision of the plan review, in order (nothing when the plan was not reviewed)."""
    decisions = values.get("plan_review") or []
    if not decisions:
        return ""
    items = []
    for d in decisions:
        action = str(d.get("action", ""))
        note = f" — {escape(str(d['note']))}" if d.get("note") else ""
        changed = d.get("before") != d.get("after")
        detail = (
            f'<div class="review-change"><div>before:{steps_list(d.get("before") or [])}</div>'
            f"<div>after:{steps_list(d.get('after') or [])}</div></div>"
            if changed
            else ""
        )
        items.append(
            f'<li class="review" data-action="{escape(action)}"><b>'
            f"{escape(WHAT.get(action, action))}</b>{note}{detail}</li>"
        )
    return f'<h2>Plan review</h2><ol id="plan-review">{"".join(items)}</ol>'


def branches_html(branches: list[Branch]) -> str:
    """The turn's branches side by side: what changed, the answer, the tokens (and spent anew)."""
    if len(branches) < 2:
        return ""
    rows = [
        [
            f'<span data-branch="{escape(b.leaf)}" data-current="{str(b.current).lower()}" '
            f'data-spent-input="{b.spent["input_tokens"]}" data-calls="{b.tokens["calls"]}">'
            f"{'<b>' if b.current else ''}{escape(b.label)}{'</b>' if b.current else ''}</span>",
            escape("; ".join(b.changed) or "-"),
            escape(b.answer) or f'<span class="muted">({escape(b.status)})</span>',
            escape(tokens_phrase(b.tokens)),
            escape(tokens_phrase(b.spent)),
        ]
        for b in branches
    ]
    header = ["branch", "changed", "answer", "tokens (state)", "spent by the branch"]
    return (
        '<h2>Branches</h2><p class="muted">This turn was forked (<code>grasp fork</code>); the '
        "page details the branch in bold, the latest. A branch's state holds the steps it "
        "reused, so its own calls are shown apart.</p>"
        f'<div id="branches" data-branches="{len(branches)}">{table(header, rows)}</div>'
    )
