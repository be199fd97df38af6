"""``search``: the shortest plan that reaches a task's goal, found by A* search over the simulator.

It uses no LLM and knows nothing about hazards, so it is what a hurried, purely goal-directed agent writes: a
real baseline on every dataset with goals, an upper reference for SuccR, and SafeRisks' temptation audit (the
share of entries where the shortest plan to the goal is unsafe).

**The search.** States are simulator states; a step is one script line that the simulator executes. The
candidate lines at each state are built from a fixed set of objects, the task's *focus*:

- every object a goal names (node goals, both ends of edge goals), the character excepted;
- every object that holds one of them in the initial scene (ON or INSIDE), up to the room, and the rooms;
- for action goals (``CUT``, ``WASH``, ...), the goal's objects are their arguments.

A node goal CLEAN adds ``WASH``/``RINSE``/``SCRUB``/``WIPE`` of that object; an INSIDE edge goal adds ``POUR``
beside ``PUTIN``. Goals about the agent itself add ``SIT``/``LIE`` on sittable/lieable focus objects (the agent
sitting, lying or ON something) and ``TURNTO`` (the agent facing something); ``STANDUP`` is proposed while it sits
or lies.

**Washing needs water.** The simulator washes anything the agent stands near, tap or no tap
(``simulator-quirks.md``); a real agent carries a cup to a running tap. So where a goal asks for a wash (a CLEAN
node goal, a ``WASH``/``RINSE``/``SCRUB`` action goal), the scene's switchable faucets join the objects, and
washing something one carries (a grabbable object, or the hands) is proposed only while it is in hand (or in a
sink) and a faucet close by is ON; wiping it needs a cloth in hand (a towel, rag, sponge, ...); an object that is
not carried (a floor, a microwave) is washed or wiped where it stands, but rinsed only if it holds water itself (a
sink, bathtub, shower, toilet). A scene without a faucet keeps the simulator's rule. The search stays hazard-blind:
it turns the tap on because the wash needs it, and has no reason to turn it off.

From these it proposes, in this fixed order: ``WALK`` to a focus object (to a room only when a goal names it), ``OPEN``/``CLOSE``,
``SWITCHON``/``SWITCHOFF``, ``PLUGIN``/``PLUGOUT`` (objects with a door, a switch or a plug), ``GRAB`` (grabbable
focus objects), ``PUTBACK``/``PUTIN`` of a held object onto/into the target of an edge goal, and the actions of
action goals on the focus objects. States already seen (the focus objects' states and ON/INSIDE/hold relations,
everything the character is close to, what it holds and sits on, and how many action goals are met) are not expanded again.
A* with an admissible bound on the steps left (unmet goal facts; two for an object to be placed that is not
in hand) makes the plan a shortest one; the fixed candidate order and insertion-order ties make it deterministic.
``max_depth`` (default 16) and ``max_nodes`` (default 1,000 expanded states) bound the search; a task it
cannot solve within them gets no plan (an empty output; the reason is the sample's ``finish_reason``).
"""

from __future__ import annotations

import heapq
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

from safebeal.datasets.base import Task
from safebeal.planners.planners import PLANNERS, Planner, PlanOutput
from safebeal.scene.actions import ACTION_ARITY

# relations that place an object; a plan that moves things changes these
_PLACE = ("ON", "INSIDE")
_AGENT_RELS = ("CLOSE", "SITTING", "HOLDS_RH", "HOLDS_LH", "INSIDE")
# one-argument actions an action goal may ask for, applied to focus objects
_NULLARY = ("SLEEP", "STANDUP", "WAKEUP")
# actions that can make an object CLEAN (a node goal asks for it)
_CLEANING = ("WASH", "RINSE", "SCRUB", "WIPE")
# washing with water: in a real home a carried object (or the hands) is washed under a running tap
_WATER_WASH = ("WASH", "RINSE", "SCRUB")
# washed with water although not grabbable
_WASHED_AT_TAP = frozenset({"hands_both"})
# fixtures that hold running water: the only things rinsed where they stand
_WATER_FIXTURES = ("sink", "bathtub", "shower", "toilet")
# what one wipes with (a carried object is wiped with a cloth, not with whatever else is in hand)
_WIPERS = ("towel", "rag", "sponge", "tissue", "napkin", "wipe", "cleaning_cloth", "dishcloth", "duster")


#: bumped whenever a change can change a plan (2: washing needs a running tap), so that cached plans
#: (SafeRisks' search audit, ``generation.audit``) are searched again
SEARCH_VERSION = 2


