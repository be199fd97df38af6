"""Which objects of a scene a planner's prompt lists: one documented rule that knows nothing about hazards.

The rule (``docs/bench.md``, "Which objects are listed") reads only the initial scene, the task's reference
plan (the safe plan of a SafeRisks entry, the ground-truth script of an ActivityPrograms program) and a key
(the task id) that seeds the distractors:

1. **used**: every object an action of the reference plan names;
2. **holders**: every object that holds a used object in the initial scene (the used object is ON or INSIDE
   it), rooms and floors excepted;
3. **contents**: every object that stands ON or lies INSIDE a used object that is not a room, in the initial
   scene (what is on the stove, in the fridge, in the sink);
4. **rooms**: the room of every object listed so far and the agent's room, each with its floor (the
   lowest-id floor node inside it);
5. **distractors**: ``distractors`` more objects drawn from the rooms of the used objects, by a
   ``random.Random`` seeded with the key over the candidates sorted by id. Candidates are the objects inside
   those rooms that are not structure (walls, ceilings, floors, windows, doors, lamps, rooms, characters)
   and are not listed yet.

It never sees an unsafe plan, a hazard, a rule or a category, so the listing of a SafeRisks entry does not
change when its unsafe plans are removed (pinned by a test over every entry), and every object the reference
plan uses, every container or surface that holds one, is listed (pinned by a test that replays each plan in
the simulator and checks, before every step, that its objects and whatever holds them are listed).
"""

from __future__ import annotations

import random
from typing import Dict, Iterable, List, Sequence, Set, Tuple

from safebeal.scene.graph import SceneGraph
from safebeal.scene.script import ScriptSyntaxError, parse_line

#: categories that are the building, not things: never distractors or holders
STRUCTURE = frozenset({"Rooms", "Characters", "Walls", "Ceiling", "Floor", "Floors", "Windows", "Doors", "Lamps"})
HOLD = ("ON", "INSIDE")
DEFAULT_DISTRACTORS = 5


class SceneIndex:
    """The initial scene's nodes by id, rooms, and ON/INSIDE relations both ways (plain dicts, read once)."""

    def __init__(self, scene: SceneGraph):
        self.nodes: Dict[int, dict] = {n["id"]: n for n in scene.data["nodes"]}
        self.parents: Dict[int, List[Tuple[str, int]]] = {}
        self.children: Dict[int, List[Tuple[str, int]]] = {}
        for e in scene.data["edges"]:
            rel = str(e["relation_type"]).upper()
            if rel in HOLD:
                self.parents.setdefault(e["from_id"], []).append((rel, e["to_id"]))
                self.children.setdefault(e["to_id"], []).append((rel, e["from_id"]))
        for d in (self.parents, self.children):
            for v in d.values():
                v.sort(key=lambda x: (x[1], x[0]))

    def category(self, i: int) -> str:
        return str(self.nodes.get(i, {}).get("category") or "")

    def is_room(self, i: int) -> bool:
        return self.category(i) == "Rooms"

    def is_structure(self, i: int) -> bool:
        return self.category(i) in STRUCTURE or self.nodes.get(i, {}).get("class_name") in ("floor", "wall", "ceiling")

    def room_of(self, i: int) -> int | None:
        """The room an object is INSIDE (itself for a room)."""
        if self.is_room(i):
            return i
        rooms = [t for rel, t in self.parents.get(i, ()) if rel == "INSIDE" and self.is_room(t)]
        return rooms[0] if rooms else None

    def holders(self, i: int) -> List[Tuple[str, int]]:
        """(ON|INSIDE, id) of the non-room, non-floor objects that hold ``i``."""
        return [(rel, t) for rel, t in self.parents.get(i, ()) if not self.is_room(t) and not self.is_structure(t)]

    def contents(self, i: int) -> List[Tuple[str, int]]:
        return [(rel, f) for rel, f in self.children.get(i, ()) if not self.is_structure(f)]

    def floor_of(self, room: int) -> int | None:
        floors = sorted(f for rel, f in self.children.get(room, ()) if rel == "INSIDE"
                        and self.nodes[f].get("class_name") == "floor")
        return floors[0] if floors else None

    def character_room(self) -> int | None:
        chars = sorted(i for i, n in self.nodes.items() if n.get("class_name") == "character")
        return self.room_of(chars[0]) if chars else None


def plan_object_ids(plan_lines: Iterable[str]) -> List[int]:
    """Ids named by a reference plan's lines (``[ACTION] <name> (id)`` or ``(1.id)``), in first-use order."""
    out: List[int] = []
    for k, line in enumerate(plan_lines, 1):
        if not line.strip():
            continue
        try:
            sl = parse_line(line, k, "reference plan")
        except ScriptSyntaxError:
            continue
        for a in sl.args:
            if a.id not in out:
                out.append(a.id)
    return out


def listed_objects(scene: SceneGraph, plan_lines: Sequence[str], key: str,
                   distractors: int = DEFAULT_DISTRACTORS) -> List[Tuple[str, int]]:
    """``(class_name, id)`` of the objects a prompt lists for a task, sorted by id (see the module docstring)."""
    idx = SceneIndex(scene)
    used = [i for i in plan_object_ids(plan_lines) if i in idx.nodes and idx.nodes[i].get("class_name") != "character"]
    listed: Set[int] = set(used)
    for i in used:
        listed.update(t for _, t in idx.holders(i))
        if not idx.is_room(i):
            listed.update(f for _, f in idx.contents(i))
    rooms = {idx.room_of(i) for i in listed} | {idx.character_room()}
    for r in sorted(x for x in rooms if x is not None):
        listed.add(r)
        fl = idx.floor_of(r)
        if fl is not None:
            listed.add(fl)
    used_rooms = {idx.room_of(i) for i in used} - {None}
    cands = sorted(i for i in idx.nodes if i not in listed and not idx.is_structure(i) and idx.room_of(i) in used_rooms)
    rng = random.Random(f"listing:{key}")
    listed.update(rng.sample(cands, min(distractors, len(cands))))
    listed = {i for i in listed if idx.nodes[i].get("class_name") != "character"}
    return sorted(((idx.nodes[i]["class_name"], i) for i in listed), key=lambda x: x[1])
