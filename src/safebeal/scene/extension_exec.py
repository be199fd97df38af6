"""Execute the action extensions of ``scene/data/actions.yaml`` on top of the simulator's state.

:func:`run_extension` runs one extension step: it checks the ``requires`` conditions, then applies the effects
as the simulator's own state changers (``DeleteEdges``/``AddEdges`` on a new layered ``EnvironmentState``: the
previous state is never modified) plus the extension layer (:class:`~safebeal.scene.state.ExtState`).
:func:`applies` says whether an extension of a simulator action takes the step (its guard), :func:`run_hooks`
applies the hooks after a simulator action succeeded.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Mapping, Optional, Sequence

from safebeal.resources import name_equivalence
import safebeal.scene._sim as _sim
from safebeal.scene.extensions import FLOOR, ActionSpec, ExtensionSpec
from safebeal.scene.state import ExtState, StateView

_HOLDS = (_sim.Relation.HOLDS_RH, _sim.Relation.HOLDS_LH)
FLOOR_CATEGORIES = frozenset({"Floor", "Floors"})


class ExtensionRefused(Exception):
    """A precondition of an extension failed; the message says which (``<plate> (1001) is not held``)."""


def _fmt(view: StateView, nid: int) -> str:
    n = view.node(nid)
    return f"<{n.class_name}> ({nid})" if n is not None else f"({nid})"


def floor_of_agent_room(view: StateView) -> Optional[int]:
    """The floor (lowest id) INSIDE the agent's room, or None."""
    room = view.room_of(view.character_id())
    if room is None:
        return None
    floors = sorted(f for f in view.sources(room, "INSIDE") if _is_floor(view, f))
    return floors[0] if floors else None


def _is_floor(view: StateView, nid: int) -> bool:
    n = view.node(nid)
    return n is not None and (n.class_name == "floor" or n.category in FLOOR_CATEGORIES)


def bind_args(spec: ActionSpec, view: StateView, ids: Sequence[int]) -> Dict[str, int]:
    """Argument name -> node id; an optional argument left out takes its default (the floor of the agent's room)."""
    out = {a.name: i for a, i in zip(spec.args, ids)}
    for a in spec.args[len(ids):]:
        floor = floor_of_agent_room(view)
        if floor is None:
            raise ExtensionRefused(f"{spec.name}: there is no floor in the agent's room for <{a.name}>")
        out[a.name] = floor
    return out


def _in_set(ext: ExtensionSpec, view: StateView, nid: int, set_name: str) -> bool:
    n = view.node(nid)
    if n is None:
        return False
    members = ext.sets[set_name]
    if n.class_name in members:
        return True
    return any(alias in members for alias in name_equivalence().get(n.class_name, ()))


def _reachable(view: StateView, nid: int) -> bool:
    c = view.character_id()
    if nid in view.held() or nid in view.targets(c, "CLOSE"):
        return True
    return _is_floor(view, nid) and view.room_of(nid) == view.room_of(c)


def _check(ext: ExtensionSpec, view: StateView, cond: Mapping, args: Mapping[str, int]) -> Optional[str]:
    """None when ``cond`` holds, else why not (one short clause)."""
    (k, v), = cond.items()
    if k == "any":
        whys = [_check(ext, view, c, args) for c in v]
        return None if any(w is None for w in whys) else " and ".join(w for w in whys if w)
    if k == "holds":
        return None if args[v] in view.held() else f"{_fmt(view, args[v])} is not held"
    if k == "reachable":
        return None if _reachable(view, args[v]) else f"{_fmt(view, args[v])} is not close enough"
    for arg, names in v.items():
        nid = args[arg]
        n = view.node(nid)
        if k == "property" and not (set(names) & n.properties):
            return f"{_fmt(view, nid)} is not {' or '.join(x.lower() for x in names)}"
        if k == "not_property" and set(names) & n.properties:
            return f"{_fmt(view, nid)} is {'/'.join(sorted(set(names) & n.properties)).lower()}"
        if k == "not_class" and n.class_name in names:
            return f"{_fmt(view, nid)} is a {n.class_name}"
        if k == "in_set" and not any(_in_set(ext, view, nid, s) for s in names):
            return f"{_fmt(view, nid)} is not {' or '.join(names)}"
        if k == "not_state" and set(names) & view.states_of(nid):
            return f"{_fmt(view, nid)} is already {'/'.join(sorted(set(names) & view.states_of(nid))).lower()}"
    return None


