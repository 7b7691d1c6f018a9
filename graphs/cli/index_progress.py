"""`grasp index`'s progress line: what is done, and during every long phase what it waits on.

The index graph's updates move the bar while batches run; after them, three steps run side by
side (passage vectors, the unit index, entity linking) and then the passage index is built. The
line names the steps still running, and the passage vectors' count moves with each chunk
stored (the graph's `passage_vectors` custom events), so no phase looks frozen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The steps after the batches, by node, as the line names them while they run.
AFTER_BATCH_STEPS = {
    "embed_passages": "passage vectors",
    "build_unit_index": "unit index",
    "link_entities": "entity linking",
}
#: How a batch's one-line error starts when the database, not the passage, was the problem.
DATABASE_ERROR = "OperationalError:"
#: What PostgreSQL says when its disk is full (SQLSTATE 53100): worth showing as such.
DISK_FULL_TEXT = "No space left on device"


def shown_error(message: str) -> str:
    """A batch error as shown; "" for a database error (the run ends with one line on it)."""
    if DISK_FULL_TEXT in message:
        return f"the database's disk is full: {message.removeprefix(DATABASE_ERROR).strip()}"
    return "" if message.startswith(DATABASE_ERROR) else message


@dataclass
class IndexProgress:
    """The counts an index run has reported so far, and the line that shows them."""

    total: int | None = None
    done: int = 0
    failed: int = 0
    pending: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    vectors: tuple[int, int] | None = None
    running: dict[str, str] = field(default_factory=lambda: dict(AFTER_BATCH_STEPS))
    detail: str = "storing passages"

    @property
    def completed(self) -> int:
        """Passages the batches have finished with, whatever the outcome."""
        return self.done + self.failed + self.pending

    def batches_over(self) -> bool:
        """Whether every batch has reported (the steps after them are running)."""
        return self.total is not None and self.completed >= self.total

    def counts(self) -> str:
        """The batches' outcomes so far."""
        waiting = f" · pending {self.pending}" if self.pending else ""
        return f"done {self.done} · failed {self.failed}{waiting}"

    def waiting_line(self) -> str:
        """The counts, then the steps still running (or the last index build)."""
        if not self.running:
            return f"{self.counts()} · building the passage index"
        steps = []
        for node, name in self.running.items():
            if node == "embed_passages" and self.vectors is not None:
                name = f"{name} {self.vectors[0]}/{self.vectors[1]}"
            steps.append(name)
        return f"{self.counts()} · waiting on {', '.join(steps)}"

    def update(self, node: str, value: dict[str, Any]) -> list[str]:
        """Take one node's update; return the batch errors worth showing."""
        if node == "register_passages":
            self.total = sum(len(b) for b in value.get("batches", []))
            skipped = value["counters"].get("passages_skipped", 0)
            self.detail = f"{skipped} already indexed"
        elif node == "index_batch":
            counters = value.get("counters", {})
            self.done += counters.get("passages_done", 0)
            self.failed += counters.get("passages_failed", 0)
            self.pending += counters.get("passages_pending", 0)
            self.tokens_in += counters.get("input_tokens", 0)
            self.tokens_out += counters.get("output_tokens", 0)
            self.detail = f"{self.counts()} · tokens {self.tokens_in}/{self.tokens_out}"
        elif node in self.running:
            del self.running[node]
        if self.batches_over():
            self.detail = self.waiting_line()
        return [shown_error(m) for m in value.get("errors", []) if shown_error(m)]

    def custom(self, event: Any) -> None:
        """Take a custom event (the passage vectors stored so far)."""
        if isinstance(event, dict) and event.get("event") == "passage_vectors":
            self.vectors = (int(event["stored"]), int(event["total"]))
            if self.batches_over():
                self.detail = self.waiting_line()