class SearchFailure(Exception):
    pass


def _goal_parts(goal: Any) -> Tuple[Tuple, Tuple, Tuple[str, ...]]:
    """(node goals, edge goals, action goals) of a GoalSpec; a DiffGoal's changed objects and added relations."""
    nodes = tuple(getattr(goal, "nodes", ()) or ()) or tuple((n, "") for n, _ in getattr(goal, "states", ()) or ())
    edges = tuple(getattr(goal, "edges", ()) or ()) or tuple(getattr(goal, "added", ()) or ())
    actions = tuple(goal.action_goals()) if hasattr(goal, "action_goals") else ()
    return nodes, edges, actions


def _action_options(group: str) -> List[str]:
    return [o.strip().upper().replace(" ", "") for o in group.split("|") if o.strip()]


class _Search:
    def __init__(self, scene, goal, max_depth: int, max_nodes: int):
        from safebeal.scene import SceneEnv
        from safebeal.scene.listing import SceneIndex

        self.scene = scene
        self.goal = goal
        self.env = SceneEnv(scene)
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.char = scene.character_id
        idx = SceneIndex(scene)
        self.idx = idx
        g_nodes, g_edges, self.actions = _goal_parts(goal)
        self.g_nodes, self.g_edges = g_nodes, g_edges
        named: List[int] = []
        for i, _ in g_nodes:
            named.append(i)
        for f, _, t in g_edges:
            named += [f, t]
        named = [i for i in dict.fromkeys(named) if i != self.char and i in idx.nodes]
        focus: List[int] = list(named)
        for i in named:
            stack = [i]
            while stack:
                x = stack.pop()
                for rel, t in idx.parents.get(x, ()):
                    if t not in focus and t in idx.nodes:
                        if idx.is_room(t):
                            focus.append(t)
                        elif not idx.is_structure(t):
                            focus.append(t)
                            stack.append(t)
        self.named = named
        self.focus = sorted(dict.fromkeys(focus))
        self.rooms = sorted(i for i in self.focus if idx.is_room(i))
        # the goal's own objects first, then what holds them: among equally short plans, walk to the object
        self.things = [i for i in named if not idx.is_room(i)] + [i for i in self.focus if i not in named and not idx.is_room(i)]
        # edge-goal targets: where a held object may be put, with the relation the goal asks for
        self.put_targets: List[Tuple[int, str, int]] = []
        for f, r, t in g_edges:
            if f != self.char and r in _PLACE:
                self.put_targets.append((f, r, t))
        # what the goal asks of the agent itself: sitting or lying on something, facing something
        self.agent_goals: Set[str] = {st for i, st in g_nodes if i == self.char}
        self.agent_goals |= {r for f, r, _ in g_edges if f == self.char}
        self.to_clean = [i for i, st in g_nodes if st == "CLEAN" and i != self.char]
        # rooms are walked to only when a goal names one (walking to an object crosses rooms on its own)
        self.goal_rooms = [i for i in named if idx.is_room(i)]
        # washing something carried needs running water (the simulator's WASH/RINSE/SCRUB do not): the scene's
        # switchable faucets join the objects when the goal asks for a wash; without one, the simulator's rule holds
        washes = bool(self.to_clean) or any(a in _WATER_WASH for g in self.actions for a in _action_options(g))
        self.faucets: List[int] = []
        if washes:
            self.faucets = sorted(i for i, n in idx.nodes.items()
                                  if n.get("class_name") == "faucet" and "HAS_SWITCH" in self._props(i))
            extra = [i for i in self.faucets if i not in self.focus]
            self.focus = sorted(set(self.focus) | set(extra))
            self.things += extra
    
    # -- helpers -----------------------------------------------------------------------------------
    def _props(self, i: int) -> FrozenSet[str]:
        n = self.scene.node(i)
        return n.properties if n is not None else frozenset()

    def _name(self, i: int) -> str:
        return str(self.idx.nodes[i]["class_name"])

    def _carried(self, i: int) -> bool:
        """Washed at a tap or wiped with a cloth, not in place: something one carries, or the hands."""
        return "GRABBABLE" in self._props(i) or self._name(i) in _WASHED_AT_TAP

    def _can_clean(self, state, action: str, i: int, close: Set[int], held: Set[int]) -> bool:
        """Physical preconditions the simulator leaves out (``simulator-quirks.md``): washing a carried object
        needs it in hand (or in a sink) and a faucet running close by (where the scene has one); wiping it needs
        a cloth in hand; a thing not carried is rinsed in place only if it is a water fixture."""
        if not self._carried(i):
            # rinsing is running water over a thing: in place, only a fixture that has water does it
            return action != "RINSE" or any(w in self._name(i) for w in _WATER_FIXTURES)
        if action in _WATER_WASH and self.faucets:
            at_tap = i in held or self._name(i) in _WASHED_AT_TAP or any(
                "sink" in self._name(t) for rel in _PLACE for t in state.targets(i, rel))
            return at_tap and any(f in close and "ON" in state.states_of(f) for f in self.faucets)
        if action == "WIPE":
            return any(j != i and any(w in self._name(j) for w in _WIPERS) for j in held)
        return True

    def _line(self, action: str, *ids: int) -> str:
        return f"[{action}] " + " ".join(f"<{self._name(i)}> ({i})" for i in ids)

    def _signature(self, state, n_act: int) -> Tuple:
        parts: List[Any] = [n_act, state.states_of(self.char)]
        for i in self.focus:
            parts.append(state.states_of(i))
            for rel in _PLACE:
                parts.append(frozenset(state.targets(i, rel)))
        for rel in _AGENT_RELS:
            # the whole CLOSE set: the simulator's "close to" preconditions reach beyond the focus objects
            parts.append(frozenset(state.targets(self.char, rel)))
        return tuple(parts)

    def _candidates(self, state) -> List[str]:
        out: List[str] = []
        held = state.held()
        close = state.targets(self.char, "CLOSE")
        here = state.room_of(self.char)
        if state.states_of(self.char) & {"SITTING", "LYING"}:
            out.append("[STANDUP]")
        for r in self.goal_rooms:
            if r != here:
                out.append(self._line("WALK", r))
        for i in self.things:
            if i not in close and i not in held:
                out.append(self._line("WALK", i))
        for i in self.things:
            p, s = self._props(i), state.states_of(i)
            if "CAN_OPEN" in p:
                out.append(self._line("CLOSE" if "OPEN" in s else "OPEN", i))
            if "HAS_SWITCH" in p:
                out.append(self._line("SWITCHOFF" if "ON" in s else "SWITCHON", i))
            if "HAS_PLUG" in p:
                out.append(self._line("PLUGOUT" if "PLUGGED_IN" in s else "PLUGIN", i))
        for i in self.things:
            if i not in held and "GRABBABLE" in self._props(i):
                out.append(self._line("GRAB", i))
        for f, rel, t in self.put_targets:
            if f in held:
                out.append(self._line("PUTIN" if rel == "INSIDE" else "PUTBACK", f, t))
                if rel == "INSIDE":  # a liquid goes in by pouring
                    out.append(self._line("POUR", f, t))
        for i in self.to_clean:
            out += [self._line(a, i) for a in _CLEANING if self._can_clean(state, a, i, close, held)]
        if self.agent_goals & {"SITTING", "ON", "LYING"}:
            for i in self.things:
                p = self._props(i)
                if "SITTABLE" in p:
                    out.append(self._line("SIT", i))
                if "LIEABLE" in p:
                    out.append(self._line("LIE", i))
        if "FACING" in self.agent_goals:
            out += [self._line("TURNTO", i) for i in self.named if not self.idx.is_room(i)]
        for group in self.actions:
            for a in _action_options(group):
                if a in _NULLARY:
                    out.append(f"[{a}]")
                    continue
                if ACTION_ARITY.get(a) == 2:  # POUR, PUTIN, ...: a held goal object onto or into another
                    out += [self._line(a, i, j) for i in self.named if i in held for j in self.things if j != i]
                    continue
                for i in self.named:
                    if a in _CLEANING and not self._can_clean(state, a, i, close, held):
                        continue
                    out.append(self._line(a, i))
        return list(dict.fromkeys(out))

    def _n_actions(self, n_act: int, line: str) -> int:
        if n_act < len(self.actions):
            act = line[1:line.index("]")]
            if any(act == o or act.startswith(o + "_") for o in _action_options(self.actions[n_act])):
                return n_act + 1
        return n_act

    def _done(self, state, n_act: int) -> bool:
        return n_act == len(self.actions) and self.goal.holds(state)

    # -- A* search ------------------------------------------------------------------------------------------
    def _h(self, state, n_act: int) -> int:
        """A lower bound on the steps left (admissible: one step meets at most one goal fact; an object not in
        hand needs a GRAB and a PUT to be placed)."""
        h = len(self.actions) - n_act
        for i, st in self.g_nodes:
            if st and not state.has_state(i, st):
                h += 1
        held = None
        for f, r, t in self.g_edges:
            if not state.has_edge(f, r, t):
                if f == self.char or r not in _PLACE:
                    h += 1
                else:
                    held = state.held() if held is None else held
                    h += 1 if f in held else 2
        return h

    def run(self) -> List[str]:
        """A* over plans: f = steps so far + :meth:`_h`; ties go to the longer plan (closer to
        the goal), then to insertion order, so the search is deterministic. The
        goal is tested when a state is taken from the queue, so the plan is a shortest one."""
        start = self.env.reset()
        seen: Dict[Tuple, int] = {self._signature(start, 0): 0}  # signature -> fewest steps it was reached in
        tie = 0
        frontier: List[Tuple[int, int, int, Any, int, Tuple[str, ...]]] = [(self._h(start, 0), 0, 0, start, 0, ())]
        expanded = 0
        while frontier:
            _, _, _, state, n_act, plan = heapq.heappop(frontier)
            if self._done(state, n_act):
                return list(plan)
            if len(plan) >= self.max_depth:
                continue
            expanded += 1
            if expanded > self.max_nodes:
                raise SearchFailure(f"no plan within {self.max_nodes} expanded states (focus: {len(self.focus)} objects)")
            for line in self._candidates(state):
                self.env.reset(state, t=len(plan))
                res = self.env.step(line)
                if not res.ok:
                    continue
                k = self._n_actions(n_act, line)
                sig = self._signature(res.after, k)
                if seen.get(sig, self.max_depth + 1) <= len(plan) + 1:
                    continue
                seen[sig] = len(plan) + 1
                tie += 1
                heapq.heappush(frontier, (len(plan) + 1 + self._h(res.after, k), -(len(plan) + 1), tie, res.after, k,
                                          plan + (line,)))
        raise SearchFailure(f"no plan of at most {self.max_depth} steps reaches the goal")


