"""Hazard-injection mutation operators: edit a safe plan at a chosen step so that it becomes unsafe.

Every operator is a small named object in :data:`MUTATIONS` (``MUTATIONS.create("knife_on_floor")``). Given a
:class:`PlanContext` (the safe plan, the state before each of its steps and the object hazard knowledge) and a
seeded ``random.Random``, an operator yields candidate :class:`Mutant` plans, most plausible first. It picks the
objects it needs from the scene by hazard attribute (``kb.attrs``: ``sharp``, ``toxic``, ``heat_source``, ...) and
by simulator state *at the step it edits*, and it writes realistic steps: walk to an object before grabbing it,
open a closed fridge before putting something in it, walk to the floor before putting something on it.

Operators by kind (``safebeal pairs operators``):

- **on-task** (:mod:`safebeal.align.ontask`, the default set :data:`safebeal.align.ontask.DEFAULT_OPERATORS`): omit
  a safety step, add one hazardous step on an object the plan already handles, substitute a hazardous destination
  the prompt lists, reorder two steps; and the specific removals and replacements here (drop the final SWITCHOFF
  or CLOSE, skip the fridge return, put the carried object on the floor);
- **detours** (:mod:`safebeal.align.detours`, opt-in): an off-task detour inserted before a chosen step.

When the prompt's object list is known (``PlanContext.listed``, set by the pair builder), operators pick objects
from it only: a rejected plan that uses an object the prompt does not offer teaches "never use unlisted objects",
not safety (the builder also rejects such a plan, ``unlisted_object``).

Operators only propose. Whether a mutant is executable and unsafe is decided by running it in the simulator and
the rule-based detector (:mod:`safebeal.align.pairs`); the category recorded for a pair is the detector's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple

from safebeal.registry import Registry
from safebeal.safety.knowledge import ObjectKB
from safebeal.scene import SceneGraph, ScriptLine, ScriptObject, StateView, Trajectory

#: lines replayed after an inserted detour to bring the agent back (see PlanContext.resume)
RESUME_ACTIONS = frozenset({"WALK", "RUN", "FIND", "TURNTO"})
MOVE_ACTIONS = frozenset({"WALK", "RUN", "FIND"})
#: actions that put down the object the agent holds (first argument)
PUT_ACTIONS = frozenset({"PUTBACK", "PUTIN", "PUTOBJBACK"})
#: heat sources that stand in place with a top to put things on (a towel goes on these, not on a lighter)
STATIONARY_HEAT = frozenset({"oven", "stove", "toaster", "coffe_maker"})


@dataclass(frozen=True)
class Mutant:
    """A candidate unsafe plan: the whole plan, the index of its first edited line and the hazard objects."""

    operator: str
    lines: Tuple[ScriptLine, ...]
    step: int  # 0-based index of the first line that differs from the safe plan
    objects: Tuple[int, ...]
    note: str = ""


class PlanContext:
    """A safe plan with the state before each step, and lookups the operators share.

    ``states[i]`` is the state before ``lines[i]``; ``states[len(lines)]`` is the final state.
    Class names and properties never change in the simulator, so attribute indexes are built once from the scene.
    """

    def __init__(self, scene: SceneGraph, lines: Sequence[ScriptLine], states: Sequence[StateView], kb: ObjectKB):
        if len(states) != len(lines) + 1:
            raise ValueError(f"need one state per step plus the final state: {len(lines)} lines, {len(states)} states")
        self.scene = scene
        self.lines = tuple(lines)
        self.states = list(states)
        self.kb = kb
        self._attrs: Dict[int, FrozenSet[str]] = {}
        self._by_attr: Optional[Dict[str, List[int]]] = None
        self.char = scene.character_id
        #: ids of the objects the prompt lists (None: every object of the scene may be used)
        self.listed: Optional[FrozenSet[int]] = None

    @classmethod
    def from_trajectory(cls, traj: Trajectory, kb: ObjectKB) -> "PlanContext":
        if not traj.executable:
            raise ValueError(f"the safe plan is not executable: {traj.error}")
        return cls(traj.scene, traj.script.lines, traj.states, kb)

    def __len__(self) -> int:
        return len(self.lines)

    # -- objects -------------------------------------------------------------------------------------------------
    def node(self, nid: int):
        return self.scene.node(nid)

    def attrs(self, nid: int) -> FrozenSet[str]:
        a = self._attrs.get(nid)
        if a is None:
            a = self._attrs[nid] = self.kb.node_attrs(self.scene.node(nid))
        return a

    def with_attr(self, attr: str) -> List[int]:
        """Ids of the scene's objects that have hazard attribute ``attr`` (sorted)."""
        if self._by_attr is None:
            idx: Dict[str, List[int]] = {}
            for n in self.scene.env_graph.get_nodes():
                for a in self.attrs(n.id):
                    idx.setdefault(a, []).append(n.id)
            self._by_attr = {a: sorted(v) for a, v in idx.items()}
        out = self._by_attr.get(attr, [])
        return out if self.listed is None else [i for i in out if i in self.listed]

    def usable(self, nid: int) -> bool:
        """Whether an edit may name ``nid``: the prompt lists it (always true when the list is unknown)."""
        return self.listed is None or nid in self.listed

    def has_prop(self, nid: int, prop: str) -> bool:
        n = self.scene.node(nid)
        return n is not None and prop in n.properties

    def line(self, action: str, *ids: int) -> ScriptLine:
        """A script line naming each object by its class, as the simulator checks."""
        return ScriptLine(action, tuple(ScriptObject(self.scene.node(i).class_name, i) for i in ids))

    # -- state queries -------------------------------------------------------------------------------------------
    def agent_free(self, state: StateView) -> bool:
        """The agent can walk (not sitting or lying)."""
        return not ({"SITTING", "LYING"} & state.states_of(self.char))

    def hands_free(self, state: StateView) -> int:
        return 2 - len(state.held())

    def closed_containers(self, state: StateView, nid: int) -> List[int]:
        """The closed, openable containers ``nid`` is inside (GRAB fails until they are opened)."""
        return [t for t in sorted(state.targets(nid, "INSIDE"))
                if self.has_prop(t, "CAN_OPEN") and "CLOSED" in state.states_of(t)]

    def reachable(self, state: StateView, nid: int) -> bool:
        """In a room, not held, and not inside something closed."""
        if nid in state.held() or state.room_of(nid) is None:
            return False
        return not self.closed_containers(state, nid)

    def grabbable(self, state: StateView, ids: Iterable[int]) -> List[int]:
        """Objects the agent can fetch: grabbable and reachable, or inside one closed container (a drawer, a cabinet,
        the fridge) that is itself reachable and can be opened (not a running appliance)."""
        out = []
        for i in ids:
            if not self.has_prop(i, "GRABBABLE") or i in state.held() or state.room_of(i) is None or not self.usable(i):
                continue
            boxes = self.closed_containers(state, i)
            if not boxes or (len(boxes) == 1 and self.reachable(state, boxes[0]) and self.usable(boxes[0])
                             and "ON" not in state.states_of(boxes[0])):
                out.append(i)
        return out

    def fetch(self, state: StateView, nid: int) -> List[ScriptLine]:
        """Steps that get ``nid`` into a hand: walk and grab, opening (and closing again) its closed container."""
        boxes = self.closed_containers(state, nid)
        if not boxes:
            return [self.line("WALK", nid), self.line("GRAB", nid)]
        box = boxes[0]
        return [self.line("WALK", box), self.line("OPEN", box), self.line("GRAB", nid), self.line("CLOSE", box)]

    def floor_near(self, state: StateView, nid: int) -> Optional[int]:
        """A floor tile in ``nid``'s room: one the object is close to, else the lowest id."""
        room = state.room_of(nid)
        if room is None:
            return None
        floors = [f for f in self.with_attr("floor") if state.room_of(f) == room]
        if not floors:
            return None
        close = state.targets(nid, "CLOSE") | state.sources(nid, "CLOSE")
        near = [f for f in floors if f in close]
        return (near or floors)[0]

    def surface_near(self, state: StateView, nid: int) -> Optional[int]:
        """A fixed surface (counter, table) in ``nid``'s room, not the floor: one close to it if any."""
        room = state.room_of(nid)
        if room is None:
            return None
        out = []
        for n in self.scene.env_graph.get_nodes():
            props = {p.name for p in n.properties}
            if "SURFACES" in props and "GRABBABLE" not in props and self.usable(n.id) and "floor" not in self.attrs(n.id) \
                    and n.category != "Rooms" and state.room_of(n.id) == room and n.id != nid:
                out.append(n.id)
        if not out:
            return None
        close = state.targets(nid, "CLOSE") | state.sources(nid, "CLOSE")
        near = sorted(i for i in out if i in close)
        return (near or sorted(out))[0]

    def walks(self, i: int) -> bool:
        """Whether line ``i`` moves the agent: a WALK or RUN, or a FIND of an object it is not yet close to."""
        ln = self.lines[i]
        if ln.action in ("WALK", "RUN"):
            return True
        return ln.action == "FIND" and bool(ln.ids) and ln.ids[0] not in self.states[i].targets(self.char, "CLOSE")

    def insertion_points(self) -> List[int]:
        """Indices ``i`` (1 <= i < len) before which a block of steps can be inserted: the agent can walk there
        (not sitting or lying) and, unless line ``i`` moves it anyway, an earlier line moved it (the block is
        followed by :meth:`resume`). Inserting at 0 would leave no shared prefix, at the end no shared continuation."""
        return [i for i in range(1, len(self.lines)) if self.agent_free(self.states[i])
                and (self.walks(i) or self._anchor(i) is not None)]

    def _anchor(self, i: int) -> Optional[int]:
        for j in range(i - 1, -1, -1):
            if self.walks(j):
                return j
        return None

    def resume(self, i: int) -> List[ScriptLine]:
        """Steps that bring the agent back to where the plan had it before line ``i``, after an inserted detour:
        none if line ``i`` moves it anyway, else the movement and perception lines (WALK, RUN, FIND, TURNTO) from
        the last line that moved it up to ``i``."""
        if self.walks(i):
            return []
        j = self._anchor(i)
        if j is None:
            return []
        return [ln for ln in self.lines[j:i] if ln.action in RESUME_ACTIONS]

    def used_later(self, i: int, nid: int, actions: Iterable[str]) -> bool:
        """Whether a line from ``i`` on applies one of ``actions`` to ``nid`` (an edit must not pre-empt it)."""
        acts = frozenset(actions)
        return any(ln.action in acts and nid in ln.ids for ln in self.lines[i:])

    def rank(self, rng: random.Random, ids: Iterable[int], i: int) -> List[int]:
        """Order objects for an edit at step ``i``: those the plan has already finished with first, then those in
        the agent's room, then the rest, and last those the plan still needs from step ``i`` on (moving them would
        break it); random within each group."""
        state = self.states[i]
        room = state.room_of(self.char)
        later = {a.id for ln in self.lines[i:] for a in ln.args}
        earlier = {a.id for ln in self.lines[:i] for a in ln.args}
        groups: Tuple[List[int], ...] = ([], [], [], [])
        for o in sorted(set(ids)):
            if o in later:
                groups[3].append(o)
            elif o in earlier:
                groups[0].append(o)
            elif room is not None and state.room_of(o) == room:
                groups[1].append(o)
            else:
                groups[2].append(o)
        out: List[int] = []
        for g in groups:
            rng.shuffle(g)
            out += g
        return out

    def splice(self, start: int, stop: int, block: Sequence[ScriptLine]) -> Tuple[ScriptLine, ...]:
        """The plan with ``lines[start:stop]`` replaced by ``block`` (stop == start inserts)."""
        return self.lines[:start] + tuple(block) + self.lines[stop:]


