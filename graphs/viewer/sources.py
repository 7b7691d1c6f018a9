"""A run page's sources: the answer's [n] marks, and each citation with its passage and sentence.

Each mark links to its source; each source shows the passage with the supporting sentence
highlighted (the passage's text where the page was given it, else the sentence alone) and, for
GRASP, links to the sub-agent that read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

# pre-line: a note's paragraphs, headings and list items show on their own lines, as written.
STYLE = (
    "<style>.source{margin:6px 0}.source blockquote{margin:4px 0 8px;padding:4px 10px;"
    "border-left:3px solid #3a8a3a;background:#fafafa;white-space:pre-line}"
    ".source.unverified blockquote"
    "{border-left-color:#c80}mark{background:#fff0a0;padding:0 1px}.marks a{text-decoration:none;"
    "font-size:14px;margin-left:3px}</style>"
)


def marks_html(citations: Sequence[Mapping[str, Any]]) -> str:
    """The answer's marks, each a link to its source: ' [1] [2]'."""
    links = "".join(
        f'<a href="#source-{n}" class="mark">[{n}]</a>' for n in range(1, len(citations) + 1)
    )
    return f'<span class="marks" id="marks">{links}</span>' if links else ""


def highlighted(passage: str | None, sentence: str) -> str:
    """The passage escaped, with `sentence` in <mark> (the sentence alone when it is not in it)."""
    if passage is None or sentence not in passage:
        return f"<mark>{escape(sentence)}</mark>"
    start = passage.index(sentence)
    end = start + len(sentence)
    return f"{escape(passage[:start])}<mark>{escape(sentence)}</mark>{escape(passage[end:])}"


def source_html(number: int, citation: Mapping[str, Any], passage: str | None) -> str:
    """One source: title, file, passage, who read it, verified or not, the highlighted text."""
    pid = int(citation["passage_id"])
    verified = bool(citation.get("verified"))
    hop, round_ = citation.get("hop"), citation.get("round")
    found = f"passage {pid}"
    if hop is not None:
        read = f"sq{hop}" + (f" round {round_}" if round_ is not None else "")
        found += f' · read by <a href="#agent-{hop}">{escape(read)}</a>'
    origin = f" · {escape(str(citation['source']))}" if citation.get("source") else ""
    badge = (
        '<span class="badge done">verified</span>'
        if verified
        else '<span class="badge unfinished">unverified</span>'
    )
    return (
        f'<li class="source{"" if verified else " unverified"}" id="source-{number}" '
        f'data-passage="{pid}" data-verified="{str(verified).lower()}" '
        f'data-hop="{"" if hop is None else hop}" data-round="{"" if round_ is None else round_}">'
        f"<b>{escape(str(citation['title']))}</b>{origin} · {found} · {badge}"
        f'<blockquote class="passage" id="passage-{number}">'
        f"{highlighted(passage, str(citation['text']))}</blockquote></li>"
    )


def sources_html(citations: Sequence[Mapping[str, Any]] | None, passages: Mapping[int, str]) -> str:
    """The Sources section (nothing for a run from before citations or without an answer yet)."""
    if citations is None:
        return ""
    if not citations:
        return '<h2>Sources</h2><p class="muted" id="sources">none: no evidence was read</p>'
    items = "".join(
        source_html(n, c, passages.get(int(c["passage_id"])))
        for n, c in enumerate(citations, start=1)
    )
    warning = (
        ""
        if any(c.get("verified") for c in citations)
        else '<p class="incident error" id="unsupported">No source states the answer: '
        "check it before you rely on it.</p>"
    )
    return f'{STYLE}<h2>Sources</h2>{warning}<ol id="sources">{items}</ol>'