def search_plan(scene, goal, max_depth: int = 16, max_nodes: int = 1000) -> List[str]:
    """The shortest script (a list of lines) from ``scene``'s initial state to a state where ``goal`` holds.
    Raises :class:`SearchFailure` when none is found within the bounds."""
    return _Search(scene, goal, max_depth, max_nodes).run()


@PLANNERS.register("search", help="no LLM: the shortest plan to the task's goal, by A* search "
                                  "over the simulator (hazard-blind); search:max_depth=16,max_nodes=1000")
class SearchPlanner(Planner):
    name = "search"

    def __init__(self, max_depth: int = 16, max_nodes: int = 1000):
        super().__init__()
        self.max_depth = int(max_depth)
        self.max_nodes = int(max_nodes)
        if self.max_depth < 1 or self.max_nodes < 1:
            from safebeal.errors import SafebealError

            raise SafebealError("search: max_depth and max_nodes must be positive")
        self.spec = "search"
        if (self.max_depth, self.max_nodes) != (16, 1000):
            self.spec += f":max_depth={self.max_depth},max_nodes={self.max_nodes}"

    def config(self) -> Dict[str, Any]:
        return {"name": self.name, "max_depth": self.max_depth, "max_nodes": self.max_nodes}

    #: searching takes time (about half a second a task): the runner writes each plan as it is found
    streams = True

    def plan(self, tasks: Sequence[Task]) -> List[PlanOutput]:
        return list(self.plan_iter(tasks))

    def plan_iter(self, tasks: Sequence[Task], stop: Any = None) -> Iterator[PlanOutput]:
        import time

        for t in tasks:
            if stop is not None and stop.is_set():
                return
            t0 = time.perf_counter()
            goal = t.get_goal()
            if goal is None or not hasattr(goal, "holds") or t.scene is None:
                yield PlanOutput(t.id, None, "search needs a task with a scene and a goal")
                continue
            try:
                lines = search_plan(t.get_scene(), goal, self.max_depth, self.max_nodes)
                yield PlanOutput(t.id, "\n".join(lines), None, None, time.perf_counter() - t0, 1, finish_reason="goal")
            except SearchFailure as exc:
                # not a failed generation: the planner's answer is "no plan" (an empty output), and why
                yield PlanOutput(t.id, "", None, None, time.perf_counter() - t0, 1, finish_reason=f"no plan: {exc}")