# -- operators ----------------------------------------------------------------------------------------------------
class Mutation:
    """Base class: ``candidates(ctx, rng)`` yields :class:`Mutant` plans, most plausible first."""

    name = "mutation"
    category = ""  # the category the operator aims at (the detector decides the recorded one)
    kind = "insertion"

    def __init__(self, max_positions: int = 3, max_objects: int = 3):
        self.max_positions = int(max_positions)
        self.max_objects = int(max_objects)

    def candidates(self, ctx: PlanContext, rng: random.Random) -> Iterator[Mutant]:  # pragma: no cover - abstract
        raise NotImplementedError

    # helpers
    def _positions(self, ctx: PlanContext, rng: random.Random) -> List[int]:
        pts = ctx.insertion_points()
        rng.shuffle(pts)
        return pts[: self.max_positions]

    def _mutant(self, ctx: PlanContext, start: int, stop: int, block: Sequence[ScriptLine], objects: Sequence[int],
                note: str) -> Mutant:
        """Replace ``lines[start:stop]`` by ``block`` (start == stop inserts). A block that walks is followed by the
        way back to where the plan had the agent (:meth:`PlanContext.resume`)."""
        if stop < len(ctx) and any(ln.action in MOVE_ACTIONS for ln in block):
            block = list(block) + ctx.resume(stop)
        return Mutant(self.name, ctx.splice(start, stop, block), start, tuple(objects), note)

    def _insertions(self, ctx: PlanContext, rng: random.Random, pick, build) -> Iterator[Mutant]:
        """For each insertion point (random order), the objects ``pick(state, i)`` returns (ranked), and the block
        ``build(ctx, state, object)`` returns as ``(lines, hazard objects, note)`` (None: skip that object)."""
        for i in self._positions(ctx, rng):
            state = ctx.states[i]
            objs = ctx.rank(rng, pick(state, i), i)[: self.max_objects]
            for o in objs:
                made = build(ctx, state, o)
                if made is not None:
                    block, objects, note = made
                    yield self._mutant(ctx, i, i, block, objects, note)


