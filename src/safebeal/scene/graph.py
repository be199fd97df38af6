"""Scene graphs: load once, parse once, share across many runs.

A :class:`SceneGraph` holds the raw ``{"nodes", "edges"}`` dict and the simulator's ``EnvironmentGraph``
built from it. The simulator's ``EnvironmentState`` layers every change over that graph without modifying
it, so one parsed graph serves any number of executions.
"""

from __future__ import annotations

import json
import operator
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Mapping, Optional, Set, Tuple

from safebeal.errors import SafebealError
import safebeal.scene._sim as _sim


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


_NAME_OF = operator.attrgetter("_name_")
_new_view = object.__new__


def _names(members) -> FrozenSet[str]:
    """The names of enum members: ``member._name_`` is a plain attribute (``member.name`` goes through enum's
    descriptor, and a name table keyed by member pays enum's Python-level ``__hash__``)."""
    return frozenset(map(_NAME_OF, members))


def _node_view(node) -> NodeView:
    """``NodeView(...)`` of a simulator node, without the frozen dataclass's ``__init__`` (a Python frame and one
    ``object.__setattr__`` per field): the same fields, set in the instance dict directly. Views of changed nodes
    are built anew for each state that asks about them."""
    v = _new_view(NodeView)
    v.__dict__.update(id=node.id, class_name=node.class_name, category=node.category, states=_names(node.states),
                      properties=_names(node.properties))
    return v


class SceneGraph:
    """An initial scene: raw dict, the simulator's graph, and lookup indexes. Treat as immutable."""

    def __init__(self, data: Mapping[str, Any], source: str = "<graph>", goal: Any = None,
                 reload: Optional[Callable[[], Mapping[str, Any]]] = None):
        """``reload``: a picklable function that gives ``data`` again (e.g. re-reads the shipped file): a pickled
        scene (the scene cache) then leaves the raw dict out and reloads it on first use; evaluation never needs
        it, and it is three quarters of the pickle."""
        if not isinstance(data, Mapping) or "nodes" not in data or "edges" not in data:
            _check_graph_dict(data, source)
        self.source = source
        self._data: Optional[Mapping[str, Any]] = data
        self._reload = reload
        self.goal = goal
        try:
            self.env_graph = _sim.EnvironmentGraph(dict(data))
        except (KeyError, ValueError, TypeError, AttributeError, AssertionError) as exc:
            # validate only on failure (it costs as much as building the graph): find the culprit
            _check_graph_dict(data, source)
            raise SceneLoadError(f"{source}: invalid scene graph: {exc!r}") from exc
        self._views: Dict[int, NodeView] = {}
        self._reverse: Dict[str, Dict[Tuple[int, str], Set[int]]] = {}  # per relation name
        self._fwd: Dict[str, Tuple[str, Dict[int, Any]]] = {}  # forward_memo
        self._lock = threading.Lock()

    # -- pickling (the scene cache, safebeal.scene.cache): the parsed graphs, not the derived caches ---------
    def __getstate__(self) -> Dict[str, Any]:
        return {"source": self.source, "_data": None if self._reload is not None else self._data, "goal": self.goal,
                "env_graph": self.env_graph, "_reload": self._reload}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        state = dict(state)
        if "data" in state:  # an entry written before ``reload`` existed
            state["_data"] = state.pop("data")
        state.setdefault("_reload", None)
        self.__dict__.update(state)
        self._views, self._reverse, self._fwd, self._lock = {}, {}, {}, threading.Lock()

    @property
    def data(self) -> Mapping[str, Any]:
        """The raw ``{"nodes", "edges"}`` dict (reloaded on first use after unpickling, see ``reload``)."""
        d = self._data
        if d is None:
            d = self._data = self._reload()  # type: ignore[misc]
        return d

    # -- nodes -------------------------------------------------------------------------------
    def node_view(self, node) -> NodeView:
        """Cached view of an *original* graph node object."""
        v = self._views.get(node.id)
        if v is None:
            v = self._views[node.id] = _node_view(node)
        return v

    def node(self, node_id: int) -> Optional[NodeView]:
        v = self._views.get(node_id)  # the original graph's nodes never change: a view once built stays right
        if v is not None:
            return v
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

    # -- forward edges, remembered per node --------------------------------------------------
    def forward_memo(self, relation: str) -> Optional[Tuple[str, Dict[int, Any]]]:
        """The relation's upper-case name and ``from_id -> its targets`` (the simulator's own collection, or ``()``:
        read only) over the original graph's ``relation`` edges, filled per node as StateView.targets asks (None:
        not a simulator relation). The simulator keys its edge map by ``(from_id, Relation member)``, and a member's
        ``__hash__`` is Python code: asked again, a node's targets cost a plain int lookup."""
        entry = self._fwd.get(relation)
        if entry is None:
            name = relation.upper()
            if name not in _sim.Relation.__members__:
                return None
            entry = self._fwd[relation] = self._fwd.setdefault(name, (name, {}))
        return entry

    # -- reverse edge index: (to_id, relation) -> {from_id} ---------------------------------
    def reverse_index(self, relation: str) -> Dict[Tuple[int, str], Set[int]]:
        """``(to_id, relation) -> {from_id}`` over the original graph's edges of one relation, built on first use
        per relation (ON and INSIDE have a few hundred edges, CLOSE thousands)."""
        name = relation.upper()
        return self._reverse_of(name, (name,))

    def reverse_on_inside(self) -> Dict[Tuple[int, str], Set[int]]:
        """``(to_id, "ON" | "INSIDE") -> {from_id}`` over the original graph: the part of the reverse index that
        the safety detector's attribution reads, built in one pass on first use (from the simulator's edge map:
        a few hundred keys, where the graph dict lists thousands of edges)."""
        return self._reverse_of("ON+INSIDE", ("ON", "INSIDE"))

    def _reverse_of(self, key: str, names: Tuple[str, ...]) -> Dict[Tuple[int, str], Set[int]]:
        """One pass over the simulator's edge map for these relations, cached under ``key``."""
        hit = self._reverse.get(key)
        if hit is None:
            with self._lock:
                hit = self._reverse.get(key)
                if hit is None:
                    want = {_sim.Relation[n]: n for n in names}
                    rev: Dict[Tuple[int, str], Set[int]] = {}
                    for (from_id, rel), tos in self.env_graph._edge_map.items():
                        name = want.get(rel)
                        if name is None:
                            continue
                        for to_id in tos:
                            rev.setdefault((to_id, name), set()).add(from_id)
                    hit = self._reverse[key] = rev
        return hit

    def __repr__(self) -> str:
        return f"SceneGraph({self.source!r}, {len(self.data['nodes'])} nodes, {len(self.data['edges'])} edges)"


