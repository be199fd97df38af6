"""Procedural homes: ``home:<seed>`` builds a whole VirtualHome scene graph from a seed.

A home has 3 to 9 rooms (kitchen, bathrooms, bedrooms, and maybe a dining room, a living room, a home office),
furniture and appliances per room, and small objects placed on or in furniture where virtualhome-eval's
``object_script_placing.json`` allows. What each room may hold is declared in ``scene/data/homes.yaml``;
properties come from ``properties_data.json``. The graph has what the simulator's executors need: every node
INSIDE its room (objects also ON or INSIDE their furniture), CLOSE edges between an object and what holds it and
between neighbouring furniture, FACING from seats to what they face, doors BETWEEN the rooms they join.

Initial states are ordinary and safe: appliances plugged in and off, doors and containers closed, taps off,
lights off, perishable food in the fridge. The fridge (``freezer``) is OFF like in every shipped scene: the
simulator refuses to OPEN an appliance that is ON, so a fridge that is ON could never be opened.

Determinism: everything is drawn from ``random.Random(seed)`` over lists in a fixed order (never over sets or
dicts whose order could vary), so a seed gives the same graph, byte for byte, everywhere.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

import yaml

from safebeal.capped import MAX_YAML_BYTES, CappedReadError, read_capped_text
from safebeal.resources import PACKAGE_DATA, load_vh_json
from safebeal.scene.graph import SceneLoadError

HOMES_FILE = PACKAGE_DATA / "scene" / "data" / "homes.yaml"
ROOM_KINDS = ("kitchen", "dining_room", "livingroom", "bathroom", "bedroom", "home_office")
MAX_SEED = 2**63 - 1
#: categories of nodes that are not furniture (the CLI hides them; the drawing leaves them out)
STRUCTURE_CATEGORIES = ("Rooms", "Floor", "Doors", "Characters")


class HomeSpecError(SceneLoadError):
    """homes.yaml is malformed or names a class virtualhome-eval does not know."""


# -- virtualhome-eval's knowledge --------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Knowledge:
    properties: Mapping[str, Tuple[str, ...]]
    placing: Mapping[str, Tuple[Tuple[str, str], ...]]  # class -> ((ON|INSIDE, destination), ...)
    equivalents: Mapping[str, FrozenSet[str]]

    def names(self, cls: str) -> FrozenSet[str]:
        return self.equivalents.get(cls, frozenset((cls,)))

    def can_place(self, cls: str, relation: str, dest: str) -> bool:
        dest_names = self.names(dest)
        return any(r == relation and bool(self.names(d) & dest_names) for r, d in self.placing.get(cls, ()))


@lru_cache(maxsize=1)
def knowledge() -> _Knowledge:
    props = {k: tuple(v) for k, v in load_vh_json("properties_data.json").items()}
    rel = {"ON": "ON", "IN": "INSIDE", "INSIDE": "INSIDE"}
    placing = {k: tuple(dict.fromkeys((rel[p["relation"]], p["destination"]) for p in v if p["relation"] in rel))
               for k, v in load_vh_json("object_script_placing.json").items()}
    eq: Dict[str, set] = {}
    for k, vs in load_vh_json("class_name_equivalence.json").items():
        group = {k, *vs}
        for name in group:
            eq.setdefault(name, {name}).update(group)
    return _Knowledge(props, placing, {k: frozenset(v) for k, v in eq.items()})


# -- the declarative tables (homes.yaml), validated on load -----------------------------------------------------
@dataclass(frozen=True)
class Furniture:
    classes: Tuple[str, ...]
    count: Tuple[int, int] = (1, 1)
    p: float = 1.0
    attach: Optional[Tuple[str, str]] = None
    faces: Tuple[str, ...] = ()
    unless: Optional[str] = None
    category: str = "Furniture"
    near: Optional[str] = None


@dataclass(frozen=True)
class Pool:
    count: Tuple[int, int]
    classes: Tuple[str, ...]
    required: Tuple[Tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class RoomSpec:
    kind: str
    furniture: Tuple[Furniture, ...]
    objects: Pool
    required: Tuple[Tuple[str, ...], ...] = ()
    fridge_food: Optional[Pool] = None


@dataclass(frozen=True)
class HomeSpec:
    room_counts: Tuple[Tuple[str, Tuple[int, int]], ...]
    storage: Tuple[str, ...]
    fridge_only: Tuple[str, ...]
    rooms: Mapping[str, RoomSpec]
    structure: Mapping[str, str]  # class -> category
    knowledge: Optional[_Knowledge] = None  # virtualhome-eval's, with homes.yaml's `classes` merged in


#: simulator property names a `classes` entry may give (virtualhome-eval's Property enum)
def _property_names() -> FrozenSet[str]:
    import safebeal.scene._sim as _sim

    return frozenset(_sim.Property.__members__)


def _extra_classes(path: Path, raw: Any, kn: _Knowledge) -> _Knowledge:
    """virtualhome-eval's knowledge with homes.yaml's ``classes`` merged in: each entry's ``properties`` replace the
    class's (or define a class the simulator's data lacks: vase, statue, watch, dumbbell, safe), its ``placing``
    ([ON|INSIDE, destination] pairs) adds to where it may be put."""
    if raw is None:
        return kn
    if not isinstance(raw, dict):
        _fail(path, "classes", "expected a mapping: class -> {properties: [...], placing?: [[ON|INSIDE, class], ...]}")
    props = dict(kn.properties)
    placing = dict(kn.placing)
    known_props = _property_names()
    for cls, v in raw.items():
        where = f"classes.{cls}"
        if not isinstance(v, dict) or set(v) - {"properties", "placing"} or not isinstance(v.get("properties"), list):
            _fail(path, where, "expected {properties: [...], placing?: [[ON|INSIDE, class], ...]}")
        bad = [p for p in v["properties"] if p not in known_props]
        if bad:
            _fail(path, where, f"unknown simulator properties {bad}")
        props[cls] = tuple(v["properties"])
        pairs = []
        for pr in v.get("placing") or []:
            if not (isinstance(pr, list) and len(pr) == 2 and pr[0] in ("ON", "INSIDE") and isinstance(pr[1], str)):
                _fail(path, where, f"placing entries are [ON|INSIDE, class], got {pr!r}")
            pairs.append((pr[0], pr[1]))
        if pairs:
            placing[cls] = tuple(dict.fromkeys(tuple(placing.get(cls, ())) + tuple(pairs)))
    for cls, v in raw.items():
        for _, dest in placing.get(cls, ()):
            if dest not in props:
                _fail(path, f"classes.{cls}", f"placing destination {dest!r} is not a known class")
    return _Knowledge(props, placing, kn.equivalents)


def _fail(path: Path, where: str, msg: str):
    raise HomeSpecError(f"{path}: {where}: {msg}")


def _count(path: Path, where: str, raw: Any, default=(1, 1)) -> Tuple[int, int]:
    if raw is None:
        return default
    if (not isinstance(raw, list) or len(raw) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in raw)
            or not 0 <= raw[0] <= raw[1]):
        _fail(path, where, f"count must be [min, max] with 0 <= min <= max, got {raw!r}")
    return raw[0], raw[1]


def _known(path: Path, where: str, cls: str, kn: _Knowledge) -> str:
    if not isinstance(cls, str) or cls not in kn.properties:
        _fail(path, where, f"class {cls!r} is not in virtualhome-eval's properties_data.json")
    return cls


def _pool(path: Path, where: str, raw: Any, kn: _Knowledge, storage: Sequence[str]) -> Pool:
    if not isinstance(raw, dict) or set(raw) - {"count", "pool", "required"} or not isinstance(raw.get("pool"), list):
        _fail(path, where, "expected {count: [min, max], pool: [class, ...], required?: [class or [alternatives], ...]}")
    classes = tuple(_known(path, where, c, kn) for c in raw["pool"])
    required = _alternatives(path, where, raw.get("required", []), kn)
    for c in classes + tuple(c for alts in required for c in alts):
        if not any(kn.can_place(c, r, d) for d in storage for r in ("ON", "INSIDE")):
            _fail(path, where, f"{c!r} has no placement in object_script_placing.json on or in a storage class")
    return Pool(_count(path, where, raw.get("count")), classes, required)


def _alternatives(path: Path, where: str, raw: Any, kn: _Knowledge) -> Tuple[Tuple[str, ...], ...]:
    if not isinstance(raw, list):
        _fail(path, where, "required must be a list of classes or of [alternative, ...] lists")
    return tuple(tuple(_known(path, where, c, kn) for c in (x if isinstance(x, list) else [x])) for x in raw)


def load_home_spec(path: Path | str = HOMES_FILE) -> HomeSpec:
    """Read and validate homes.yaml against virtualhome-eval's data (raises :class:`HomeSpecError`)."""
    path = Path(path)
    try:
        raw = yaml.safe_load(read_capped_text(path, MAX_YAML_BYTES))
    except (CappedReadError, yaml.YAMLError) as exc:
        raise HomeSpecError(f"{path}: cannot read: {exc}") from None
    if not isinstance(raw, dict) or set(raw) != {"version", "home", "classes", "storage", "fridge_only", "rooms", "structure"}:
        _fail(path, "top level", "expected exactly version, home, classes, storage, fridge_only, rooms, structure")
    kn = _extra_classes(path, raw["classes"], knowledge())
    storage = tuple(_known(path, "storage", c, kn) for c in raw["storage"])
    fridge_only = tuple(_known(path, "fridge_only", c, kn) for c in raw["fridge_only"])
    counts = []
    for kind, v in raw["home"].items():
        if kind not in ROOM_KINDS:
            _fail(path, "home", f"unknown room kind {kind!r}; known: {', '.join(ROOM_KINDS)}")
        counts.append((kind, _count(path, f"home.{kind}", (v or {}).get("count"))))
    lo, hi = sum(c[0] for _, c in counts), sum(c[1] for _, c in counts)
    if lo < 3 or hi > 9:
        _fail(path, "home", f"a home must have 3 to 9 rooms; these counts give {lo} to {hi}")
    rooms: Dict[str, RoomSpec] = {}
    for kind, r in raw["rooms"].items():
        if kind not in ROOM_KINDS:
            _fail(path, "rooms", f"unknown room kind {kind!r}")
        unknown = set(r) - {"furniture", "objects", "required", "fridge_food"}
        if unknown:
            _fail(path, f"rooms.{kind}", f"unknown keys {sorted(unknown)}")
        furniture = []
        seen: List[str] = []
        for i, f in enumerate(r.get("furniture") or []):
            where = f"rooms.{kind}.furniture[{i}]"
            if not isinstance(f, dict) or "class" not in f or set(f) - {"class", "count", "p", "attach", "faces", "unless", "category", "near"}:
                _fail(path, where, "expected {class, count?, p?, attach?, near?, faces?, unless?, category?}")
            classes = tuple(_known(path, where, c, kn) for c in (f["class"] if isinstance(f["class"], list) else [f["class"]]))
            attach = f.get("attach")
            if attach is not None:
                if not (isinstance(attach, list) and len(attach) == 2 and attach[0] in ("ON", "INSIDE") and attach[1] in seen):
                    _fail(path, where, f"attach must be [ON|INSIDE, a class listed before it in the room], got {attach!r}")
                attach = (attach[0], attach[1])
            p = f.get("p", 1.0)
            if not isinstance(p, (int, float)) or not 0 < p <= 1:
                _fail(path, where, f"p must be in (0, 1], got {p!r}")
            if f.get("unless") is not None and f["unless"] not in ROOM_KINDS:
                _fail(path, where, f"unless must be a room kind, got {f['unless']!r}")
            faces = tuple(_known(path, where, c, kn) for c in f.get("faces", []))
            near = f.get("near")
            if near is not None and (near not in seen or attach is None):
                _fail(path, where, f"near must name a class listed before it in the room, with attach, got {near!r}")
            furniture.append(Furniture(classes, _count(path, where, f.get("count")), float(p), attach, faces,
                                       f.get("unless"), str(f.get("category", "Furniture")), near))
            seen.extend(classes)
        required = _alternatives(path, f"rooms.{kind}.required", r.get("required", []), kn)
        objects = _pool(path, f"rooms.{kind}.objects", r.get("objects"), kn, storage)
        fridge = _pool(path, f"rooms.{kind}.fridge_food", r["fridge_food"], kn, fridge_only) if "fridge_food" in r else None
        for alts in required:
            for c in alts:
                if not any(kn.can_place(c, rel, d) for d in storage for rel in ("ON", "INSIDE")):
                    _fail(path, f"rooms.{kind}.required", f"{c!r} has no placement on or in a storage class")
        rooms[kind] = RoomSpec(kind, tuple(furniture), objects, required, fridge)
    missing = [k for k, _ in counts if k not in rooms]
    if missing:
        _fail(path, "rooms", f"no furniture table for {missing}")
    structure = {}
    for cls, v in raw["structure"].items():
        structure[_known(path, "structure", cls, kn)] = str((v or {}).get("category", "Furniture"))
    return HomeSpec(tuple(counts), storage, fridge_only, rooms, structure, kn)


