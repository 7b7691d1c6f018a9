"""`grasp ask`'s live progress: the plan as soon as it exists and, with --stream, every node."""

from __future__ import annotations

from typing import Any

from graphs.cli.ask_report import AgentTrace, plan_lines, summarize, tokens_text
from graphs.runtime.checkpoints import sub_agent_namespace
from graphs.runtime.run_history import say


class LivePrinter:
    """Prints the plan as soon as it exists and, with --stream, every node's result.

    A line of a node that called the model ends with the run's running total of tokens (from the
    `tokens` events on the custom stream).
    """

    def __init__(self, stream: bool) -> None:
        self.stream = stream
        self.agents: dict[str, AgentTrace] = {}  # by checkpoint namespace
        self.total: dict[str, Any] | None = None  # the latest `tokens` event's running total

    def on_event(self, namespace: Any, mode: str, event: Any) -> None:
        """Handle one part of a ["tasks", "custom"] stream."""
        if mode == "tasks":
            self.on_task(namespace, event)
        elif isinstance(event, dict) and event.get("event") == "tokens":
            self.total = event["total"]

    def so_far(self, write: Any) -> str:
        """'  | so far 1770/181 tokens, 10 calls' after a write that holds calls, else ''."""
        spent = isinstance(write, dict) and isinstance(write.get("tokens"), dict)
        return f"  | so far {tokens_text(self.total)}" if spent and self.total else ""

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
            if name == "review_plan" and self.stream and isinstance(write, dict) and write:
                say(f"[{name}] {summarize(name, write)}{self.so_far(write)}")
            if name in ("plan", "review_plan") and isinstance(write, dict):
                if "sub_questions" in write:  # the plan, or an edited or new one
                    for line in plan_lines(write):
                        say(line)
            elif self.stream and name not in ("__start__",):
                say(f"[{name}] {summarize(name, write)}{self.so_far(write)}")
            return
        agent = self.agents.get(namespace[0])
        if agent is None or not self.stream:
            return
        agent.record(name, write)
        line = f"  [sq{agent.index} · {name}] {summarize(name, write, agent.names)}"
        say(line + self.so_far(write))
