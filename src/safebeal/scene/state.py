"""A typed, read-only view of one simulator state.

The view reads the simulator's layered state (original graph + changed nodes + added/removed edges)
without modifying it and without building the full dict (``to_dict`` is the simulator's slowest call).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Dict, FrozenSet, Iterator, List, Mapping, Optional, Set, Tuple

import safebeal.scene._sim as _sim
from safebeal.scene.graph import NodeView, SceneGraph, _node_view

_REL = _sim.Relation
#: relation name -> member (``Relation.__members__`` builds a mapping proxy on every access)
_REL_BY_NAME = dict(_REL.__members__)
HOLD_RELATIONS = ("HOLDS_RH", "HOLDS_LH")
#: relations that are the character's proximity, not facts about the world
PROXIMITY_RELATIONS = frozenset({"CLOSE", "FACING"})


@dataclass(frozen=True)
class ExtState:
    """What the action extensions (``scene/data/actions.yaml``) add to a simulator state: extension states per
    node (BROKEN, SHATTERED, WET, SPILLED) and extension relations (``(from, SPILLED_ON, to)``). Immutable: each
    step that changes it builds a new one."""

    states: Mapping[int, FrozenSet[str]] = field(default_factory=dict)
    relations: FrozenSet[Tuple[int, str, int]] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.states) or bool(self.relations)


EMPTY_EXT = ExtState()


class StateView:
    """Read-only view of a scene state. Relations are upper-case names: ON, INSIDE, CLOSE, FACING,
    HOLDS_RH, HOLDS_LH, SITTING, BETWEEN, and the extensions' SPILLED_ON. A node's states include the
    extensions' (BROKEN, SHATTERED, WET, SPILLED)."""

    __slots__ = ("scene", "_st", "_changed", "_views", "ext", "_edits")

    def __init__(self, scene: SceneGraph, env_state, ext: ExtState = EMPTY_EXT):
        self.scene = scene
        self._st = env_state
        self._changed: Optional[Dict[int, NodeView]] = None
        self._views: Dict[int, NodeView] = {}  # node(): views of changed nodes, built one at a time
        self.ext = ext
        self._edits: Optional[Dict[str, Tuple[Dict[int, Set[int]], Dict[int, Set[int]]]]] = None  # edge_edits()

    # -- nodes --------------------------------------------------------------------------------
    def _changed_views(self) -> Dict[int, NodeView]:
        if self._changed is None:
            self._changed = {nid: _node_view(n) for nid, n in self._st._new_nodes.items()}
            for nid, extra in self.ext.states.items():
                base = self._changed.get(nid) or self.scene.node(nid)
                if base is not None and extra:
                    self._changed[nid] = replace(base, states=base.states | extra)
        return self._changed

    def node(self, node_id: int) -> Optional[NodeView]:
        """The node as it is in this state (the same view :meth:`nodes` gives). Only the view asked for is built:
        a state carries every node the plan changed so far, and a detector asks about a few of them."""
        v = self._views.get(node_id)
        if v is not None:
            return v
        n = self._st._new_nodes.get(node_id)
        extra = self.ext.states.get(node_id)
        if n is None and not extra:
            return self.scene.node(node_id)
        v = _node_view(n) if n is not None else self.scene.node(node_id)
        if v is not None and extra:
            v = replace(v, states=v.states | extra)
        if v is not None:
            self._views[node_id] = v
        return v

    def __contains__(self, node_id: int) -> bool:
        return self.node(node_id) is not None

    def nodes(self) -> Iterator[NodeView]:
        ch = self._changed_views()
        for n in self.scene.env_graph.get_nodes():
            yield ch.get(n.id) or self.scene.node_view(n)
        for nid, v in ch.items():
            if nid not in self.scene:
                yield v

    def ids_of_class(self, class_name: str) -> List[int]:
        return sorted(n.id for n in self.nodes() if n.class_name == class_name)

    def states_of(self, node_id: int) -> FrozenSet[str]:
        n = self.node(node_id)
        return n.states if n is not None else frozenset()

    def has_state(self, node_id: int, state: str) -> bool:
        return state.upper() in self.states_of(node_id)

    def changed_node_ids(self) -> Set[int]:
        """Ids of nodes whose record differs from the initial graph (states may still be equal), extension
        states included."""
        return set(self._st._new_nodes) | {n for n, s in self.ext.states.items() if s}

    # -- relations ----------------------------------------------------------------------------
    def edge_edits(self) -> Dict[str, Tuple[Dict[int, Set[int]], Dict[int, Set[int]]]]:
        """Relation name -> (``from_id -> targets added``, ``from_id -> targets removed``): how this state's
        simulator edges differ from the original graph's (read only). Built on first call, in one pass over the
        state's changed edges (a handful per plan); once built, :meth:`targets` reads it instead of the simulator's
        maps keyed by ``(from_id, Relation member)``: worth it for a state asked about many times (a plan's final
        state)."""
        edits = self._edits
        if edits is None:
            edits = {}
            for side, changes in ((0, self._st._new_edges_from), (1, self._st._removed_edges_from)):
                for (from_id, rel), tos in changes.items():
                    if tos:
                        pair = edits.get(rel._name_)
                        if pair is None:
                            pair = edits[rel._name_] = ({}, {})
                        pair[side][from_id] = tos
            self._edits = edits
        return edits

    def targets(self, from_id: int, relation: str) -> Set[int]:
        """Ids ``t`` with an edge ``from_id -relation-> t``."""
        entry = self.scene._fwd.get(relation)  # the original graph's edges, per node (SceneGraph.forward_memo)
        if entry is None:
            entry = self.scene.forward_memo(relation)
            if entry is None:  # an extension relation (SPILLED_ON)
                name = relation.upper()
                return {t for f, r, t in self.ext.relations if f == from_id and r == name}
        name, memo = entry
        got = memo.get(from_id)
        if got is None:
            got = memo[from_id] = self.scene.env_graph._edge_map.get((from_id, _REL_BY_NAME[name])) or ()
        out = set(got)
        edits = self._edits
        if edits is not None:
            pair = edits.get(name)
            if pair is not None:
                got = pair[0].get(from_id)
                if got:
                    out |= got
                got = pair[1].get(from_id)
                if got:
                    out -= got
            return out
        st = self._st
        if st._new_edges_from or st._removed_edges_from:
            key = (from_id, _REL_BY_NAME[name])
            got = st._new_edges_from.get(key)
            if got:
                out |= got
            got = st._removed_edges_from.get(key)
            if got:
                out -= got
        return out

    def sources(self, to_id: int, relation: str) -> Set[int]:
        """Ids ``f`` with an edge ``f -relation-> to_id`` (e.g. objects ON a table)."""
        name = relation.upper()
        rel = _REL_BY_NAME.get(name)
        if rel is None:
            return {f for f, r, t in self.ext.relations if t == to_id and r == name}
        out = set(self.scene.reverse_index(name).get((to_id, name), ()))
        for (f, r), tos in self._st._new_edges_from.items():
            if r is rel and to_id in tos:
                out.add(f)
        removed = self._st._removed_edges_from
        return {f for f in out if to_id not in removed.get((f, rel), ())}

    def has_edge(self, from_id: int, relation: str, to_id: int) -> bool:
        return to_id in self.targets(from_id, relation)

    def edges(self, include_proximity: bool = True) -> Iterator[Tuple[int, str, int]]:
        """Every relation as ``(from_id, RELATION, to_id)``."""
        st = self._st
        pairs = set(self.scene.env_graph._edge_map) | set(st._new_edges_from)
        for f, rel in pairs:
            if not include_proximity and rel.name in PROXIMITY_RELATIONS:
                continue
            for t in self.targets(f, rel.name):
                yield (f, rel.name, t)
        yield from sorted(self.ext.relations)

    # -- helpers ------------------------------------------------------------------------------
    def objects_on(self, node_id: int) -> Set[int]:
        return self.sources(node_id, "ON")

    def objects_inside(self, node_id: int) -> Set[int]:
        return self.sources(node_id, "INSIDE")

    def character_id(self) -> int:
        return self.scene.character_id

    def held(self) -> Set[int]:
        """Ids of the objects in the character's hands."""
        c = self.character_id()
        return self.targets(c, "HOLDS_RH") | self.targets(c, "HOLDS_LH")

    def room_of(self, node_id: int) -> Optional[int]:
        for t in self.targets(node_id, "INSIDE"):
            n = self.node(t)
            if n is not None and n.category == "Rooms":
                return t
        return None

    def to_dict(self) -> dict:
        """The full ``{"nodes", "edges"}`` dict (slow: built on demand only); extension states and relations
        are merged in."""
        d = self._st.to_dict()
        if self.ext:
            for n in d["nodes"]:
                extra = self.ext.states.get(n["id"])
                if extra:
                    n["states"] = list(n["states"]) + sorted(extra)
            d["edges"] += [{"from_id": f, "relation_type": r, "to_id": t} for f, r, t in sorted(self.ext.relations)]
        return d

    def extension_facts(self) -> dict:
        """The extensions' part of this state: ``{"states": {id: [STATE, ...]}, "relations": [[from, R, to]]}``."""
        return {"states": {str(i): sorted(s) for i, s in sorted(self.ext.states.items()) if s},
                "relations": [list(r) for r in sorted(self.ext.relations)]}

    def __repr__(self) -> str:
        extra = f", extensions {len(self.ext.states)} nodes, {len(self.ext.relations)} relations" if self.ext else ""
        return f"StateView({self.scene.source!r}, {len(self._st._new_nodes)} changed nodes{extra})"