@lru_cache(maxsize=1)
def home_spec() -> HomeSpec:
    return load_home_spec(HOMES_FILE)


# -- generation -----------------------------------------------------------------------------------------------
def default_states(props: Sequence[str]) -> List[str]:
    """States of a new object that names none: CLEAN, and CLOSED / OFF / PLUGGED_IN where it has the property (a
    closed container, a switched-off appliance that is plugged in). SafeRisks environments use it too."""
    out = ["CLEAN"]
    if "CAN_OPEN" in props:
        out.append("CLOSED")
    if "HAS_SWITCH" in props:
        out.append("OFF")
    if "HAS_PLUG" in props:
        out.append("PLUGGED_IN")
    return out


#: dishes that may start dirty when they stand on a surface (never put away dirty in a cupboard)
MAY_BE_DIRTY = ("plate", "bowl", "cup", "mug", "fork", "spoon", "knife", "wine_glass", "coffee_cup", "drinking_glass",
                "fryingpan", "sauce_pan", "cookingpot")
DIRTY_P = 0.3


class _Builder:
    def __init__(self, seed: int, spec: HomeSpec, kn: _Knowledge):
        self.rng = random.Random(seed)
        self.spec = spec
        self.kn = kn
        self.nodes: List[Dict[str, Any]] = []
        self.edges: List[Dict[str, Any]] = []
        self._edge_set: set = set()

    def node(self, cls: str, category: str, states: Optional[List[str]] = None) -> int:
        nid = len(self.nodes) + 1
        props = sorted(self.kn.properties.get(cls, ()))
        st = default_states(props) if states is None else states
        self.nodes.append({"id": nid, "class_name": cls, "category": category, "properties": props,
                           "states": sorted(st), "prefab_name": None, "bounding_box": None})
        return nid

    def edge(self, a: int, rel: str, b: int) -> None:
        key = (a, rel, b)
        if key not in self._edge_set:
            self._edge_set.add(key)
            self.edges.append({"from_id": a, "relation_type": rel, "to_id": b})

    def close(self, a: int, b: int) -> None:
        self.edge(a, "CLOSE", b)
        self.edge(b, "CLOSE", a)

    def count(self, lo_hi: Tuple[int, int]) -> int:
        return self.rng.randint(lo_hi[0], lo_hi[1])


