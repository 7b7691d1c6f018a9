"""A run made through `langgraph dev`: its page from our database (where the dev server keeps its
checkpoints) and over the server's HTTP API (`grasp view --server`) show the same facts."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from websockets.sync.client import ClientConnection

from graphs.cli.view import run_page_html, server_page_html
from tests.fixtures.films import PAPER_VOTE
from tests.graph.test_dev_server import dev_server  # noqa: F401  (the fixture)
from tests.viewer.browser import tab
from tests.viewer.run_page_facts import CHAIN, FACTS


async def test_a_dev_server_run_reads_the_same_from_the_database_and_the_api(
    dev_server: httpx.Client,  # noqa: F811
    database_url: str,
    chromium: ClientConnection,
    tmp_path: Path,
) -> None:
    thread = dev_server.post("/threads", json={}).json()["thread_id"]
    response = dev_server.post(
        f"/threads/{thread}/runs/wait",
        json={
            "assistant_id": "grasp",
            "input": {"question": CHAIN},
            "context": {"corpus": "films", **PAPER_VOTE},
        },
    )
    assert response.status_code == 200, response.text
    pages = {
        "database": await run_page_html(database_url, thread),
        "server": await server_page_html(str(dev_server.base_url), thread),
    }
    seen = {}
    for source, html in pages.items():
        path = tmp_path / f"{source}.html"
        path.write_text(html, encoding="utf-8")
        with tab(chromium) as page:
            page.open(path)
            seen[source] = json.loads(page.evaluate(FACTS))
            seen[source]["settings"] = page.evaluate(
                "document.getElementById('settings').textContent"
            )
            assert page.errors == [], page.errors
    assert seen["database"] == seen["server"]
    facts = seen["server"]
    assert (facts["status"], facts["planNodes"], facts["planEdges"]) == ("done", 2, 1)
    assert facts["rounds"] == {"1": 1, "2": 2}
    assert (facts["input"], facts["output"], facts["calls"]) == (1770, 181, 10)
    assert (facts["chartInput"], facts["chartOutput"], facts["chartCalls"]) == (1770, 181, 10)
    assert facts["answer"] == "Lisbon"
    # The run's context, as the server recorded it.
    assert "corpus=films" in facts["settings"] and "graph_id=grasp" in facts["settings"]
