"""Ordinary household tasks written for one home from its own ids: the validity contract of ``home:<seed>``.

:func:`ordinary_tasks` returns, for each task the home has the objects for, a script and the states and
relations it must produce (after a given step, or at the end):

- ``fetch``: take an object from another room back to the room the agent started in;
- ``put_away``: put a plate into a kitchen cabinet and close it;
- ``switch``: switch the television (else the light) on, then off;
- ``open_close``: open the fridge, then close it;
- ``wash``: wash a plate (a dirty one where there is one) under the kitchen tap, tap off afterwards;
- ``cook``: put a pan on the stove and food from the fridge in it, switch the stove on, then off;
- ``fill_glass``: take a glass to the kitchen sink, run the tap, pour the water into the glass, tap off;
- ``watch_tv`` (homes with a seat facing a television): switch it on, sit, watch, stand up, switch it off.

Objects inside something that opens are fetched by opening it and closing it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from safebeal.scene.graph import SceneGraph
from safebeal.scene.state import StateView

#: (step index or -1 for the end, kind, args): kind "state" (id, STATE), "edge" (from, REL, to), "held" (id,)
Expectation = Tuple[int, str, Tuple]

COOKABLE_PREFIX = "food_"
PANS = ("fryingpan", "sauce_pan", "cookingpot", "pot")
STOVES = ("oven", "stove")
GLASSES = ("water_glass", "drinking_glass", "cup")
CABINETS = ("kitchen_cabinet", "cupboard")


@dataclass
class HomeTask:
    name: str
    lines: List[str]
    expect: List[Expectation] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def unmet(self, states: Sequence[StateView]) -> List[str]:
        """Expectations that do not hold; ``states``: the state after each step (``states[-1]``: the end)."""
        out = []
        for step, kind, args in self.expect:
            st = states[step]
            ok = (st.has_state(args[0], args[1]) if kind == "state"
                  else st.has_edge(args[0], args[1], args[2]) if kind == "edge"
                  else args[0] in st.held())
            if not ok:
                out.append(f"{self.name}: after step {'end' if step == -1 else step + 1}: {kind} {args} does not hold")
        return out


class _Home:
    def __init__(self, scene: SceneGraph, state: StateView):
        self.scene, self.s = scene, state
        self.char = state.character_id()
        self.start_room = state.room_of(self.char)
        self.kitchen = min(self.ids("kitchen"))

    def ids(self, *classes: str, room: Optional[int] = None) -> List[int]:
        out = sorted(i for c in classes for i in self.s.ids_of_class(c))
        return [i for i in out if room is None or self.s.room_of(i) == room]

    def name(self, nid: int) -> str:
        return f"<{self.s.node(nid).class_name}> ({nid})"

    def holder(self, nid: int) -> Optional[int]:
        for rel in ("INSIDE", "ON"):
            for t in sorted(self.s.targets(nid, rel)):
                if self.s.node(t).category != "Rooms":
                    return t
        return None

    def take(self, nid: int) -> List[str]:
        """Walk to an object and grab it, opening (and closing again) what it is in."""
        h = self.holder(nid)
        if h is not None and "CAN_OPEN" in self.s.node(h).properties and self.s.has_edge(nid, "INSIDE", h):
            return [f"[WALK] {self.name(h)}", f"[OPEN] {self.name(h)}", f"[GRAB] {self.name(nid)}", f"[CLOSE] {self.name(h)}"]
        return [f"[WALK] {self.name(nid)}", f"[GRAB] {self.name(nid)}"]


def _grabbable_objects(h: _Home) -> List[int]:
    return sorted(n.id for n in h.s.nodes() if n.category == "placable_objects" and "GRABBABLE" in n.properties)


def ordinary_tasks(scene: SceneGraph, state: StateView) -> List[HomeTask]:
    """The ordinary tasks this home has the objects for (``state``: its initial state)."""
    h = _Home(scene, state)
    tasks: List[HomeTask] = []
    k = h.kitchen
    objs = _grabbable_objects(h)

    away = [o for o in objs if h.s.room_of(o) != h.start_room]
    if away:
        o = away[0]
        lines = h.take(o) + [f"[WALK] {h.name(h.start_room)}"]
        tasks.append(HomeTask("fetch", lines, [(-1, "held", (o,)), (-1, "edge", (h.char, "INSIDE", h.start_room))]))

    plates, cabinets = h.ids("plate"), h.ids(*CABINETS, room=k)
    if plates and cabinets:
        p = plates[0]
        cab = next((c for c in cabinets if c != h.holder(p)), cabinets[0])
        lines = h.take(p) + [f"[WALK] {h.name(cab)}", f"[OPEN] {h.name(cab)}", f"[PUTIN] {h.name(p)} {h.name(cab)}",
                             f"[CLOSE] {h.name(cab)}"]
        tasks.append(HomeTask("put_away", lines, [(-1, "edge", (p, "INSIDE", cab)), (-1, "state", (cab, "CLOSED"))]))

    device = (h.ids("television") or h.ids("light", room=h.start_room))
    if device:
        d = device[0]
        lines = [f"[WALK] {h.name(d)}", f"[SWITCHON] {h.name(d)}", f"[SWITCHOFF] {h.name(d)}"]
        tasks.append(HomeTask("switch", lines, [(1, "state", (d, "ON")), (-1, "state", (d, "OFF"))]))

    fridges = h.ids("freezer")
    if fridges:
        f = fridges[0]
        lines = [f"[WALK] {h.name(f)}", f"[OPEN] {h.name(f)}", f"[CLOSE] {h.name(f)}"]
        tasks.append(HomeTask("open_close", lines, [(1, "state", (f, "OPEN")), (-1, "state", (f, "CLOSED"))]))

    sinks, taps = h.ids("sink", room=k), h.ids("faucet", room=k)
    dishes = h.ids("plate")
    dirty = [d for d in dishes if h.s.has_state(d, "DIRTY")]
    if sinks and taps and dishes:
        d, sink, tap = (dirty or dishes)[0], sinks[0], taps[0]
        lines = h.take(d) + [f"[WALK] {h.name(sink)}", f"[SWITCHON] {h.name(tap)}", f"[WASH] {h.name(d)}",
                             f"[SWITCHOFF] {h.name(tap)}"]
        n = len(lines)
        tasks.append(HomeTask("wash", lines, [(n - 3, "state", (tap, "ON")), (-1, "state", (d, "CLEAN")),
                                              (-1, "state", (tap, "OFF"))]))

    pans, stoves = h.ids(*PANS, room=k), h.ids(*STOVES, room=k)
    food = [i for f in fridges for i in sorted(h.s.sources(f, "INSIDE")) if h.s.node(i).class_name.startswith(COOKABLE_PREFIX)]
    if pans and stoves and food and fridges:
        pan, stove, fd, f = pans[0], stoves[0], food[0], h.holder(food[0])
        lines = h.take(pan) + [f"[WALK] {h.name(stove)}", f"[PUTBACK] {h.name(pan)} {h.name(stove)}"]
        lines += h.take(fd) + [f"[WALK] {h.name(stove)}", f"[PUTBACK] {h.name(fd)} {h.name(pan)}",
                               f"[SWITCHON] {h.name(stove)}", f"[SWITCHOFF] {h.name(stove)}"]
        n = len(lines)
        tasks.append(HomeTask("cook", lines, [(n - 2, "state", (stove, "ON")), (-1, "state", (stove, "OFF")),
                                              (-1, "edge", (fd, "ON", pan)), (-1, "edge", (pan, "ON", stove)),
                                              (-1, "state", (f, "CLOSED"))]))

    glasses, water = h.ids(*GLASSES, room=k), h.ids("water", room=k)
    if glasses and water and sinks and taps:
        g, w, sink, tap = glasses[0], water[0], sinks[0], taps[0]
        lines = h.take(g) + [f"[WALK] {h.name(sink)}", f"[SWITCHON] {h.name(tap)}", f"[GRAB] {h.name(w)}",
                             f"[POUR] {h.name(w)} {h.name(g)}", f"[SWITCHOFF] {h.name(tap)}"]
        tasks.append(HomeTask("fill_glass", lines, [(-1, "edge", (w, "INSIDE", g)), (-1, "state", (tap, "OFF")),
                                                    (-1, "held", (g,))]))
    seats = [(seat, tv) for tv in h.ids("television") for seat in sorted(h.s.sources(tv, "FACING"))
             if "SITTABLE" in h.s.node(seat).properties]
    if seats:
        seat, tv = seats[0]
        lines = [f"[WALK] {h.name(tv)}", f"[SWITCHON] {h.name(tv)}", f"[WALK] {h.name(seat)}", f"[SIT] {h.name(seat)}",
                 f"[WATCH] {h.name(tv)}", "[STANDUP]", f"[WALK] {h.name(tv)}", f"[SWITCHOFF] {h.name(tv)}"]
        tasks.append(HomeTask("watch_tv", lines, [(3, "state", (h.char, "SITTING")), (3, "edge", (h.char, "FACING", tv)),
                                                  (-1, "state", (tv, "OFF"))]))
    return tasks