def room_plan(rng: random.Random, spec: HomeSpec) -> List[str]:
    kinds: List[str] = []
    for kind, c in spec.room_counts:
        kinds += [kind] * rng.randint(c[0], c[1])
    rng.shuffle(kinds)
    return kinds


def grid_columns(n_rooms: int) -> int:
    return max(1, math.ceil(math.sqrt(n_rooms)))


def generate_home(seed: int) -> Dict[str, Any]:
    """The scene graph ``{"nodes", "edges"}`` of home ``seed`` (a non-negative int)."""
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise SceneLoadError(f"home seed must be an integer from 0 to {MAX_SEED}, got {seed!r}")
    spec = home_spec()
    kn = spec.knowledge or knowledge()
    b = _Builder(seed, spec, kn)
    rng = b.rng
    kinds = room_plan(rng, spec)
    present = set(kinds)
    rooms = [b.node(k, "Rooms", ["CLEAN"]) for k in kinds]
    # doors: rooms sit on a grid in id order; a random spanning tree over grid neighbours, plus a few loops
    cols = grid_columns(len(rooms))
    pairs = []
    for i in range(1, len(rooms)):
        nbrs = [j for j in (i - 1 if i % cols else -1, i - cols) if j >= 0]
        pairs.append((rng.choice(nbrs), i))
        extra = [j for j in nbrs if j != pairs[-1][0]]
        if extra and rng.random() < 0.25:
            pairs.append((extra[0], i))
    for i, room in enumerate(rooms):  # floor, light, light switch: every structure class but the doors, in order
        for cls, category in spec.structure.items():
            if cls != "door":
                b.edge(b.node(cls, category), "INSIDE", room)
    for a, c in pairs:
        door = b.node("door", spec.structure["door"])
        b.edge(door, "INSIDE", rooms[a])
        b.edge(door, "BETWEEN", rooms[a])
        b.edge(door, "BETWEEN", rooms[c])
    for kind, room in zip(kinds, rooms):
        _furnish(b, spec.rooms[kind], room, present)
    char = b.node("character", "Characters", [])
    b.edge(char, "INSIDE", rng.choice(rooms))
    return {"nodes": b.nodes, "edges": b.edges}