NODE_KEYS = frozenset({"id", "class_name", "category", "properties", "states", "prefab_name", "bounding_box", "obj_transform"})
EDGE_KEYS = frozenset({"from_id", "relation_type", "to_id"})
GRAPH_KEYS = frozenset({"nodes", "edges"})
FILE_KEYS = frozenset({"init_graph", "final_graph", "goal"})
MAX_SCENE_BYTES = 256 * 1024 * 1024  #: larger scene files are refused (VirtualHome scenes are 1-5 MB)
MAX_NODE_ID = 10**12


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 120 else r[:117] + "..."


def _is_id(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < MAX_NODE_ID


def _check_graph_dict(data: Any, source: str) -> None:
    """Schema check of a ``{"nodes", "edges"}`` graph: types, known keys, known states, properties and relations,
    unique node ids, edges between existing nodes. Raises :class:`SceneLoadError` naming the first culprit."""
    if not isinstance(data, Mapping) or "nodes" not in data or "edges" not in data:
        raise SceneLoadError(f"{source}: expected a JSON object with 'nodes' and 'edges' (or 'init_graph')")
    unknown = set(data) - GRAPH_KEYS
    if unknown:
        raise SceneLoadError(f"{source}: unknown graph key(s) {sorted(map(str, unknown))}; allowed: {sorted(GRAPH_KEYS)}")
    for key in ("nodes", "edges"):
        if not isinstance(data[key], list):
            raise SceneLoadError(f"{source}: '{key}' must be a list, got {_short(data[key])}")
    ids = set()
    for i, n in enumerate(data["nodes"]):
        if not isinstance(n, Mapping) or "id" not in n or "class_name" not in n:
            raise SceneLoadError(f"{source}: node #{i} lacks 'id' or 'class_name': {_short(n)}")
        bad_keys = set(n) - NODE_KEYS
        if bad_keys:
            raise SceneLoadError(f"{source}: node #{i} has unknown key(s) {sorted(map(str, bad_keys))}; allowed: {sorted(NODE_KEYS)}")
        if not _is_id(n["id"]):
            raise SceneLoadError(f"{source}: node #{i}: 'id' must be a non-negative integer, got {_short(n['id'])}")
        if n["id"] in ids:
            raise SceneLoadError(f"{source}: node #{i}: duplicate id {n['id']}")
        if not isinstance(n["class_name"], str) or not n["class_name"]:
            raise SceneLoadError(f"{source}: node #{i}: 'class_name' must be a non-empty name, got {_short(n['class_name'])}")
        if n.get("category") is not None and not isinstance(n["category"], str):
            raise SceneLoadError(f"{source}: node #{i}: 'category' must be a name, got {_short(n['category'])}")
        for key, enum in (("states", _sim.State), ("properties", _sim.Property)):
            vals = n.get(key, [])
            if not isinstance(vals, list) or not all(isinstance(x, str) for x in vals):
                raise SceneLoadError(f"{source}: node #{i} ({n['class_name']}): '{key}' must be a list of names, got {_short(vals)}")
            bad = [x for x in vals if x.upper() not in enum.__members__]
            if bad:
                raise SceneLoadError(f"{source}: node #{i} ({n['class_name']}) has unknown {key} {_short(bad)}")
        ids.add(n["id"])
    for i, e in enumerate(data["edges"]):
        if not isinstance(e, Mapping) or set(e) != EDGE_KEYS:
            raise SceneLoadError(f"{source}: edge #{i} must have exactly from_id, relation_type, to_id: {_short(e)}")
        if not isinstance(e["relation_type"], str) or e["relation_type"].upper() not in _sim.Relation.__members__:
            raise SceneLoadError(f"{source}: edge #{i} has unknown relation_type {_short(e['relation_type'])}")
        if not _is_id(e["from_id"]) or not _is_id(e["to_id"]):
            raise SceneLoadError(f"{source}: edge #{i}: from_id and to_id must be integer node ids: {_short(e)}")
        if e["to_id"] not in ids or e["from_id"] not in ids:
            raise SceneLoadError(f"{source}: edge #{i} refers to a node id that does not exist: {_short(dict(e))}")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a valid JSON number")


def read_graph_json(path: Path) -> Tuple[Dict[str, Any], Optional[Dict[str, Any]], Any]:
    """Read a graph file: ``{"nodes","edges"}`` or ``{"init_graph", "final_graph"?, "goal"?}``, validated
    (:func:`_check_graph_dict`; the goal is checked where it is used, by ``GoalSpec.from_vh_goal``).

    Returns ``(init, final_or_None, goal_or_None)``.
    """
    try:
        with open(path, "rb") as f:
            raw_bytes = f.read(MAX_SCENE_BYTES + 1)
    except FileNotFoundError:
        raise SceneLoadError(f"{path}: scene file not found") from None
    except OSError as exc:
        raise SceneLoadError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(raw_bytes) > MAX_SCENE_BYTES:
        raise SceneLoadError(f"{path}: scene file over {MAX_SCENE_BYTES // 2**20} MB")
    try:
        text = raw_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SceneLoadError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        raw = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise SceneLoadError(f"{path}:{exc.lineno}:{exc.colno}: corrupt JSON: {exc.msg}") from None
    except ValueError as exc:  # NaN / Infinity, or an integer over Python's digit limit
        raise SceneLoadError(f"{path}: corrupt JSON: {str(exc)[:120]}") from None
    except RecursionError:
        raise SceneLoadError(f"{path}: corrupt JSON: nested too deeply") from None
    if not isinstance(raw, Mapping):
        raise SceneLoadError(f"{path}: expected a JSON object with 'nodes' and 'edges' (or 'init_graph'), got a {type(raw).__name__}")
    if "init_graph" in raw:
        unknown = set(raw) - FILE_KEYS
        if unknown:
            raise SceneLoadError(f"{path}: unknown key(s) {sorted(map(str, unknown))}; allowed: {sorted(FILE_KEYS)}")
        _check_graph_dict(raw["init_graph"], f"{path}: init_graph")
        if raw.get("final_graph") is not None:
            _check_graph_dict(raw["final_graph"], f"{path}: final_graph")
        return raw["init_graph"], raw.get("final_graph"), raw.get("goal")
    _check_graph_dict(raw, str(path))
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


#: the loaded scenes, by source (a file's path and mtime, a home's seed): :mod:`safebeal.scene.sources` fills it too
SCENE_CACHE = LRUCache(64)


def clear_cache() -> None:
    SCENE_CACHE.clear()


def load_scene_file(path: Path | str, use_cache: bool = True) -> SceneGraph:
    p = Path(path).expanduser().resolve()
    try:
        key = ("file", str(p), p.stat().st_mtime_ns)
    except FileNotFoundError:
        raise SceneLoadError(f"{path}: scene file not found") from None
    if use_cache:
        hit = SCENE_CACHE.get(key)
        if hit is not None:
            return hit
    init, _final, goal = read_graph_json(p)
    scene = SceneGraph(init, source=str(path), goal=goal)
    if use_cache:
        SCENE_CACHE.put(key, scene)
    return scene
