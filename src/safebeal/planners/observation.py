"""The observation of a task's initial scene that a generating planner sees, rendered from template files.

For each object the task lists (:attr:`Task.objects`, chosen by :func:`safebeal.scene.listing.listed_objects`
for SafeRisks and the ActivityPrograms splits), the observation gives its name and id, the properties that
matter for planning and for safety (:data:`PLAN_PROPERTIES`), its states, and where it is: ON or INSIDE which
listed or unlisted object, and in which room. It also says which room the agent is in.

It states facts only: safety advice is added by ``safety_prompt=true``, never here.

Two forms, each a template file in ``planners/templates/``:

- ``full`` (``observation.txt``, one object per line through ``observation_object.txt``)::

      <stove> (152): can open, has switch, has plug, surfaces, containers; states: CLOSED, OFF, PLUGGED_IN; in kitchen (11)

- ``compact`` (``observation_compact.txt``, objects inline, no properties and no room):
  ``<toaster> (292) CLEAN OFF PLUGGED_IN ON <kitchen_counter> (230)``, for small models with a short context.

The agent's room is a sentence of its own (``observation_agent.txt``), left out when the scene has no agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from safebeal.errors import SafebealError
from safebeal.scene.graph import SceneGraph
from safebeal.scene.listing import SceneIndex

#: the properties an observation shows, in this order (the others say nothing a planner can use)
PLAN_PROPERTIES = ("GRABBABLE", "CAN_OPEN", "HAS_SWITCH", "HAS_PLUG", "RECIPIENT", "CONTAINERS", "SURFACES",
                   "POURABLE", "DRINKABLE", "EATABLE", "CUTTABLE", "CREAM", "CLOTHES", "COVER_OBJECT", "SITTABLE",
                   "LIEABLE", "MOVABLE", "READABLE", "HANGABLE", "HAS_PAPER")
FORMS = ("full", "compact")


@dataclass(frozen=True)
class ObservedObject:
    name: str
    id: int
    properties: Tuple[str, ...]
    states: Tuple[str, ...]
    location: Tuple[Tuple[str, str, int], ...]  # (ON|INSIDE, holder class, holder id), sorted by holder id
    room: Optional[Tuple[str, int]]  # (room class, room id); None for a room itself
    known: bool = True  # False: a task without a scene names the object, nothing is known about it


@dataclass(frozen=True)
class Observation:
    """Facts about the listed objects of a scene; :meth:`render` turns them into prompt text."""

    agent_room: Optional[Tuple[str, int]]
    objects: Tuple[ObservedObject, ...]

    def render(self, form: str = "full") -> str:
        from safebeal.planners.prompts import read_template

        if form not in FORMS:
            raise SafebealError(f"unknown observation form {form!r}; known: {', '.join(FORMS)}")
        agent = read_template("observation_agent").strip("\n").format(room=_ref(*self.agent_room)) if self.agent_room else ""
        if form == "compact":
            objs = " ".join(_compact(o) for o in self.objects)
            return read_template("observation_compact").strip("\n").format(agent=agent, objects=objs).strip()
        line = read_template("observation_object").strip("\n")
        objs = "\n".join(line.format(name=o.name, id=o.id, properties=_props(o), states=_states(o), where=_where(o))
                         if o.known else _ref(o.name, o.id) for o in self.objects)
        return read_template("observation").strip("\n").format(agent=agent, objects=objs).strip()


def _ref(name: str, i: int) -> str:
    return f"<{name}> ({i})"


def _props(o: ObservedObject) -> str:
    return ", ".join(p.lower().replace("_", " ") for p in o.properties) or "none"


def _states(o: ObservedObject) -> str:
    return ", ".join(o.states) or "none"


def _where(o: ObservedObject) -> str:
    parts = [f"{rel} {_ref(c, i)}" for rel, c, i in o.location]
    if o.room is not None:
        parts.append(f"in {_ref(*o.room)}")
    return ", ".join(parts) if parts else "a room"


def _compact(o: ObservedObject) -> str:
    bits = [_ref(o.name, o.id)] + list(o.states)
    bits += [f"{rel} {_ref(c, i)}" for rel, c, i in o.location]
    return " ".join(bits)


def observe(scene: Optional[SceneGraph], objects: Sequence[Tuple[str, int]]) -> Observation:
    """The observation of ``objects`` ((name, id), in the given order) in the initial ``scene``. Names are the
    task's (they may differ from the scene's class name); ids missing from the scene are skipped. Without a
    scene (a hand-made task) the objects are named and nothing else is said of them."""
    if scene is None:
        return Observation(None, tuple(ObservedObject(n, i, (), (), (), None, known=False) for n, i in objects))
    idx = SceneIndex(scene)
    out: List[ObservedObject] = []
    for name, i in objects:
        n = idx.nodes.get(i)
        if n is None:
            continue
        props = {str(p).upper() for p in n.get("properties", ())}
        states = sorted(str(s).upper() for s in n.get("states", ()))
        loc = tuple((rel, idx.nodes[t]["class_name"], t) for rel, t in idx.holders(i))
        r = None if idx.is_room(i) else idx.room_of(i)
        out.append(ObservedObject(name, i, tuple(p for p in PLAN_PROPERTIES if p in props), tuple(states), loc,
                                  None if r is None else (idx.nodes[r]["class_name"], r)))
    ar = idx.character_room()
    return Observation(None if ar is None else (idx.nodes[ar]["class_name"], ar), tuple(out))