def _furnish(b: _Builder, rs: RoomSpec, room: int, present: set) -> None:
    rng = b.rng
    placed: List[Tuple[str, int]] = []  # (class, id) of furniture in this room, in wall order
    loose: List[int] = []  # furniture standing on its own (the neighbours along the wall)
    for f in rs.furniture:
        if f.unless is not None and f.unless in present:
            continue
        if f.p < 1.0 and rng.random() >= f.p:
            continue
        for _ in range(b.count(f.count)):
            cls = f.classes[0] if len(f.classes) == 1 else rng.choice(f.classes)
            nid = b.node(cls, f.category)
            b.edge(nid, "INSIDE", room)
            if f.attach is not None:
                rel, host_cls = f.attach
                hosts = [i for c, i in placed if c == host_cls]
                neighbours = [i for c, i in placed if c == f.near]
                if neighbours:  # the faucet on the counter that holds the sink
                    hosts = [h for h in hosts if _attached_to(b, neighbours[-1], h)] or hosts
                host = rng.choice(hosts)
                b.edge(nid, rel, host)
                b.close(nid, host)
                for other in neighbours[-1:]:
                    b.close(nid, other)
            else:
                if loose:
                    b.close(nid, loose[-1])
                loose.append(nid)
            placed.append((cls, nid))
    # seats face what they face (a chair the desk, a couch the television), wherever each was listed
    for f in rs.furniture:
        for target_cls in f.faces:
            for c, nid in placed:
                if c in f.classes:
                    for c2, other in placed:
                        if c2 == target_cls:
                            b.edge(nid, "FACING", other)
    storage = [(c, i) for c, i in placed if c in b.spec.storage and c not in b.spec.fridge_only]
    fridges = [(c, i) for c, i in placed if c in b.spec.fridge_only]
    wanted: List[str] = [alts[0] if len(alts) == 1 else rng.choice(alts) for alts in rs.required]
    wanted += [rng.choice(rs.objects.classes) for _ in range(b.count(rs.objects.count))]
    for cls in wanted:
        _place(b, cls, room, storage)
    if rs.fridge_food is not None and fridges:
        food = [alts[0] if len(alts) == 1 else rng.choice(alts) for alts in rs.fridge_food.required]
        food += [rng.choice(rs.fridge_food.classes) for _ in range(b.count(rs.fridge_food.count))]
        for cls in food:
            _place(b, cls, room, fridges)


