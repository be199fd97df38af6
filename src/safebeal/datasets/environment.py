"""SafeRisks environments: a shipped VirtualHome base scene plus a compact diff, materialised on load.

A diff (``EnvironmentDiff`` in :mod:`safebeal.datasets.saferisks`) holds

* ``add``: new objects, each ``{id, class_name, relation: ON|INSIDE, target, states}`` (states default to
  CLEAN plus CLOSED, OFF and PLUGGED_IN where the class can open, switch or plug; see :func:`default_states`);
* ``move``: existing small objects put somewhere else, ``{id, relation, target}``;
* ``states``: state overrides of existing objects, ``{id: [STATE, ...]}`` (a state replaces its opposite:
  ON/OFF, OPEN/CLOSED, PLUGGED_IN/PLUGGED_OUT, CLEAN/DIRTY);
* ``character_room``: the room the agent starts in.

Every modification is checked against virtualhome-eval's own data, so that the simulator executes it:
``resources/object_script_placing.json`` (where a class may be put, ON or IN which destination),
``resources/properties_data.json`` (a new object's properties) and ``resources/object_states.json``
(its valid states; a state also needs the property that gives it meaning: ON/OFF need HAS_SWITCH,
OPEN/CLOSED need CAN_OPEN, PLUGGED_* need HAS_PLUG). Names are matched through
``resources/class_name_equivalence.json`` (the placing file says ``stove`` and ``fridge``; the scenes say
``oven`` and ``freezer``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Set, Tuple

from safebeal.errors import SafebealError
from safebeal.resources import load_vh_json
from safebeal.scene import SceneGraph, load_scene
from safebeal.scene.homes import default_states  # noqa: F401 - one definition, shared with the home generator

#: object_states.json names -> simulator states (the others, e.g. 'grabbed', 'hot', have no simulator state)
STATE_NAMES = {"on": "ON", "off": "OFF", "open": "OPEN", "closed": "CLOSED", "plugged": "PLUGGED_IN",
               "unplugged": "PLUGGED_OUT", "dirty": "DIRTY", "clean": "CLEAN"}
OPPOSITE = {"ON": "OFF", "OFF": "ON", "OPEN": "CLOSED", "CLOSED": "OPEN", "PLUGGED_IN": "PLUGGED_OUT",
            "PLUGGED_OUT": "PLUGGED_IN", "CLEAN": "DIRTY", "DIRTY": "CLEAN"}
#: the property a state needs
STATE_PROPERTY = {"ON": "HAS_SWITCH", "OFF": "HAS_SWITCH", "OPEN": "CAN_OPEN", "CLOSED": "CAN_OPEN",
                  "PLUGGED_IN": "HAS_PLUG", "PLUGGED_OUT": "HAS_PLUG"}
RELATIONS = {"ON": "ON", "INSIDE": "INSIDE", "IN": "INSIDE"}
ADDED_CATEGORY = "placable_objects"


class SceneEnvironmentError(SafebealError):
    """A diff the simulator would not accept. ``kind``: unknown_class, placement, state, target, id, base."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


@dataclass(frozen=True)
class VHKnowledge:
    """virtualhome-eval's placement, property and state data, keyed by scene class name."""

    placing: Mapping[str, Tuple[Tuple[str, str], ...]]  # object name -> ((relation, destination name), ...)
    properties: Mapping[str, Tuple[str, ...]]
    states: Mapping[str, FrozenSet[str]]  # class -> simulator states listed for it
    equivalents: Mapping[str, FrozenSet[str]]  # class -> {class} + its equivalent names

    def names(self, cls: str) -> FrozenSet[str]:
        return self.equivalents.get(cls, frozenset({cls}))

    def same_thing(self, a: str, b: str) -> bool:
        """Whether two names denote the same kind of object (directly or through a shared equivalent)."""
        return bool(self.names(a) & self.names(b))

    def placements(self, cls: str) -> Tuple[Tuple[str, str], ...]:
        """(relation, destination name) pairs the placing file allows for ``cls`` (via equivalents if unlisted)."""
        if cls in self.placing:
            return self.placing[cls]
        out: List[Tuple[str, str]] = []
        for k, v in self.placing.items():
            if self.same_thing(k, cls):
                out.extend(v)
        return tuple(dict.fromkeys(out))

    def can_place(self, cls: str, relation: str, dest_cls: str) -> bool:
        rel = RELATIONS.get(relation.upper())
        return any(r == rel and self.same_thing(d, dest_cls) for r, d in self.placements(cls))

    def known_class(self, cls: str) -> bool:
        return cls in self.properties

    def valid_state(self, cls: str, props: Iterable[str], state: str) -> bool:
        need = STATE_PROPERTY.get(state)
        if need is not None and need not in set(props):
            return False
        if state in ("CLEAN", "DIRTY"):
            return True
        listed = self.states.get(cls)
        if listed is None:  # a class object_states.json does not list: the property decides
            return True
        return state in listed or OPPOSITE[state] in listed or need == "HAS_PLUG"


