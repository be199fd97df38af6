"""Scene graphs: load once, parse once, share across many runs.

A :class:`SceneGraph` holds the raw ``{"nodes", "edges"}`` dict and the simulator's ``EnvironmentGraph``
built from it. The simulator's ``EnvironmentState`` layers every change over that graph without modifying
it, so one parsed graph serves any number of executions.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, FrozenSet, Mapping, Optional, Set, Tuple

from safebeal.errors import SafebealError
from safebeal.scene import _sim


class SceneLoadError(SafebealError):
    pass


@dataclass(frozen=True)
class NodeView:
    """A read-only node: class, id, states and properties (upper-case names, as in VirtualHome)."""

    id: int
    class_name: str
    category: Optional[str]
    states: FrozenSet[str]
    properties: FrozenSet[str]

    def __str__(self) -> str:
        return f"<{self.class_name}> ({self.id})"


def _node_view(node) -> NodeView:
    return NodeView(
        node.id,
        node.class_name,
        node.category,
        frozenset(s.name for s in node.states),
        frozenset(p.name for p in node.properties),
    )


class SceneGraph:
    """An initial scene: raw dict, the simulator's graph, and lookup indexes. Treat as immutable."""

    def __init__(self, data: Mapping[str, Any], source: str = "<graph>", goal: Any = None):
        if not isinstance(data, Mapping) or "nodes" not in data or "edges" not in data:
            _check_graph_dict(data, source)
        self.source = source
        self.data = data
        self.goal = goal
        try:
            self.env_graph = _sim.EnvironmentGraph(dict(data))
        except (KeyError, ValueError, TypeError, AttributeError, AssertionError) as exc:
            # validate only on failure (it costs as much as building the graph): find the culprit
            _check_graph_dict(data, source)
            raise SceneLoadError(f"{source}: invalid scene graph: {exc!r}") from exc
        self._views: Dict[int, NodeView] = {}
        self._reverse: Optional[Dict[Tuple[int, str], Set[int]]] = None
        self._lock = threading.Lock()

    # -- nodes -------------------------------------------------------------------------------
    def node_view(self, node) -> NodeView:
        """Cached view of an *original* graph node object."""
        v = self._views.get(node.id)
        if v is None:
            v = self._views[node.id] = _node_view(node)
        return v

    def node(self, node_id: int) -> Optional[NodeView]:
        n = self.env_graph.get_node(node_id)
        return None if n is None else self.node_view(n)

    def __contains__(self, node_id: int) -> bool:
        return self.env_graph.get_node(node_id) is not None

    def ids_of_class(self, class_name: str) -> list[int]:
        return sorted(n.id for n in self.env_graph.get_nodes_by_attr("class_name", class_name))

    @property
    def character_id(self) -> int:
        chars = self.ids_of_class("character")
        if not chars:
            raise SceneLoadError(f"{self.source}: the scene has no character node")
        return chars[0]

    # -- reverse edge index: (to_id, relation) -> {from_id} ---------------------------------
    def reverse_index(self) -> Dict[Tuple[int, str], Set[int]]:
        if self._reverse is None:
            with self._lock:
                if self._reverse is None:
                    rev: Dict[Tuple[int, str], Set[int]] = {}
                    for (from_id, rel), tos in self.env_graph._edge_map.items():
                        name = rel.name  # an enum property: once per key, not once per edge
                        for to_id in tos:
                            key = (to_id, name)
                            s = rev.get(key)
                            if s is None:
                                rev[key] = {from_id}
                            else:
                                s.add(from_id)
                    self._reverse = rev
        return self._reverse

    def __repr__(self) -> str:
        return f"SceneGraph({self.source!r}, {len(self.data['nodes'])} nodes, {len(self.data['edges'])} edges)"


