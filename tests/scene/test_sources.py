"""Scene sources: activity:, home: and files resolve through one registry, and the scene layer never imports
safebeal.datasets (the layer above it)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import safebeal.scene
from safebeal.scene import SceneGraph, load_scene
from safebeal.scene.sources import SCENE_SOURCES, split_spec

SCENE_DIR = Path(safebeal.scene.__file__).parent


def _imports(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)


def test_no_scene_module_imports_datasets():
    files = sorted(SCENE_DIR.rglob("*.py"))
    assert len(files) >= 10
    bad = {str(f.relative_to(SCENE_DIR)): m for f in files for m in _imports(f)
           if m == "safebeal.datasets" or m.startswith("safebeal.datasets.")}
    assert bad == {}


def test_the_scan_sees_a_datasets_import(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from safebeal.datasets.activity_programs import load_program\n")
    assert "safebeal.datasets.activity_programs" in set(_imports(f))


def test_registry_holds_the_sources():
    assert SCENE_SOURCES.names() == ["activity", "file", "home"]
    assert split_spec("activity:628_2") == ("activity", "628_2")  # the id stays a string (int('628_2') == 6282)
    assert split_spec("home:7") == ("home", "7")
    assert split_spec("/tmp/a:b.json") == (None, "/tmp/a:b.json")


def test_activity_scene_is_the_programs_scene():
    from safebeal.datasets.activity_programs import load_program

    sg = load_scene("activity:628_2")
    assert sg is load_program("628_2").scene() and sg.source == "activity:628_2"
    assert load_program("628_2").final_graph["nodes"]


def test_home_scenes_are_cached_and_files_still_load(tmp_path):
    a = load_scene("home:7")
    assert isinstance(a, SceneGraph) and a is load_scene("home:7") and a.source == "home:7"
    p = tmp_path / "h.json"
    p.write_text(json.dumps(a.data))
    b = load_scene(str(p))
    assert b.data == json.loads(json.dumps(a.data)) and b is not a
    assert load_scene(f"file:{p}") is b  # the same file, cached by path and mtime


def test_unknown_activity_id():
    from safebeal.errors import SafebealError

    with pytest.raises(SafebealError, match="unknown ActivityPrograms id '0_0'"):
        load_scene("activity:0_0")
