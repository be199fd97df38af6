"""The layer order of safebeal, read from its imports: no import circle, and every arrow between subpackages goes down.

Every module under ``src/safebeal`` is parsed with ``ast`` (nothing is imported) and every ``import`` /
``from ... import`` of a safebeal module is an arrow, wherever it stands: at the top, inside a function (a
function-local import still makes the importer depend on the imported module; it only hides a circle from Python)
and under ``if TYPE_CHECKING:`` (a type named in a signature is a dependency on the module that defines it, so an
upward type reference is an upward arrow too).

An arrow goes to the module the import names: ``from safebeal.scene.graph import SceneGraph`` and
``from safebeal.scene import graph`` both point at ``safebeal.scene.graph``; ``from safebeal.scene import
SceneGraph`` points at the package ``safebeal.scene`` itself (its ``__init__``). Python runs a package's
``__init__`` before any of its submodules whatever the import's form, so what the rules below constrain is who
reads names *defined or re-exported by* an ``__init__``.

(a) No circle among modules (a strongly connected component of more than one module), and no module imports names
    from its own package's ``__init__`` (an ``__init__`` re-exports its submodules; a submodule imports the sibling
    module itself). The root ``safebeal/__init__.py`` only holds ``__version__`` and imports nothing, so it counts
    as a floor utility.
(b) Every arrow from one layer to another goes down :data:`LAYERS`. Inside a layer any arrow is allowed (the
    circle rule still holds there). The CLI (``safebeal.cli``, ``safebeal.train`` and every ``commands.py`` /
    ``*_commands.py`` module) is the top and may import anything.

Failures name the importing file and line, the import and the two modules.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1] / "src"
PKG = ROOT / "safebeal"

#: the layers, bottom to top: a module's layer is that of its subpackage (or top-level module) under safebeal
LAYERS: Tuple[Tuple[str, FrozenSet[str]], ...] = (
    ("floor", frozenset({"safebeal", "errors", "atomic", "capped", "console", "jsonl", "resources", "registry"})),
    ("scene", frozenset({"scene"})),
    ("safety", frozenset({"safety"})),
    ("plans", frozenset({"plans"})),
    ("datasets", frozenset({"datasets"})),
    ("planners", frozenset({"planners"})),
    ("bench", frozenset({"bench"})),
    ("generation", frozenset({"generation"})),
    ("align", frozenset({"align"})),
    ("integrations", frozenset({"hf_export", "inspect_tasks", "check", "testing"})),
    ("cli", frozenset({"cli", "train", "__main__"})),  # train: ``python -m safebeal.train``, the ``safebeal train`` command alone; __main__: ``python -m safebeal``
)
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}
LAYER_OF = {part: name for name, parts in LAYERS for part in parts}

@dataclass(frozen=True)
class Arrow:
    importer: str
    imported: str
    file: str
    line: int
    text: str

    def where(self) -> str:
        return f"{self.file}:{self.line}: {self.text!r} ({self.importer} -> {self.imported})"


def module_files(pkg: Path = PKG) -> Dict[str, Path]:
    out = {}
    for p in sorted(pkg.rglob("*.py")):
        parts = p.relative_to(pkg.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _targets(node: ast.AST, importer: str, is_package: bool, modules: Dict[str, Path]) -> List[str]:
    """The safebeal modules one import statement names (see the module docstring)."""
    out = []
    if isinstance(node, ast.Import):
        for a in node.names:
            name = a.name
            while name and name not in modules:  # ``import safebeal.x.y`` of a namespace package: its deepest module
                name = name.rpartition(".")[0]
            if name.startswith("safebeal"):
                out.append(name)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = importer.split(".") if is_package else importer.split(".")[:-1]
            base = base[: len(base) - node.level + 1]
            mod = ".".join(base + ([node.module] if node.module else []))
        else:
            mod = node.module or ""
        if not mod.startswith("safebeal"):
            return out
        for a in node.names:
            sub = f"{mod}.{a.name}"
            if sub in modules:
                out.append(sub)
            elif mod in modules:
                out.append(mod)
            else:
                raise AssertionError(f"{importer}: 'from {mod} import {a.name}' names no module of src/safebeal")
    return out


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT.parent)) if path.is_relative_to(ROOT.parent) else str(path)


def import_arrows(modules: Optional[Dict[str, Path]] = None) -> List[Arrow]:
    modules = modules if modules is not None else module_files()
    arrows = []
    for name, path in modules.items():
        src = path.read_text()
        lines = src.splitlines()
        for node in ast.walk(ast.parse(src, str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for t in _targets(node, name, path.name == "__init__.py", modules):
                    if t != name:
                        arrows.append(Arrow(name, t, _shown(path), node.lineno, lines[node.lineno - 1].strip()))
    return sorted(set(arrows), key=lambda a: (a.file, a.line, a.imported))


def circles(arrows: List[Arrow]) -> List[FrozenSet[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: Dict[str, Set[str]] = defaultdict(set)
    for a in arrows:
        graph[a.importer].add(a.imported)
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[FrozenSet[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(frozenset(comp))
    return out


def layer(module: str) -> str:
    last = module.rpartition(".")[2]
    if module == "safebeal.cli" or last == "commands" or last.endswith("_commands"):
        return "cli"
    part = module.split(".")[1] if "." in module else module
    if part not in LAYER_OF:
        raise AssertionError(f"{module}: safebeal.{part} is in no layer; add it to LAYERS in tests/test_layers.py")
    return LAYER_OF[part]


def climbing(arrows: List[Arrow]) -> List[Arrow]:
    return [a for a in arrows if RANK[layer(a.imported)] > RANK[layer(a.importer)]]


def own_package_imports(arrows: List[Arrow], modules: Dict[str, Path]) -> List[Arrow]:
    """Arrows from a module to the ``__init__`` of its own package (the root package aside)."""
    out = []
    for a in arrows:
        pkg = a.importer if modules[a.importer].name == "__init__.py" else a.importer.rpartition(".")[0]
        if a.imported == pkg and pkg != "safebeal" and modules[a.importer].name != "__init__.py":
            out.append(a)
    return out


@pytest.fixture(scope="module")
def graph():
    modules = module_files()
    return modules, import_arrows(modules)


def test_no_import_circle(graph):
    _, arrows = graph
    found = circles(arrows)
    msg = []
    for c in found:
        msg.append("circle of " + ", ".join(sorted(c)) + ":")
        msg.extend("  " + a.where() for a in arrows if a.importer in c and a.imported in c)
    assert not found, "\n".join(msg)


def test_no_module_imports_its_own_package_init(graph):
    modules, arrows = graph
    bad = own_package_imports(arrows, modules)
    assert not bad, "import the sibling module, not the package's __init__:\n" + "\n".join(a.where() for a in bad)


def test_every_arrow_between_layers_goes_down(graph):
    _, arrows = graph
    bad = climbing(arrows)
    assert not bad, "arrows that climb the layer order (" + " < ".join(n for n, _ in LAYERS) + "):\n" + \
        "\n".join(f"{a.where()}: {layer(a.importer)} imports {layer(a.imported)}" for a in bad)


def test_every_subpackage_has_a_layer(graph):
    modules, _ = graph
    assert {layer(m) for m in modules} <= set(RANK)


# -- the checker itself, on a small package written here ---------------------------------------------------------
def _write(root: Path, files: Dict[str, str]) -> Dict[str, Path]:
    for rel, text in files.items():
        p = root / "safebeal" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return module_files(root / "safebeal")


def test_checker_finds_function_local_and_type_checking_circles_with_their_lines(tmp_path):
    modules = _write(tmp_path, {
        "__init__.py": "",
        "scene/__init__.py": "from safebeal.scene.graph import G\n",
        "scene/graph.py": "G = 1\n\ndef load():\n    from safebeal.scene.sources import resolve\n",
        "scene/sources.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from safebeal.scene import graph\n",
        "scene/env.py": "from safebeal.scene import G\n",
        "plans/parse.py": "import safebeal.scene.graph as g\n",
    })
    arrows = import_arrows(modules)
    assert [(a.importer, a.imported, a.line) for a in arrows if a.importer != "safebeal.scene"] == [
        ("safebeal.plans.parse", "safebeal.scene.graph", 1),
        ("safebeal.scene.env", "safebeal.scene", 1),
        ("safebeal.scene.graph", "safebeal.scene.sources", 4),
        ("safebeal.scene.sources", "safebeal.scene.graph", 3),
    ]
    assert circles(arrows) == [frozenset({"safebeal.scene.graph", "safebeal.scene.sources"})]
    assert [a.importer for a in own_package_imports(arrows, modules)] == ["safebeal.scene.env"]
    assert climbing(arrows) == []


def test_checker_finds_a_climbing_arrow_and_lets_the_cli_import_anything(tmp_path):
    modules = _write(tmp_path, {
        "__init__.py": "",
        "datasets/worldmodel.py": "def f():\n    from safebeal.planners.parse import parse_plan\n",
        "planners/parse.py": "from safebeal.datasets import worldmodel\n",
        "datasets/commands.py": "from safebeal.align import methods\n",
        "align/methods.py": "",
    })
    arrows = import_arrows(modules)
    up = climbing(arrows)
    assert [(a.importer, a.imported, a.line, a.text) for a in up] == [
        ("safebeal.datasets.worldmodel", "safebeal.planners.parse", 2, "from safebeal.planners.parse import parse_plan")]
    assert up[0].where() == (f"{tmp_path}/safebeal/datasets/worldmodel.py:2: 'from safebeal.planners.parse import "
                             "parse_plan' (safebeal.datasets.worldmodel -> safebeal.planners.parse)")
    assert circles(arrows) == [frozenset({"safebeal.datasets.worldmodel", "safebeal.planners.parse"})]


if __name__ == "__main__":  # print the layer graph: python tests/test_layers.py
    arrows = import_arrows()
    pairs = sorted({(layer(a.importer), layer(a.imported)) for a in arrows if layer(a.importer) != layer(a.imported)})
    for a, b in pairs:
        print(f"{a} -> {b}")
    sys.exit(0)