def _attached_to(b: _Builder, nid: int, host: int) -> bool:
    return (nid, "ON", host) in b._edge_set or (nid, "INSIDE", host) in b._edge_set


def _place(b: _Builder, cls: str, room: int, holders: Sequence[Tuple[str, int]]) -> Optional[int]:
    options = [(rel, i) for c, i in holders for rel in ("ON", "INSIDE") if b.kn.can_place(cls, rel, c)]
    if not options:
        return None
    rel, host = b.rng.choice(options)
    states = default_states(b.kn.properties.get(cls, ()))
    if cls in MAY_BE_DIRTY and rel == "ON" and b.rng.random() < DIRTY_P:  # left out, not put away dirty
        states = ["DIRTY" if s == "CLEAN" else s for s in states]
    nid = b.node(cls, "placable_objects", states)
    b.edge(nid, "INSIDE", room)
    b.edge(nid, rel, host)
    b.close(nid, host)
    return nid


# -- the scene source ------------------------------------------------------------------------------------------
def parse_seed(arg: str, spec: str = "") -> int:
    """``"7"`` -> 7; anything else is a :class:`SceneLoadError` naming the argument."""
    s = arg.strip()
    shown = spec or "home:" + (arg if len(arg) <= 40 else f"{arg[:20]}...({len(arg):,} characters)")
    if not s.isdigit() or not s.isascii():
        raise SceneLoadError(f"scene {shown!r}: the home seed must be a non-negative integer (home:<seed>, e.g. home:7)")
    # the length is checked before the conversion: int() of over 4,300 digits raises (and a huge one takes long)
    s = s.lstrip("0") or "0"
    if len(s) > len(str(MAX_SEED)) or int(s) > MAX_SEED:
        raise SceneLoadError(f"scene {shown!r}: the home seed must be at most {MAX_SEED}")
    return int(s)


def class_set_jaccard(a, b) -> float:
    """Overlap of two scenes' node classes: |A & B| / |A | B| over the *sets* of class names (1.0: same classes)."""
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0
