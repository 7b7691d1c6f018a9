"""`grasp ask`'s live progress: the plan as soon as it exists and, with --stream, every node."""

from __future__ import annotations

from typing import Any

from graphs.cli.ask_report import AgentTrace, plan_lines, summarize
from graphs.runtime.checkpoints import sub_agent_namespace
from graphs.runtime.run_history import say


class LivePrinter:
    """Prints the plan as soon as it exists and, with --stream, every node's result."""

    def __init__(self, stream: bool) -> None:
        self.stream = stream
        self.agents: dict[str, AgentTrace] = {}  # by checkpoint namespace

    def on_task(self, namespace: Any, event: Any) -> None:
        """Handle one event of the "tasks" stream (task start, or task result)."""
        name = event["name"]
        if "input" in event:  # a task started
            if not namespace and name == "sub_agent":
                index = event["input"]["index"]
                trace = AgentTrace(index, event["input"]["sub_question"])
                self.agents[sub_agent_namespace(event["id"])] = trace
            return
        write = event.get("result")
        if event.get("error"):
            say(f"{name} failed: {event['error']}")
            return
        if not namespace:
            if name == "plan" and isinstance(write, dict):
                for line in plan_lines(write):
                    say(line)
            elif self.stream and name not in ("__start__",):
                say(f"[{name}] {summarize(name, write)}")
            return
        agent = self.agents.get(namespace[0])
        if agent is None or not self.stream:
            return
        agent.record(name, write)
        say(f"  [sq{agent.index} · {name}] {summarize(name, write, agent.names)}")
