"""Agent conditions of process rules: a rule's ``agent`` mapping (``event``, ``holds``, ``leaves_room_with``, ``on``)
compiled into the agent events it needs and a predicate over the agent (docs/hazards.md, "Rules")."""

from __future__ import annotations

from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple

from safebeal.safety.conditions import ConditionError, Context, compile_predicate, conjunction, first_match
from safebeal.safety.events import AGENT_EVENTS
from safebeal.safety.knowledge import ObjectKB

#: keys of a process rule's ``agent`` mapping (all must hold)
AGENT_KEYS = ("event", "holds", "leaves_room_with", "on")
#: an agent condition: (context of the state before the step, the step's argument ids) -> (holds, witnesses)
AgentPred = Callable[[Context, Sequence[int]], Tuple[bool, Tuple[int, ...]]]


def compile_agent(spec: Any, kb: ObjectKB) -> Tuple[Tuple[str, ...], Optional[AgentPred]]:
    """``(agent events, predicate over the agent or None)`` of a process rule's ``agent`` mapping:

    - ``event``: agent events (all), see :data:`AGENT_EVENTS`;
    - ``holds: <predicate>``: the agent holds an object matching it (the witness);
    - ``leaves_room_with: <predicate>``: the step (a WALK or RUN) takes the agent to another room, leaving behind
      an object it used that matches the predicate, in the room it leaves (the witness): a heat source it lit and
      walked away from;
    - ``on: <predicate>``: the agent sits or lies ON an object matching it (the witness): the bathtub."""
    if not isinstance(spec, Mapping) or not (set(spec) - {"__line__"}) or set(spec) - set(AGENT_KEYS) - {"__line__"}:
        raise ConditionError(f"'agent' takes a mapping of {list(AGENT_KEYS)}")
    evs: Tuple[str, ...] = ()
    if "event" in spec:
        ev = spec["event"]
        if isinstance(ev, str):
            names = [ev]
        elif isinstance(ev, list) and ev and all(isinstance(e, str) for e in ev):
            names = list(ev)
        else:
            raise ConditionError(f"'agent.event' takes an event name or a non-empty list of names, got {ev!r}")
        bad = [e for e in names if e not in AGENT_EVENTS]
        if bad:
            raise ConditionError(f"unknown agent event(s) {bad}; known: {sorted(AGENT_EVENTS)}")
        evs = tuple(names)
    checks: List[AgentPred] = []
    if "holds" in spec:
        held = compile_predicate(spec["holds"], kb)

        def _holds(ctx: Context, args: Sequence[int], held=held) -> Tuple[bool, Tuple[int, ...]]:
            return first_match(ctx, held, ctx.held())

        checks.append(_holds)
    if "leaves_room_with" in spec:
        left = compile_predicate(spec["leaves_room_with"], kb)

        def _leaves(ctx: Context, args: Sequence[int], left=left) -> Tuple[bool, Tuple[int, ...]]:
            if not args:
                return False, ()
            # the used objects matching the predicate first (most walks leave none: no room is looked up then)
            found = [(o, w) for o in sorted(ctx.events.get("used", ())) for ok, w in (left(ctx, o),) if ok]
            if not found:
                return False, ()
            st = ctx.state
            here = st.room_of(ctx.char_id())
            dest = args[0]
            n = st.node(dest)
            there = dest if n is not None and n.category == "Rooms" else st.room_of(dest)
            if here is None or there is None or there == here:
                return False, ()
            held = ctx.held()  # what the agent carries goes with it
            # the first of them (ascending ids) left in this room
            for o, w in found:
                if o not in held and st.room_of(o) == here:
                    return True, (o,) + w
            return False, ()

        checks.append(_leaves)
    if "on" in spec:
        seat = compile_predicate(spec["on"], kb)

        def _on(ctx: Context, args: Sequence[int], seat=seat) -> Tuple[bool, Tuple[int, ...]]:
            return first_match(ctx, seat, ctx.state.targets(ctx.char_id(), "ON"))

        checks.append(_on)
    if not checks:
        return evs, None

    return evs, conjunction(checks)


__all__ = ["AGENT_KEYS", "AgentPred", "compile_agent"]
