"""The on-disk cache of parsed task scenes: a cached scene is the parsed one, a torn entry is rebuilt, the
switch turns it off, and another process reads what this one wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from safebeal.scene import cache, execute, parse_script
from safebeal.scene.programs import activity_scene, release_activity

PID = "392_2"


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    release_activity(PID)
    yield tmp_path
    release_activity(PID)


def _entry(tmp_path: Path) -> Path:
    return tmp_path / "safebeal" / "scenes" / cache._digest() / f"activity-{PID}.pkl"


def test_cached_scene_equals_the_parsed_one_and_simulates_the_same(fresh, prog392):
    parsed = activity_scene(PID)
    assert _entry(fresh).is_file()
    release_activity(PID)
    cached = activity_scene(PID)  # unpickled from the entry just written
    assert cached is not parsed and cached.source == parsed.source == f"activity:{PID}"
    assert cached.data == parsed.data
    assert sorted(cached.env_graph._node_map) == sorted(parsed.env_graph._node_map)
    assert {k: set(v) for k, v in cached.env_graph._edge_map.items()} == {k: set(v) for k, v in parsed.env_graph._edge_map.items()}
    script = parse_script(prog392.script_text)
    a, b = execute(parsed, script), execute(cached, script)
    assert a.executable and b.executable and a.step_dicts() == b.step_dicts()
    assert cached.reverse_index("ON") == parsed.reverse_index("ON")  # derived caches rebuilt after unpickling


def test_a_torn_entry_is_rebuilt(fresh):
    activity_scene(PID)
    entry = _entry(fresh)
    entry.write_bytes(entry.read_bytes()[:100])  # a write cut off (cannot happen with the rename, but a disk can lie)
    release_activity(PID)
    scene = activity_scene(PID)
    assert len(scene.data["nodes"]) > 100 and entry.stat().st_size > 10_000


def test_switched_off_writes_nothing(fresh, monkeypatch):
    monkeypatch.setenv(cache.ENV_SWITCH, "0")
    activity_scene(PID)
    assert not (fresh / "safebeal").exists()


def test_another_process_reads_the_entry(fresh):
    import safebeal

    activity_scene(PID)
    code = ("import pickle, safebeal.scene.cache as c\n"
            "orig = pickle.load\n"
            "calls = []\n"
            "pickle.load = lambda f: calls.append(1) or orig(f)\n"
            "from safebeal.scene.programs import activity_scene\n"
            f"s = activity_scene('{PID}')\n"
            "print(len(calls), len(s.data['nodes']))")
    env = {**os.environ, "PYTHONPATH": str(Path(safebeal.__file__).parents[1]), "XDG_CACHE_HOME": str(fresh)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "1" and int(out[1]) == len(activity_scene(PID).data["nodes"])


def _digest_of(pkg: Path) -> str:
    """``_digest()`` of the cache module in a copy of the package at ``pkg`` (it digests its own tree)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_cache_copy", pkg / "scene" / "cache.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod._digest()


def test_the_cache_key_changes_with_the_scene_and_dataset_sources(tmp_path):
    """An upgrade that changes how scenes or listings are computed must not read the old entries: a change to any
    source file under ``scene/`` or ``datasets/`` gives a new cache directory, one elsewhere does not."""
    import shutil

    import safebeal

    pkg = tmp_path / "safebeal"
    shutil.copytree(Path(safebeal.__file__).parent, pkg, ignore=shutil.ignore_patterns("__pycache__", "data"))
    base = _digest_of(pkg)
    assert base == _digest_of(pkg) and len(base) == 16
    seen = {base}
    for rel in ("datasets/virtualhome.py", "datasets/saferisks.py", "scene/listing.py", "scene/graph.py"):
        f = pkg / rel
        text = f.read_text()
        f.write_text(text + "\n# changed\n")
        changed = _digest_of(pkg)
        assert changed not in seen, rel
        seen.add(changed)
        f.write_text(text)
        assert _digest_of(pkg) == base
    (pkg / "scene" / "new_module.py").write_text("X = 1\n")  # a new source file counts too
    assert _digest_of(pkg) != base
    (pkg / "scene" / "new_module.py").unlink()
    (pkg / "planners" / "parse.py").write_text("# not part of the key\n")
    assert _digest_of(pkg) == base
