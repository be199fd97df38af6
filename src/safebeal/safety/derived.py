"""Derived state the simulator lacks, computed along the trajectory (issue 30; docs/design/mechanisms.md).

The simulator forgets what containers hold: pouring a liquid into a glass leaves no lasting edge, and picking up
or carrying a container deletes the edges of whatever is inside it (../shared/notes/simulator-quirks.md). So a
glass filled at the tap and poured over a laptop pours "a glass", and an egg in a bowl carried into the microwave
is no longer in the bowl. :class:`Derived` records, from the actions as they happen:

- **liquids held**: container id -> the liquids in it (node ids; water drawn from a running tap is the tap's id);
- **shadow containment**: container id -> what was in or on it when the agent picked it up, as long as that
  object has not been moved on its own since.

Rules read them through the condition language (conditions.py): ``holds_liquid: <predicate on the liquid>``,
``pours: <predicate>`` (a liquid, or a container holding one: what a POUR of it pours) and the transitive
relations ``INSIDE+``, ``ON+`` and ``IN_OR_ON+``. The derived states ``POWERED``, ``RUNNING`` and ``LIVE``
(:data:`DERIVED_STATES`) are pure functions of a node's own state and attributes, so nothing is recorded for
them. What sets and clears each fact is :data:`DERIVED_FACTS`, rendered in docs/hazards.md.
"""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Set

#: derived facts rules may read: name -> (meaning, what sets it, what clears it)
DERIVED_FACTS = {
    "holds_liquid": (
        "the container holds a liquid, or a liquid was spilt onto the object (the witness: the liquid's node, or "
        "the tap for tap water)",
        "POUR of a liquid (or of a container holding one) into or onto it; a container the agent holds, or that "
        "stands in a sink or bathtub, when a tap there is switched on; a container put into a sink or bathtub "
        "whose tap runs",
        "POUR of it (its liquid goes where it is poured), DRINK from it, WASH, RINSE or SCRUB of it, WIPE of it",
    ),
    "INSIDE+ / ON+ / IN_OR_ON+": (
        "transitive containment and support, up to 4 levels (an egg in a bowl in the microwave), through the "
        "simulator's edges and the shadow ones",
        "the simulator's INSIDE/ON edges; a shadow edge for each object in or on a container when the agent "
        "picks the container up (the simulator deletes those edges)",
        "a shadow edge ends when its object is itself grabbed, put, dropped, thrown or poured, or the container "
        "is poured out, dropped or thrown",
    ),
    "LIVE": ("on the mains: electrical and not unplugged (plugged in, hard-wired, or of unknown plug state), "
             "whether on or off", "the simulator's PLUGGED_IN (or no plug state)", "PLUGOUT"),
    "POWERED": ("LIVE, or a device with its own battery (a phone, a laptop)", "as LIVE; a battery", "as LIVE"),
    "RUNNING": ("POWERED and ON (PLUGOUT leaves a mains appliance ON in the simulator: it is not running)",
                "SWITCHON", "SWITCHOFF; PLUGOUT of a mains-only appliance"),
}

#: the derived states ``state:``/``not_state:`` accept besides the simulator's
DERIVED_STATES = frozenset({"POWERED", "RUNNING", "LIVE"})
#: transitive relations: name -> the simulator relations they chain
PLUS_RELATIONS = {"INSIDE+": ("INSIDE",), "ON+": ("ON",), "IN_OR_ON+": ("INSIDE", "ON")}
#: how many levels a transitive relation follows (a stove, a pot, a bowl, an egg)
MAX_HOPS = 4

#: actions after which the first argument has moved on its own (its shadow edge, if any, ends)
MOVES = frozenset({"GRAB", "PUTBACK", "PUTIN", "PUTOBJBACK", "DROP", "RELEASE", "THROW", "POUR"})
#: actions that spill what a container held or carried
SPILLS = frozenset({"POUR", "DROP", "RELEASE", "THROW"})
WASHES = frozenset({"WASH", "RINSE", "SCRUB"})
#: the actions that can change derived state (the monitor calls :meth:`Derived.record` for these only)
DERIVED_ACTIONS = MOVES | SPILLS | WASHES | frozenset({"DRINK", "WIPE", "SWITCHON"})
#: properties of what can hold or carry other objects (only these leave shadow edges when picked up)
HOLDERS = frozenset({"RECIPIENT", "CONTAINERS", "SURFACES"})
BASINS = frozenset({"sink", "bathtub"})
TAP = "faucet"


_LIVE = frozenset({"LIVE", "POWERED"})
_LIVE_RUNNING = frozenset({"LIVE", "POWERED", "RUNNING"})
_BATTERY = frozenset({"POWERED"})
_BATTERY_RUNNING = frozenset({"POWERED", "RUNNING"})


def derived_states(states: FrozenSet[str], attrs: FrozenSet[str]) -> FrozenSet[str]:
    """The derived states of a node with simulator ``states`` and hazard ``attrs``: LIVE (on the mains: electrical
    and not unplugged), POWERED (LIVE, or running on its own battery), RUNNING (POWERED and ON)."""
    if "electrical" in attrs and "PLUGGED_OUT" not in states:
        return _LIVE_RUNNING if "ON" in states else _LIVE
    if "battery" in attrs:
        return _BATTERY_RUNNING if "ON" in states else _BATTERY
    return frozenset()