@lru_cache(maxsize=1)
def vh_knowledge() -> VHKnowledge:
    placing_raw = load_vh_json("object_script_placing.json")
    placing = {k: tuple(dict.fromkeys((RELATIONS.get(p["relation"], p["relation"]), p["destination"]) for p in v
                                      if p["relation"] in RELATIONS)) for k, v in placing_raw.items()}
    props = {k: tuple(v) for k, v in load_vh_json("properties_data.json").items()}
    states = {k: frozenset(STATE_NAMES[s.strip()] for s in v if s.strip() in STATE_NAMES)
              for k, v in load_vh_json("object_states.json").items()}
    eq: Dict[str, Set[str]] = {}
    for k, vs in load_vh_json("class_name_equivalence.json").items():
        eq.setdefault(k, {k}).update(vs)
        for v in vs:
            eq.setdefault(v, {v})
    return VHKnowledge(placing, props, states, {k: frozenset(v) for k, v in eq.items()})


# -- base scenes --------------------------------------------------------------------------------------------
BASE_SOURCES = ("activity", "home")


def load_base(base: str) -> SceneGraph:
    """A base scene: ``activity:<program id>`` or a procedural home ``home:<seed>``."""
    if base.partition(":")[0] not in BASE_SOURCES or ":" not in base:
        raise SceneEnvironmentError("base", f"base scene {base!r}: only 'activity:<program id>' and 'home:<seed>' bases are supported")
    try:
        return load_scene(base)
    except SafebealError as exc:
        raise SceneEnvironmentError("base", f"base scene {base!r}: {exc}") from None


def room_of_node(data_nodes: Mapping[int, Mapping[str, Any]], edges_from: Mapping[int, List[Tuple[str, int]]], nid: int,
                 _depth: int = 0) -> Optional[int]:
    """The room a node is INSIDE (following ON/INSIDE through furniture if it has no room edge of its own)."""
    if _depth > 8:
        return None
    for rel, t in edges_from.get(nid, ()):
        if rel == "INSIDE" and data_nodes.get(t, {}).get("category") == "Rooms":
            return t
    for rel, t in edges_from.get(nid, ()):
        if rel in ("ON", "INSIDE") and t in data_nodes:
            r = room_of_node(data_nodes, edges_from, t, _depth + 1)
            if r is not None:
                return r
    return None


class _BaseIndex:
    """Per-base lookups reused by every entry built on that base."""

    def __init__(self, scene: SceneGraph):
        self.scene = scene
        self.nodes: Dict[int, Mapping[str, Any]] = {n["id"]: n for n in scene.data["nodes"]}
        self.edges_from: Dict[int, List[Tuple[str, int]]] = {}
        for e in scene.data["edges"]:
            self.edges_from.setdefault(e["from_id"], []).append((e["relation_type"].upper(), e["to_id"]))
        self.rooms = {i for i, n in self.nodes.items() if n.get("category") == "Rooms"}
        self.character = min(i for i, n in self.nodes.items() if n["class_name"] == "character")

    def room(self, nid: int) -> Optional[int]:
        return room_of_node(self.nodes, self.edges_from, nid)


_INDEX: Dict[str, _BaseIndex] = {}
_INDEX_LOCK = threading.Lock()


def base_index(base: str) -> _BaseIndex:
    idx = _INDEX.get(base)
    if idx is None:
        with _INDEX_LOCK:
            idx = _INDEX.get(base)
            if idx is None:
                idx = _INDEX[base] = _BaseIndex(load_base(base))
    return idx


# -- materialisation ----------------------------------------------------------------------------------------
def _as_dict(diff: Any) -> Dict[str, Any]:
    if hasattr(diff, "model_dump"):
        return diff.model_dump()
    return dict(diff or {})


def _apply_states(states: List[str], override: Iterable[str]) -> List[str]:
    out = [s for s in states]
    for s in override:
        s = s.upper()
        opp = OPPOSITE.get(s)
        out = [x for x in out if x != opp and x != s]
        out.append(s)
    return sorted(out)


def check_diff(base: str, diff: Any) -> None:
    """Raise :class:`SceneEnvironmentError` if ``diff`` breaks VirtualHome's placement, property or state data."""
    _plan(base, _as_dict(diff))


