"""Scene sources: every way to name a scene, resolved in one place.

A scene spec is ``<source>:<argument>`` for a registered source, or else a path to a scene JSON file:

- ``activity:<program id>``: an ActivityPrograms initial graph (``activity:628_2``);
- ``home:<seed>``: a procedural home (:mod:`safebeal.scene.homes`);
- ``file:<path>``, or any other string: a JSON file, ``{"nodes", "edges"}`` or ``{"init_graph", "goal"?}``.

Sources live in :data:`SCENE_SOURCES` (a :class:`safebeal.registry.Registry`); each entry is a function from the
argument string to a :class:`SceneGraph`. The argument is passed as written (``628_2`` must not become an int),
so specs are split here rather than by ``Registry.create``. :func:`load_scene` takes a spec (or a graph dict, or a
:class:`SceneGraph`) and :func:`resolve_scene_spec` maps a spec string to its scene.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from safebeal.registry import Registry
from safebeal.scene.graph import SCENE_CACHE, SceneGraph, load_scene_file

SceneSource = Callable[[str], SceneGraph]
SCENE_SOURCES: Registry[SceneSource] = Registry("scene source")


@SCENE_SOURCES.register("activity", help="activity:<program id>: an ActivityPrograms initial graph (e.g. activity:628_2)")
def activity_source(arg: str) -> SceneGraph:
    from safebeal.scene.programs import load_activity_scene

    return load_activity_scene(arg)


@SCENE_SOURCES.register("home", help="home:<seed>: a procedural home built from a non-negative integer seed")
def home_source(arg: str) -> SceneGraph:
    from safebeal.scene.homes import generate_home, parse_seed

    seed = parse_seed(arg)
    key = ("home", seed)
    hit = SCENE_CACHE.get(key)
    if hit is None:
        hit = SceneGraph(generate_home(seed), source=f"home:{seed}")
        SCENE_CACHE.put(key, hit)
    return hit


@SCENE_SOURCES.register("file", help="file:<path> (or just the path): a scene JSON file, {nodes, edges} or {init_graph, goal?}")
def file_source(arg: str, use_cache: bool = True) -> SceneGraph:
    return load_scene_file(arg, use_cache=use_cache)


def split_spec(spec: str):
    """``"home:7"`` -> ``("home", "7")``; a spec that names no registered source -> ``(None, spec)``."""
    name, sep, arg = spec.partition(":")
    if sep and name in SCENE_SOURCES:
        return name, arg
    return None, spec


def resolve_scene_spec(spec: str, use_cache: bool = True) -> SceneGraph:
    """The scene a spec string names: a registered source's, else the JSON file at that path."""
    name, arg = split_spec(spec)
    if name is None or name == "file":
        return file_source(arg, use_cache=use_cache)
    return SCENE_SOURCES.get(name).factory(arg)


def load_scene(spec: "str | Path | SceneGraph | Mapping[str, Any]", use_cache: bool = True) -> SceneGraph:
    """Load a scene from a spec (``activity:<program_id>``, ``home:<seed>``, a JSON file path; see
    :func:`resolve_scene_spec`), a graph dict, or pass a SceneGraph through."""
    if isinstance(spec, SceneGraph):
        return spec
    if isinstance(spec, Mapping):
        data = spec.get("init_graph", spec)
        return SceneGraph(data, source="<dict>")
    return resolve_scene_spec(str(spec), use_cache=use_cache)
