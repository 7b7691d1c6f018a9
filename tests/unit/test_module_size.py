"""Small modules: no product module under graphs/, nodes/, store/ or evals/ over 300 lines.

Alembic migrations and tests are exempt.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("graphs", "nodes", "store", "evals")
MAX_LINES = 300


def oversized_modules() -> dict[str, int]:
    """Every checked module over MAX_LINES, by its path from the repository root."""
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text().splitlines())
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
    }
    return {path: lines for path, lines in sorted(sizes.items()) if lines > MAX_LINES}


def test_no_module_over_300_lines() -> None:
    over = oversized_modules()
    assert not over, "modules over 300 lines (split them by behaviour): " + ", ".join(
        f"{path} ({lines})" for path, lines in over.items()
    )
