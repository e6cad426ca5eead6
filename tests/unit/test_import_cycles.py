"""No import cycle between the parts of any package under src/sponsorbot.

Every import statement counts: top-level, inside a function (a lazy import would otherwise hide
a cycle) and under `TYPE_CHECKING`. Inside each package, its children (modules and
sub-packages) form a graph: child A points at child B when anything in A imports anything in B.
That graph must have no cycle, at every depth (docs/adr/0023-feature-graph.md).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = "sponsorbot"

Graph = Mapping[str, set[str]]


def module_name(path: Path, src: Path) -> str:
    """The dotted name of a source file (a package by its __init__)."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(tree: ast.AST, name: str, is_package: bool) -> set[str]:
    """Every dotted name an import statement anywhere in `tree` reaches (`from a import b`
    gives both `a` and `a.b`, as b may be a module)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def module_graph(src: Path, root: str) -> dict[str, set[str]]:
    """Module → the modules of `root` it imports (names resolved to real modules)."""
    trees = {
        module_name(path, src): (ast.parse(path.read_text()), path.name == "__init__.py")
        for path in (src / root).rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, (tree, is_package) in trees.items():
        targets = set()
        for target in imported(tree, name, is_package):
            # The longest prefix that is a module: `a.b.Name` is the module `a.b`.
            parts = target.split(".")
            while parts and ".".join(parts) not in trees:
                parts.pop()
            if parts:
                targets.add(".".join(parts))
        graph[name] = targets - {name}
    return graph


def sibling_graphs(modules: Graph) -> dict[str, dict[str, set[str]]]:
    """Package → its children's graph: child → the siblings anything in it imports."""
    graphs: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for source, targets in modules.items():
        for target in targets:
            a, b = source.split("."), target.split(".")
            common = 0
            while common < min(len(a), len(b)) and a[common] == b[common]:
                common += 1
            # Only between two children of one package: not a module and its own ancestor.
            if common < len(a) and common < len(b):
                parent = ".".join(a[:common])
                graphs[parent][".".join(a[: common + 1])].add(".".join(b[: common + 1]))
    return graphs


def a_cycle(graph: Graph) -> list[str] | None:
    """One cycle of the graph as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def cycles(modules: Graph) -> Iterable[str]:
    """One line per package whose children import each other in a circle."""
    for parent, graph in sorted(sibling_graphs(modules).items()):
        cycle = a_cycle(graph)
        if cycle is not None:
            yield f"{parent}: {' -> '.join(c.rsplit('.', 1)[-1] for c in cycle)}"


def test_no_package_or_module_cycle_in_src() -> None:
    found = list(cycles(module_graph(SRC, ROOT)))
    assert found == [], "import cycles:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # A lazy import inside a function closes the circle all the same.
        (
            {"a/__init__.py": "", "a/x.py": "from a import y", "a/y.py": "def f():\n import a.x"},
            ["a: x -> y -> x"],
        ),
        # Between sub-packages, through modules deeper down.
        (
            {
                "a/__init__.py": "",
                "a/p/__init__.py": "",
                "a/p/m.py": "from a.q.n import N",
                "a/q/__init__.py": "",
                "a/q/n.py": "from ..p import m",
            },
            ["a: p -> q -> p"],
        ),
        # A package's own __init__ importing its modules is not a cycle; one-way is fine.
        (
            {"a/__init__.py": "from a import x", "a/x.py": "from a.y import Y", "a/y.py": ""},
            [],
        ),
    ],
)
def test_the_check_finds_cycles(tmp_path: Path, files: dict[str, str], expected: list[str]) -> None:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert list(cycles(module_graph(tmp_path, "a"))) == expected