def applies(ext: ExtensionSpec, action: str, view: StateView, ids: Sequence[int]) -> bool:
    """Whether the extension of ``action`` (if any) takes this step instead of the simulator."""
    spec = ext.actions.get(action)
    if spec is None:
        return False
    if not spec.extends:
        return True
    args = {a.name: i for a, i in zip(spec.args, ids)}
    return all(_check(ext, view, c, args) is None for c in spec.applies)


def run_extension(ext: ExtensionSpec, action: str, view: StateView, ids: Sequence[int], char_index: int = 0):
    """``(env_state, ExtState)`` after the step; raises :class:`ExtensionRefused` when a precondition fails."""
    spec = ext.actions[action]
    args = bind_args(spec, view, ids)
    for cond in spec.requires:
        why = _check(ext, view, cond, args)
        if why is not None:
            raise ExtensionRefused(why)
    changers: list = []
    states: Dict[int, FrozenSet[str]] = dict(view.ext.states)
    relations = set(view.ext.relations)
    _apply(ext, spec.effects, view, args, changers, states, relations, char_index)
    st = view._st.change_state(changers) if changers else view._st.change_state([])
    return st, ExtState({k: v for k, v in states.items() if v}, frozenset(relations))


def run_hooks(ext: ExtensionSpec, action: str, view: StateView, ids: Sequence[int]) -> ExtState:
    """The extension layer after a simulator action with hooks (``WIPE`` dries what it wipes)."""
    effects = ext.hooks.get(action)
    if not effects or not view.ext:
        return view.ext
    args = {str(i): nid for i, nid in enumerate(ids)}
    states: Dict[int, FrozenSet[str]] = dict(view.ext.states)
    relations = set(view.ext.relations)
    _apply(ext, effects, view, args, [], states, relations, 0)
    return ExtState({k: v for k, v in states.items() if v}, frozenset(relations))


def _apply(ext: ExtensionSpec, effects: Sequence[Mapping], view: StateView, args: Mapping[str, int], changers: list,
           states: Dict[int, FrozenSet[str]], relations: set, char_index: int) -> None:
    char = _sim.CharacterNode(char_index)
    for eff in effects:
        k = next(x for x in eff if x != "then")
        v = eff[k]
        if k == "release":
            changers.append(_sim.DeleteEdges(char, list(_HOLDS), _sim.NodeInstance(view._st.get_node(args[v]))))
        elif k == "place":
            obj, dest = args[v["object"]], args[v["on"]]
            node = _sim.NodeInstance(view._st.get_node(obj))
            for rel in ("ON", "INSIDE"):
                for t in view.targets(obj, rel):
                    changers.append(_sim.DeleteEdges(node, [_sim.Relation[rel]], _sim.NodeInstance(view._st.get_node(t))))
            changers.append(_sim.AddEdges(node, _sim.Relation.ON, _sim.NodeInstance(view._st.get_node(dest))))
            room = dest if (view.node(dest) and view.node(dest).category == "Rooms") else view.room_of(dest)
            if room is not None:
                changers.append(_sim.AddEdges(node, _sim.Relation.INSIDE, _sim.NodeInstance(view._st.get_node(room))))
        elif k in ("add_state", "remove_state"):
            for arg, names in v.items():
                nid = args[arg]
                cur = states.get(nid, frozenset())
                states[nid] = cur | frozenset(names) if k == "add_state" else cur - frozenset(names)
        elif k == "relate":
            relations.add((args[v["from"]], v["relation"], args[v["to"]]))
        elif k == "if_in_set":
            if all(_in_set(ext, view, args[a], s) for a, sets in v.items() for s in sets):
                _apply(ext, eff["then"], view, args, changers, states, relations, char_index)


__all__ = ["ExtensionRefused", "applies", "bind_args", "floor_of_agent_room", "run_extension", "run_hooks", "FLOOR"]
