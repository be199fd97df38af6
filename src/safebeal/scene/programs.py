"""ActivityPrograms' initial and final graphs, read from the ``virtualhome-eval`` package.

The scene layer loads ``activity:<id>`` scenes itself, so it never imports ``safebeal.datasets``;
``safebeal.datasets.activity_programs`` builds its programs (title, script, goals) on these functions.

A program id is the file stem without ``file`` (``628_2``).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from safebeal.errors import SafebealError
from safebeal.resources import vh_programs_root
from safebeal.scene.graph import SceneGraph, SceneLoadError, read_graph_json


def pid_key(pid: str):
    """Sort key of a program id: ``(628, 2)``; ids of another shape sort last."""
    a, _, b = pid.partition("_")
    return (int(a), int(b or 0)) if a.isdigit() else (10**9, 0)


@lru_cache(maxsize=1)
def program_index() -> Dict[str, Tuple[Path, Path]]:
    """program id -> (script file, graph file), in id order."""
    root = vh_programs_root()
    scripts = {p.stem[len("file"):]: p for p in (root / "executable_programs").rglob("file*.txt")}
    graphs = {p.stem[len("file"):]: p for p in (root / "init_and_final_graphs").rglob("file*.json")}
    missing = sorted(set(scripts) ^ set(graphs))
    if missing:
        raise SafebealError(f"{root}: programs without a graph or graphs without a program: {missing[:5]}")
    return {pid: (scripts[pid], graphs[pid]) for pid in sorted(scripts, key=pid_key)}


def program_paths(pid: str) -> Tuple[Path, Path]:
    pid = pid.removeprefix("file")
    try:
        return program_index()[pid]
    except KeyError:
        raise SceneLoadError(f"unknown ActivityPrograms id {pid!r} (ids look like '628_2')") from None


# One loaded (scene, final graph) per program, held until released: ``load_scene("activity:<id>")`` and
# ``load_program(id).scene()`` return the same object, so per-scene caches (the detector's) are shared.
_LOADED: Dict[str, Tuple[SceneGraph, Optional[Dict[str, Any]]]] = {}
_LOCK = threading.Lock()


def activity_graphs(pid: str) -> Tuple[SceneGraph, Optional[Dict[str, Any]]]:
    """The program's initial scene and its shipped final graph (loaded once, until :func:`release_activity`)."""
    pid = pid.removeprefix("file")
    hit = _LOADED.get(pid)
    if hit is None:
        _script, graph = program_paths(pid)
        init, final, _goal = read_graph_json(graph)
        hit = (SceneGraph(init, source=f"activity:{pid}"), final)
        with _LOCK:
            hit = _LOADED.setdefault(pid, hit)
    return hit


def load_activity_scene(pid: str) -> SceneGraph:
    return activity_graphs(pid)[0]


def release_activity(pid: str) -> None:
    """Drop a program's loaded graphs (reloaded on demand)."""
    with _LOCK:
        _LOADED.pop(pid.removeprefix("file"), None)