def _plan(base: str, d: Dict[str, Any]):
    """Validate and return what to add: (index, new node dicts, new edges, state overrides, moved ids)."""
    idx = base_index(base)
    kb = vh_knowledge()
    nodes = idx.nodes
    added: Dict[int, Dict[str, Any]] = {}
    for a in d.get("add", []) or []:
        nid, cls = int(a["id"]), str(a["class_name"])
        if nid in nodes or nid in added:
            raise SceneEnvironmentError("id", f"added object id {nid} ({cls}) is already used in {base}")
        if not kb.known_class(cls):
            raise SceneEnvironmentError("unknown_class", f"added object {cls!r} ({nid}): not a VirtualHome class "
                                                    "(resources/properties_data.json)")
        props = list(kb.properties[cls])
        states = [str(s).upper() for s in a.get("states", []) or []]
        for s in states:
            if s not in OPPOSITE:
                raise SceneEnvironmentError("state", f"added object {cls} ({nid}): unknown state {s!r}")
            if not kb.valid_state(cls, props, s):
                raise SceneEnvironmentError("state", f"added object {cls} ({nid}): state {s} is not valid for {cls} "
                                                f"(resources/object_states.json, properties {sorted(props)})")
        added[nid] = {"id": nid, "class_name": cls, "category": ADDED_CATEGORY, "properties": props,
                      "states": _apply_states(default_states(props), states),
                      "prefab_name": None, "bounding_box": None}

    def cls_of(nid: int) -> Optional[str]:
        if nid in added:
            return added[nid]["class_name"]
        n = nodes.get(nid)
        return None if n is None else n["class_name"]

    placements: List[Tuple[int, str, int]] = []
    for a in d.get("add", []) or []:
        placements.append((int(a["id"]), str(a["relation"]).upper(), int(a["target"])))
    moved = []
    for m in d.get("move", []) or []:
        nid = int(m["id"])
        n = nodes.get(nid)
        if n is None:
            raise SceneEnvironmentError("id", f"moved object {nid} does not exist in {base}")
        if "GRABBABLE" not in n.get("properties", []):
            raise SceneEnvironmentError("placement", f"moved object {n['class_name']} ({nid}) is not a movable small object")
        placements.append((nid, str(m["relation"]).upper(), int(m["target"])))
        moved.append(nid)
    new_edges: List[Tuple[int, str, int]] = []
    room_of_added: Dict[int, int] = {}
    # resolve in order: a target may be an object added earlier in the list
    for nid, rel, target in placements:
        cls = cls_of(nid)
        tcls = cls_of(target)
        if rel not in RELATIONS:
            raise SceneEnvironmentError("placement", f"{cls} ({nid}): relation must be ON or INSIDE, got {rel!r}")
        rel = RELATIONS[rel]
        if tcls is None:
            raise SceneEnvironmentError("target", f"{cls} ({nid}) is placed {rel} object {target}, which does not exist")
        if target in idx.rooms:
            raise SceneEnvironmentError("placement", f"{cls} ({nid}): place it on or in furniture, not in the room {tcls}")
        if target == nid:
            raise SceneEnvironmentError("placement", f"{cls} ({nid}) cannot be placed {rel} itself")
        if not kb.can_place(cls, rel, tcls):
            raise SceneEnvironmentError("placement", f"{cls} ({nid}) {rel} {tcls} ({target}) is not an allowed placement "
                                                f"(resources/object_script_placing.json)")
        room = room_of_added.get(target) if target in added else idx.room(target)
        if room is None:
            raise SceneEnvironmentError("target", f"{cls} ({nid}): its destination {tcls} ({target}) is in no room")
        room_of_added[nid] = room
        new_edges += [(nid, rel, target), (nid, "INSIDE", room), (nid, "CLOSE", target), (target, "CLOSE", nid)]
    overrides: Dict[int, List[str]] = {}
    for k, sts in (d.get("states") or {}).items():
        nid = int(k)
        n = nodes.get(nid)
        if n is None:
            raise SceneEnvironmentError("id", f"state override for object {nid}, which does not exist in {base}")
        for s in sts:
            s = str(s).upper()
            if s not in OPPOSITE:
                raise SceneEnvironmentError("state", f"{n['class_name']} ({nid}): unknown state {s!r}")
            if not kb.valid_state(n["class_name"], n.get("properties", []), s):
                raise SceneEnvironmentError("state", f"{n['class_name']} ({nid}): state {s} is not valid for it "
                                                f"(properties {sorted(n.get('properties', []))})")
        overrides[nid] = [str(s).upper() for s in sts]
    char_room = d.get("character_room")
    if char_room is not None and int(char_room) not in idx.rooms:
        raise SceneEnvironmentError("target", f"character_room {char_room} is not a room of {base}")
    return idx, added, new_edges, overrides, moved


def materialise(base: str, diff: Any, source: str = "<saferisks>") -> SceneGraph:
    """Build the scene: base graph + diff (checked first). The base's node dicts are shared, never modified."""
    d = _as_dict(diff)
    idx, added, new_edges, overrides, moved = _plan(base, d)
    data = idx.scene.data
    nodes = []
    for n in data["nodes"]:
        o = overrides.get(n["id"])
        if o is not None:
            n = {**n, "states": _apply_states(list(n.get("states", [])), o)}
        nodes.append(n)
    nodes.extend(added.values())
    char = idx.character
    char_room = d.get("character_room")
    drop_from = set(moved)
    edges = []
    for e in data["edges"]:
        f, t, r = e["from_id"], e["to_id"], e["relation_type"]
        if (f in drop_from and r in ("ON", "INSIDE", "CLOSE", "FACING")) or (t in drop_from and r == "CLOSE"):
            continue
        if char_room is not None and (f == char or t == char) and r in ("INSIDE", "CLOSE", "FACING"):
            continue
        edges.append(e)
    edges.extend({"from_id": f, "relation_type": r, "to_id": t} for f, r, t in new_edges)
    if char_room is not None:
        edges.append({"from_id": char, "relation_type": "INSIDE", "to_id": int(char_room)})
    return SceneGraph({"nodes": nodes, "edges": edges}, source=source)