def _check_graph_dict(data: Any, source: str) -> None:
    if not isinstance(data, Mapping) or "nodes" not in data or "edges" not in data:
        raise SceneLoadError(f"{source}: expected a JSON object with 'nodes' and 'edges' (or 'init_graph')")
    ids = set()
    for i, n in enumerate(data["nodes"]):
        if not isinstance(n, Mapping) or "id" not in n or "class_name" not in n:
            raise SceneLoadError(f"{source}: node #{i} lacks 'id' or 'class_name': {str(n)[:120]}")
        for key, enum in (("states", _sim.State), ("properties", _sim.Property)):
            bad = [x for x in n.get(key, []) if str(x).upper() not in enum.__members__]
            if bad:
                raise SceneLoadError(f"{source}: node #{i} ({n['class_name']}) has unknown {key} {bad}")
        ids.add(n["id"])
    for i, e in enumerate(data["edges"]):
        if not isinstance(e, Mapping) or not {"from_id", "to_id", "relation_type"} <= set(e):
            raise SceneLoadError(f"{source}: edge #{i} lacks from_id/relation_type/to_id: {str(e)[:120]}")
        if str(e["relation_type"]).upper() not in _sim.Relation.__members__:
            raise SceneLoadError(f"{source}: edge #{i} has unknown relation_type {e['relation_type']!r}")
        if e["to_id"] not in ids or e["from_id"] not in ids:
            raise SceneLoadError(f"{source}: edge #{i} refers to a node id that does not exist: {dict(e)}")


def read_graph_json(path: Path) -> Tuple[Dict[str, Any], Optional[Dict[str, Any]], Any]:
    """Read a graph file: ``{"nodes","edges"}`` or ``{"init_graph", "final_graph"?, "goal"?}``.

    Returns ``(init, final_or_None, goal_or_None)``.
    """
    try:
        with open(path) as f:
            raw = json.load(f)
    except FileNotFoundError:
        raise SceneLoadError(f"{path}: scene file not found") from None
    except json.JSONDecodeError as exc:
        raise SceneLoadError(f"{path}:{exc.lineno}:{exc.colno}: corrupt JSON: {exc.msg}") from None
    except OSError as exc:
        raise SceneLoadError(f"{path}: cannot read: {exc}") from None
    if isinstance(raw, Mapping) and "init_graph" in raw:
        return raw["init_graph"], raw.get("final_graph"), raw.get("goal")
    return raw, None, None


class LRUCache:
    """A small thread-safe least-recently-used cache (scene graphs are ~1-5 MB each)."""

    def __init__(self, size: int):
        self.size = size
        self._d: "OrderedDict[Any, Any]" = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            if key in self._d:
                self._d.move_to_end(key)
                return self._d[key]
        return None

    def put(self, key, value):
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.size:
                self._d.popitem(last=False)

    def clear(self):
        with self._lock:
            self._d.clear()


_CACHE = LRUCache(64)


def clear_cache() -> None:
    _CACHE.clear()


def load_scene_file(path: Path | str, use_cache: bool = True) -> SceneGraph:
    p = Path(path).expanduser().resolve()
    try:
        key = ("file", str(p), p.stat().st_mtime_ns)
    except FileNotFoundError:
        raise SceneLoadError(f"{path}: scene file not found") from None
    if use_cache:
        hit = _CACHE.get(key)
        if hit is not None:
            return hit
    init, _final, goal = read_graph_json(p)
    scene = SceneGraph(init, source=str(path), goal=goal)
    if use_cache:
        _CACHE.put(key, scene)
    return scene


def load_scene(spec: "str | Path | SceneGraph | Mapping[str, Any]", use_cache: bool = True) -> SceneGraph:
    """Load a scene from a spec (``activity:<program_id>``, ``home:<seed>``, a JSON file path; see
    :mod:`safebeal.scene.sources`), a graph dict, or pass a SceneGraph through."""
    if isinstance(spec, SceneGraph):
        return spec
    if isinstance(spec, Mapping):
        data = spec.get("init_graph", spec)
        return SceneGraph(data, source="<dict>")
    from safebeal.scene.sources import resolve

    return resolve(str(spec), use_cache=use_cache)
