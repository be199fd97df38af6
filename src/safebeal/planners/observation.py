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
from safebeal.planners.texts import read_template
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
        if not loc and "GRABBABLE" in props:  # a thing lying on the floor is said to (issue 31: nothing hidden)
            loc = tuple(("ON", "floor", t) for rel, t in idx.parents.get(i, ())
                        if rel == "ON" and idx.nodes[t].get("class_name") == "floor")[:1]
        r = None if idx.is_room(i) else idx.room_of(i)
        out.append(ObservedObject(name, i, tuple(p for p in PLAN_PROPERTIES if p in props), tuple(states), loc,
                                  None if r is None else (idx.nodes[r]["class_name"], r)))
    ar = idx.character_room()
    return Observation(None if ar is None else (idx.nodes[ar]["class_name"], ar), tuple(out))


# -- the observation of a state, for agents that act step by step (planners.agent) ----------------------------
def _is_place(state, i: int) -> bool:
    """Rooms, floors, walls and the like: not where an object is said to stand."""
    from safebeal.scene.listing import STRUCTURE

    n = state.node(i)
    return n is None or n.category in STRUCTURE or n.class_name in ("floor", "wall", "ceiling")


def observe_state(state, objects: Sequence[Tuple[str, int]]) -> "StepObservation":
    """What an agent observes in ``state`` (a :class:`~safebeal.scene.StateView` of any step): the room it is in,
    what it holds, and of the task's ``objects`` ((name, id)) the ones in its room (with properties, states and
    where they are, as :func:`observe` gives them) and the others, named with their room only. Rooms are listed
    on their own. Ids missing from the scene are skipped."""
    char = state.character_id()
    here = state.room_of(char)
    held = sorted(state.held())
    visible: List[ObservedObject] = []
    elsewhere: List[Tuple[str, int, Optional[Tuple[str, int]]]] = []
    rooms: List[Tuple[str, int]] = []
    seen = set()
    for name, i in objects:
        n = state.node(i)
        if n is None or i in seen:
            continue
        seen.add(i)
        if n.category == "Rooms":
            rooms.append((name, i))
            continue
        r = state.room_of(i)
        if i in held or (r is not None and r == here):
            props = tuple(p for p in PLAN_PROPERTIES if p in n.properties)
            loc = tuple(sorted(((rel, state.node(t).class_name, t) for rel in ("ON", "INSIDE")
                                for t in state.targets(i, rel) if not _is_place(state, t)), key=lambda x: (x[2], x[0])))
            if not loc and "GRABBABLE" in n.properties and i not in held:  # lying on the floor: said so
                loc = tuple(("ON", "floor", t) for t in sorted(state.targets(i, "ON"))
                            if state.node(t) is not None and state.node(t).class_name == "floor")[:1]
            visible.append(ObservedObject(name, i, props, tuple(sorted(n.states)), loc,
                                          None if r is None else (state.node(r).class_name, r)))
        else:
            elsewhere.append((name, i, None if r is None else (state.node(r).class_name, r)))
    room = None if here is None else (state.node(here).class_name, here)
    return StepObservation(room, tuple((state.node(i).class_name, i) for i in held), tuple(visible),
                           tuple(elsewhere), tuple(rooms))


@dataclass(frozen=True)
class StepObservation:
    """One turn's observation (:func:`observe_state`); :meth:`render` fills ``templates/observation_step.txt``."""

    room: Optional[Tuple[str, int]]
    held: Tuple[Tuple[str, int], ...]
    visible: Tuple[ObservedObject, ...]
    elsewhere: Tuple[Tuple[str, int, Optional[Tuple[str, int]]], ...]
    rooms: Tuple[Tuple[str, int], ...]

    def render(self) -> str:

        line = read_template("observation_object").strip("\n")
        visible = "\n".join(line.format(name=o.name, id=o.id, properties=_props(o), states=_states(o), where=_where(o))
                            for o in self.visible) or "none of the task's objects"
        other = ", ".join(_ref(n, i) + (f" in {_ref(*r)}" if r else "") for n, i, r in self.elsewhere) or "none"
        return read_template("observation_step").strip("\n").format(
            room=_ref(*self.room) if self.room else "no room", held=", ".join(_ref(n, i) for n, i in self.held) or "nothing",
            visible=visible, elsewhere=other, rooms=", ".join(_ref(n, i) for n, i in self.rooms) or "none")
