"""The project's import graph, read from the source with `ast`: no cycles, and layers point one way.

Every `import` and `from … import` counts, at any depth (function-level and TYPE_CHECKING imports
included): a cycle hidden inside a function is still a cycle. A lazy by-name import
(`importlib.import_module("evals.commands")` in the CLI) is not an import statement and is allowed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("graphs", "nodes", "store", "evals")

#: What each layer may not import: imports point graphs → nodes → store, and evals → graphs.
FORBIDDEN = {
    "store": {"nodes", "graphs", "evals"},
    "nodes": {"graphs", "evals"},
    "graphs": {"evals"},
    "evals": set(),
}


def module_files() -> dict[str, Path]:
    """Every module under the checked packages by dotted name (a package by its __init__)."""
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def resolve(name: str, modules: Mapping[str, Path]) -> str | None:
    """The project module an imported dotted name lives in (its longest known prefix), if any."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def imported_names(module: str, path: Path) -> Iterator[str]:
    """Dotted names of everything the module imports, anywhere in its body."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                # Relative: drop one package level per dot beyond the current package.
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import mod` imports the module pkg.mod; `from mod import name` imports mod.
            yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph() -> dict[str, set[str]]:
    """Project-internal edges: module → the project modules it imports (self-imports dropped)."""
    modules = module_files()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = {resolve(name, modules) for name in imported_names(module, path)}
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One import cycle as a path that returns to its start, or None (iterative DFS)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    for start in sorted(graph):
        if start in state:
            continue
        path = [start]
        stack = [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            target = next(stack[-1], None)
            if target is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(target) == 1:
                return [*path[path.index(target) :], target]
            elif target not in state:
                state[target] = 1
                path.append(target)
                stack.append(iter(sorted(graph.get(target, ()))))
    return None


def test_cycles_are_found_and_nested_imports_seen(tmp_path: Path) -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def f():\n    from store.engine import x\nif TYPE_CHECKING:\n    import nodes.deps\n"
    )
    assert set(imported_names("evals.probe", probe)) == {"store.engine.x", "nodes.deps"}


def test_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " → ".join(cycle or [])


def test_layers_import_one_way() -> None:
    violations = [
        f"{module} imports {target}"
        for module, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if target.split(".")[0] in FORBIDDEN[module.split(".")[0]]
    ]
    assert not violations, "layering broken:\n" + "\n".join(violations)