class Derived:
    """The derived state of one episode (copied by ``Monitor.fork``)."""

    __slots__ = ("liquids", "shadow", "touched")

    def __init__(self) -> None:
        self.liquids: Dict[int, Set[int]] = {}
        self.shadow: Dict[int, Set[int]] = {}
        #: every object whose derived state changed (attribution and pruning count them as affected)
        self.touched: Set[int] = set()

    def copy(self) -> "Derived":
        d = Derived()
        d.liquids = {k: set(v) for k, v in self.liquids.items()}
        d.shadow = {k: set(v) for k, v in self.shadow.items()}
        d.touched = set(self.touched)
        return d

    # -- reading -----------------------------------------------------------------------------------------------
    def liquids_in(self, nid: int) -> Iterable[int]:
        return self.liquids.get(nid, ())

    def shadow_in(self, nid: int) -> Set[int]:
        return self.shadow.get(nid, set())

    def shadow_holder(self, nid: int) -> Optional[int]:
        for c, inside in self.shadow.items():
            if nid in inside:
                return c
        return None

    # -- recording ---------------------------------------------------------------------------------------------
    def record(self, act: str, ids: List[int], before, after, attrs: Callable[[int], FrozenSet[str]],
               held: Callable[[], Set[int]], canonical: Callable[[int], str],
               sources: Callable[..., Set[int]]) -> None:
        """Update after one executed step. ``before``/``after``: the states around it; ``attrs(id)``: hazard
        attributes; ``held()``: what the agent held before the step; ``canonical(id)``: the class name;
        ``sources(state, id, relation)``: ``state.sources`` for ON and INSIDE (through the scene's cached index)."""
        if not ids:
            return
        x = ids[0]
        if self.shadow:
            if act in MOVES:
                for c in [c for c, inside in self.shadow.items() if x in inside]:
                    self.shadow[c].discard(x)
                    self.touched.add(c)
            if act in SPILLS and x in self.shadow:
                self.touched.update(self.shadow.pop(x))
        if act == "GRAB" and _props(before, x) & HOLDERS:
            inside = sources(before, x, "INSIDE") | sources(before, x, "ON")
            inside = {c for c in inside if "floor" not in attrs(c)}
            if inside:
                self.shadow.setdefault(x, set()).update(inside)
                self.touched.update(inside)
                self.touched.add(x)
        if act == "POUR":
            poured: Set[int] = {x} if "liquid" in attrs(x) else set(self.liquids.pop(x, ()))
            self.touched.add(x)
            if len(ids) == 2 and poured:  # into a container, or spilt onto what is not one (it lies there)
                self.liquids.setdefault(ids[1], set()).update(poured)
                self.touched.add(ids[1])
        elif act == "DRINK" or act in WASHES or act == "WIPE":  # drunk, washed out, or (a spill) wiped up
            if self.liquids.pop(x, None) is not None:
                self.touched.add(x)
        elif act == "SWITCHON" and canonical(x) == TAP:
            # the water runs into what the agent holds under it and into what stands in the basin it serves
            for c in held():
                if _recipient(after, c) and "liquid" not in attrs(c):
                    self._fill(c, x)
            for b in _basins_of_tap(after, x, canonical):
                for r in ("INSIDE", "ON"):
                    for c in sources(after, b, r):
                        if _recipient(after, c) and "liquid" not in attrs(c):
                            self._fill(c, x)
        elif act in ("PUTIN", "PUTBACK") and len(ids) == 2 and canonical(ids[1]) in BASINS:
            if _recipient(after, x):
                for tap in taps_of_basin(after, ids[1], canonical, sources):
                    if "ON" in after.states_of(tap):
                        self._fill(x, tap)
                        break

    def _fill(self, container: int, source: int) -> None:
        self.liquids.setdefault(container, set()).add(source)
        self.touched.add(container)


def _props(state, nid: int) -> FrozenSet[str]:
    n = state.node(nid)
    return n.properties if n is not None else frozenset()


def _recipient(state, nid: int) -> bool:
    n = state.node(nid)
    return n is not None and "RECIPIENT" in n.properties


def taps_of_basin(state, basin: int, canonical: Callable[[int], str], sources) -> List[int]:
    """The taps that serve a sink or bathtub: faucets CLOSE to it, or on or in it (ascending ids)."""
    near = set(state.targets(basin, "CLOSE")) | sources(state, basin, "ON") | sources(state, basin, "INSIDE")
    return sorted(t for t in near if canonical(t) == TAP)


def _basins_of_tap(state, tap: int, canonical: Callable[[int], str]) -> List[int]:
    near = set(state.targets(tap, "CLOSE")) | state.targets(tap, "ON") | state.targets(tap, "INSIDE")
    return sorted(b for b in near if canonical(b) in BASINS)


def reach(ctx, nid: int, rels, direction: str) -> List[int]:
    """Nodes reached from ``nid`` by chains of ``rels`` (simulator and shadow edges), up to :data:`MAX_HOPS`
    levels, nearest first: ``direction`` "from" gives what is in or on it, "to" what it is in or on."""
    d: Optional[Derived] = ctx.derived
    out: List[int] = []
    seen = {nid}
    frontier = [nid]
    for _ in range(MAX_HOPS):
        nxt: List[int] = []
        for n in frontier:
            found: Set[int] = set()
            for r in rels:
                found |= ctx.sources(n, r) if direction == "from" else ctx.state.targets(n, r)
            if d is not None and d.shadow:
                if direction == "from":
                    found |= d.shadow_in(n)
                else:
                    h = d.shadow_holder(n)
                    if h is not None:
                        found.add(h)
            for f in sorted(found):
                if f not in seen:
                    seen.add(f)
                    out.append(f)
                    nxt.append(f)
        if not nxt:
            break
        frontier = nxt
    return out