MUTATIONS: Registry[Mutation] = Registry("mutation", plugins=("safebeal.align.detours", "safebeal.align.ontask"))


def _final_index(lines: Sequence[ScriptLine], action: str, nid: int) -> Optional[int]:
    for j in range(len(lines) - 1, -1, -1):
        if lines[j].action == action and lines[j].ids and lines[j].ids[0] == nid:
            return j
    return None


@MUTATIONS.register("drop_switchoff", help="remove the plan's final SWITCHOFF of a heat source or a faucet")
class DropSwitchOff(Mutation):
    name, category, kind = "drop_switchoff", "fire_heat", "removal"

    def candidates(self, ctx, rng):
        sites = []
        for j, ln in enumerate(ctx.lines):
            if j == 0 or ln.action != "SWITCHOFF" or not ln.ids:
                continue
            nid = ln.ids[0]
            if {"heat_source", "water_source"} & ctx.attrs(nid) and _final_index(ctx.lines, "SWITCHOFF", nid) == j:
                sites.append(j)
        rng.shuffle(sites)
        for j in sites:
            nid = ctx.lines[j].ids[0]
            yield self._mutant(ctx, j, j + 1, (), (nid,), f"left {ctx.lines[j].args[0]} on")


@MUTATIONS.register("drop_close", help="remove the plan's final CLOSE of the fridge or freezer")
class DropClose(Mutation):
    name, category, kind = "drop_close", "food_safety", "removal"

    def candidates(self, ctx, rng):
        sites = [j for j, ln in enumerate(ctx.lines) if j > 0 and ln.action == "CLOSE" and ln.ids
                 and "cold_storage" in ctx.attrs(ln.ids[0]) and _final_index(ctx.lines, "CLOSE", ln.ids[0]) == j]
        rng.shuffle(sites)
        for j in sites:
            yield self._mutant(ctx, j, j + 1, (), (ctx.lines[j].ids[0],), f"left {ctx.lines[j].args[0]} open")


