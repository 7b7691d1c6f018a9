"""The page shell shared by run and eval pages: inline CSS and a small script, nothing fetched."""

from __future__ import annotations

from html import escape

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1180px;padding:16px 24px;color:#222}
h1{font-size:20px;margin:4px 0 10px}h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:16px 0 6px}table{border-collapse:collapse;margin:6px 0}
td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.muted{color:#777}.badge{display:inline-block;padding:1px 8px;border-radius:9px;font-size:12px;
color:#fff;background:#777}.badge.done{background:#3a8a3a}.badge.failed{background:#b33}
.badge.unfinished{background:#c80}.answer{font-size:18px;font-weight:600}
.incident.error{color:#b33}.incident.resumed{color:#2a62a8}
svg text{font:12px system-ui,sans-serif;fill:#222}svg .col-label{fill:#666;font-weight:600}
svg .axis{fill:#555}svg .num{fill:#555;font-size:11px}
.plan-node rect{fill:#eef3fb;stroke:#4a78b5;stroke-width:1.5}.plan-node.open rect{fill:#fff;
stroke-dasharray:4 3}.plan-node{cursor:pointer}.plan-node:hover rect{fill:#dbe7f8}
.plan-edge{fill:none;stroke:#555;stroke-width:1.5}
.agent{border:1px solid #ccc;border-radius:6px;padding:6px 12px;margin:10px 0}
.agent.flash{outline:3px solid #e0a000}.round{border-left:3px solid #4a78b5;padding-left:10px;
margin:10px 0}.chosen{font-weight:600}.kw{background:#f1f1f1;border-radius:4px;padding:0 4px}
details summary{cursor:pointer}.scroll{overflow-x:auto}
"""

SCRIPT = """
(function(){
  function flash(index){
    var target=document.getElementById('agent-'+index);
    if(!target){return;}
    target.scrollIntoView({behavior:'smooth',block:'start'});
    target.classList.add('flash');
    setTimeout(function(){target.classList.remove('flash');},1200);
  }
  document.querySelectorAll('.plan-node').forEach(function(node){
    node.addEventListener('click',function(){flash(node.getAttribute('data-index'));});
    node.addEventListener('keydown',function(e){if(e.key==='Enter'){flash(node.getAttribute('data-index'));}});
  });
  document.body.setAttribute('data-viewer-ready','1');
})();
"""


def page(title: str, body: str, attributes: dict[str, str | int | float]) -> str:
    """A whole HTML document: `body` inside, `attributes` as data-* on <body>."""
    data = "".join(f' data-{key}="{escape(str(value))}"' for key, value in attributes.items())
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
        f"<body{data}>{body}<script>{SCRIPT}</script></body></html>\n"
    )


def table(header: list[str], rows: list[list[str]], numeric: set[int] | None = None) -> str:
    """An HTML table; cells are already-escaped HTML, `numeric` columns are right-aligned."""
    numeric = numeric or set()
    head = "".join(
        f'<th class="num">{h}</th>' if i in numeric else f"<th>{h}</th>"
        for i, h in enumerate(header)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
