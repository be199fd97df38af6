"""One name per concept: no public top-level function or class name is defined by two modules of ``src/safebeal``
(issue 35). The CLI's command modules are left out (a command function is named after its command, e.g.
``rescore`` beside ``bench.runner.rescore``), and so are ``register`` (each command module's hook) and ``main``
(a module's ``python -m`` entry)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "safebeal"
SHARED = {"register", "main"}


def is_command_module(path: Path) -> bool:
    return path.name in ("cli.py", "train.py", "commands.py") or path.name.endswith("_commands.py")


def defined_names(pkg: Path = PKG) -> dict:
    where = defaultdict(list)
    for path in sorted(pkg.rglob("*.py")):
        if is_command_module(path):
            continue
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                where[node.name].append(f"{path.relative_to(pkg.parent)}:{node.lineno}")
    return where


def test_no_public_name_is_defined_twice():
    twice = {name: places for name, places in defined_names().items() if len(places) > 1 and name not in SHARED}
    assert not twice, "\n".join(f"{name}: {', '.join(places)}" for name, places in sorted(twice.items()))


def test_the_scan_finds_a_name_defined_twice(tmp_path):
    pkg = tmp_path / "safebeal"
    (pkg / "a").mkdir(parents=True)
    (pkg / "a" / "x.py").write_text("def resolve():\n    pass\n")
    (pkg / "y.py").write_text("class Other:\n    pass\n\n\nclass resolve:\n    pass\n")
    (pkg / "commands.py").write_text("def resolve():\n    pass\n")  # a command module: left out
    assert dict(defined_names(pkg)) == {"resolve": ["safebeal/a/x.py:1", "safebeal/y.py:5"], "Other": ["safebeal/y.py:1"]}