@MUTATIONS.register("skip_fridge_return", help="leave a perishable on the counter instead of putting it back in the fridge")
class SkipFridgeReturn(Mutation):
    name, category, kind = "skip_fridge_return", "food_safety", "removal"

    def candidates(self, ctx, rng):
        sites = [j for j, ln in enumerate(ctx.lines) if j > 0 and ln.action in ("PUTIN", "PUTBACK") and len(ln.ids) == 2
                 and "perishable" in ctx.attrs(ln.ids[0]) and "cold_storage" in ctx.attrs(ln.ids[1])]
        rng.shuffle(sites)
        for j in sites:
            food, fridge = ctx.lines[j].ids
            state = ctx.states[j]
            surface = ctx.surface_near(state, fridge)
            if surface is not None:  # put it down next to the fridge instead
                block = [ctx.line("WALK", surface), ctx.line("PUTBACK", food, surface)]
                yield self._mutant(ctx, j, j + 1, block, (food,), f"left {ctx.lines[j].args[0]} out of the fridge")
            yield self._mutant(ctx, j, j + 1, (), (food,), f"did not return {ctx.lines[j].args[0]} to the fridge")


@MUTATIONS.register("put_on_floor", help="put an object the plan carries on the floor instead of where the plan puts it")
class PutOnFloor(Mutation):
    name, category, kind = "put_on_floor", "slip_trip_fall", "replacement"

    def candidates(self, ctx, rng):
        yield from _replace_put(self, ctx, rng, None, drop=False)


def _replace_put(op: Mutation, ctx: PlanContext, rng: random.Random, attr: Optional[str], floor: bool = True,
                 drop: bool = True) -> Iterator[Mutant]:
    """Replace a step that puts down a carried object (with ``attr``) by putting it on the floor or dropping it."""
    sites = [j for j, ln in enumerate(ctx.lines) if j > 0 and ln.action in PUT_ACTIONS and ln.ids
             and (attr is None or attr in ctx.attrs(ln.ids[0])) and "floor" not in ctx.attrs(ln.ids[-1])]
    rng.shuffle(sites)
    for j in sites[: op.max_positions]:
        x = ctx.lines[j].ids[0]
        state = ctx.states[j]
        name = ctx.lines[j].args[0]
        fl = ctx.floor_near(state, ctx.char)
        if floor and fl is not None:
            # the walk to where the plan puts it down goes to the floor instead (same length), else one is added
            start = j - 1 if ctx.lines[j - 1].action in MOVE_ACTIONS and ctx.lines[j - 1].ids == ctx.lines[j].ids[-1:] else j
            block = [ctx.line("WALK", fl), ctx.line("PUTBACK", x, fl)]
            yield op._mutant(ctx, start, j + 1, block, (x,), f"put {name} on the floor instead")
        if drop:
            yield op._mutant(ctx, j, j + 1, [ctx.line("DROP", x)], (x,), f"dropped {name} instead of putting it down")


def operators(names: Optional[Sequence[str]] = None, **kwargs) -> List[Mutation]:
    """The operators named (all registered ones by default), created with ``kwargs``; specs allowed."""
    specs = list(names) if names else MUTATIONS.names()
    return [MUTATIONS.create(s, **kwargs) for s in specs]
