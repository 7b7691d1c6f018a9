"""What langgraph.json exports besides the GRASP graph: the index graph, compiled for `langgraph dev`.

Building it is cheap and touches nothing: services (database, models) are resolved from the
environment at each run. Like every exported graph it has no checkpointer of its own; the server
brings one (graphs.checkpoints.dev_checkpointer, named in langgraph.json).
"""

from __future__ import annotations

from graphs.index_graph import build_index_graph

index_graph = build_index_graph()
