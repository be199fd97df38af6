"""Attribution pruning: which nodes a plan may have affected, so that a termination rule is evaluated on those only.

With default (attributed) judging, a termination hazard counts only if the plan caused it or touched one of its
objects. :func:`compile_affected` turns a rule's object predicate into a function of a :class:`ChangeSet` (what
the plan may have changed) that over-approximates the nodes on which the rule can newly hold or be the plan's; every
other node is skipped. ``SafetyDetector(prune=False)`` evaluates every candidate instead, with the same verdicts
(tests/safety/test_monitor.py). :class:`NodeKind` holds what static filters read of a node (class, properties,
attributes), shared by every node of that kind in every scene.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from safebeal.safety.conditions import STATIC_KEYS, Context, StaticFilter, _as_list, _NONE, compile_static
from safebeal.safety.knowledge import ObjectKB
from safebeal.scene import SceneGraph, StateView, _sim
from safebeal.scene.extensions import extension_relations

#: relations whose edges change only at the objects an action names (or their contents): see :class:`ChangeSet`
LOCAL_RELATIONS = frozenset({"ON", "INSIDE"})
#: the action extensions' relations (SPILLED_ON): their edges live only in a state's ``ext``, a handful per plan,
#: so every node an edge of theirs touches, in the initial or the final state, is taken as affected
EXT_RELATIONS = frozenset(extension_relations()) - frozenset(_sim.Relation.__members__)
_NO_EDITS: Mapping[int, Set[int]] = {}  # d_in: a relation the final state did not edit


@dataclass
class ChangeSet:
    """What a plan may have changed, for attribution.

    ``base`` holds every node whose states, events or outgoing ON/INSIDE edges may differ between the initial
    and the final state: the objects the plan used, their contents (carrying a container deletes its contents'
    edges), the character and every node the simulator changed. ``rev`` is the initial state's reverse ON/INSIDE
    index; with ``base`` it gives the final state's reverse edges exactly (:meth:`sources`), without the
    scene-wide index a StateView builds on first use. ``ctx`` (final state) evaluates static filters."""

    initial: StateView
    final: StateView
    base: Set[int]
    rev: "ReverseIndex"
    ctx: "Context"
    #: node id -> its :class:`NodeKind` (a node's class, properties and attributes never change, so the detector
    #: keeps one of these per scene and every plan on the scene shares it), and (class name, properties) -> the
    #: kind, for every scene (the detector keeps one): a new scene's nodes mostly find their kind's filter
    #: results already computed
    node_kinds: Dict[int, "NodeKind"] = field(default_factory=dict)
    kinds: Dict[Tuple[str, FrozenSet[str]], "NodeKind"] = field(default_factory=dict)
    _din: Dict[str, Set[int]] = field(default_factory=dict)
    #: relation -> {target: the ``base`` nodes with a final-state edge of that relation to it} (:meth:`sources`)
    _base_rev: Dict[str, Dict[int, Set[int]]] = field(default_factory=dict)
    _base_pass: Optional[Dict[int, FrozenSet[int]]] = None  # base_passing: id of a filter -> base nodes passing it
    #: relation -> {node: its final targets} and {node: its final sources} (:meth:`targets`, :meth:`sources`)
    _tmemo: Dict[str, Dict[int, Set[int]]] = field(default_factory=lambda: defaultdict(dict))
    _smemo: Dict[str, Dict[int, Set[int]]] = field(default_factory=lambda: defaultdict(dict))
    #: compiled affected function -> its result on this change set (read-only once computed)
    affected_memo: Dict[int, Set[int]] = field(default_factory=dict)
    #: (id of a static filter, relation) -> {target: the initial graph's sources of that relation into it that pass
    #: the filter} (:meth:`filtered_sources_of`; the detector keeps one per scene, shared by every plan on it)
    scene_sources: Dict[Tuple[int, str], Dict[int, Tuple[int, ...]]] = field(default_factory=dict)

    def targets(self, node_id: int, rel: str) -> Set[int]:
        memo = self._tmemo[rel]
        out = memo.get(node_id)
        if out is None:
            out = memo[node_id] = self.final.targets(node_id, rel)
        return out

    def sources(self, node_id: int, rel: str) -> Set[int]:
        """Final-state ``sources``: an edge the plan added or removed starts at a node of ``base``."""
        memo = self._smemo[rel]
        out = memo.get(node_id)
        if out is None:
            out = memo[node_id] = self._sources(node_id, rel)
        return out

    def sources_of(self, ids: Iterable[int], rel: str, out: Set[int]) -> None:
        """Add to ``out`` the final-state ``sources`` of every one of ``ids`` (:meth:`sources`, in one call)."""
        memo = self._smemo[rel]
        for t in ids:
            got = memo.get(t)
            if got is None:
                got = memo[t] = self._sources(t, rel)
            if got:
                out |= got

    def _sources(self, node_id: int, rel: str) -> Set[int]:
        base = self.base
        out = {c for c in self.rev.of(rel).get(node_id, ()) if c not in base}  # unchanged out-edges
        into = self._base_rev.get(rel)
        if into is None:  # the final out-edges of ``base``, reversed once per relation and plan
            into = self._base_rev[rel] = {}
            for c in base:
                for t in self.targets(c, rel):
                    got = into.get(t)
                    if got is None:
                        into[t] = {c}
                    else:
                        got.add(c)
        got = into.get(node_id)
        if got:
            out |= got
        return out

    def filtered_sources_of(self, static: "StaticFilter", ids: Iterable[int], rel: str, out: Set[int]) -> None:
        """Add to ``out`` the final-state ``rel`` sources of ``ids`` that are outside ``base`` and pass ``static``.
        A node outside ``base`` keeps its initial out-edges, so these are its initial ones: read from the scene's
        reverse index restricted to the nodes passing the filter (``scene_sources``, remembered per scene)."""
        memo = self.scene_sources.get((id(static), rel))
        if memo is None:
            memo = self.scene_sources[(id(static), rel)] = {}
        base = self.base
        by_target = None
        for t in ids:
            got = memo.get(t)
            if got is None:
                if by_target is None:
                    by_target = self.rev.of(rel)
                got = memo[t] = tuple(x for x in by_target.get(t, ()) if self.passes(static, x))
            for x in got:
                if x not in base:
                    out.add(x)

    def d_in(self, rel: str) -> Set[int]:
        """Nodes whose incoming ``rel`` edges may differ: targets, initial or final, of ``base`` nodes."""
        out = self._din.get(rel)
        if out is None:
            # a node's final targets are its initial ones plus those the plan added less those it removed (which
            # were initial ones): with the initial ones, the added ones are all there is to add
            out = set()
            initial = self.rev.initial_targets
            edits = self.final.edge_edits().get(rel)
            added = edits[0] if edits is not None else _NO_EDITS
            for u in self.base:
                out.update(initial(u, rel))  # (none for a node the plan created)
                got = added.get(u)
                if got:
                    out |= got
            self._din[rel] = out
        return out

    def ext_ends(self, rel: str) -> Set[int]:
        """Both ends of every extension-relation ``rel`` edge of the initial or the final state: the only nodes
        whose ``rel`` edges, in or out, can differ (or exist at all)."""
        out: Set[int] = set()
        for st in (self.initial, self.final):
            for f, r, t in st.ext.relations:
                if r == rel:
                    out.add(f)
                    out.add(t)
        return out

    def kind(self, node_id: int) -> Optional["NodeKind"]:
        """The class, properties and attributes of a node of the final state (None: no such node)."""
        k = self.node_kinds.get(node_id)
        if k is None:
            k = node_kind(self.final, node_id, self.ctx.kb, self.node_kinds, self.kinds)
        return k

    def passes(self, static: "StaticFilter", node_id: int) -> bool:
        k = self.kind(node_id)
        return k is not None and k.passes(static)

    def base_passing(self, static: "StaticFilter") -> FrozenSet[int]:
        """``passing(static, base)`` for a filter of a compiled affected function (:data:`_FILTERS`; any other is
        computed): the base nodes of every such filter are gathered in one pass over ``base`` (each node's kind
        lists the filters it passes)."""
        m = self._base_pass
        if m is None:
            m = self._base_pass = {f: frozenset(ids) for f, ids in self._group_base(NodeKind.filters_passed).items()}
        got = m.get(id(static))
        if got is None:
            if id(static) in _FILTER_IDS:
                return _NONE
            got = m[id(static)] = frozenset(self.passing(static, self.base))
        return got

    def static_rule_nodes(self, rules: Tuple[Tuple[int, "StaticFilter"], ...]) -> Dict[int, List[int]]:
        """For rules given as ``(index, static filter)`` (the same tuple on every call for one detector):
        index -> the ``base`` nodes passing that filter, for the rules some base node passes (one pass over
        ``base``; each node's kind lists the rules it passes)."""
        return self._group_base(lambda k: k.rules_passed(rules))

    def _group_base(self, keys_of: Callable[["NodeKind"], Iterable[Any]]) -> Dict[Any, List[int]]:
        """key -> the ``base`` nodes whose kind lists it (``keys_of(kind)``), in one pass over ``base``."""
        out: Dict[Any, List[int]] = {}
        kinds = self.node_kinds
        for i in self.base:
            k = kinds.get(i)
            if k is None:
                k = self.kind(i)
                if k is None:
                    continue
            for key in keys_of(k):
                ids = out.get(key)
                if ids is None:
                    out[key] = [i]
                else:
                    ids.append(i)
        return out

    def passing(self, static: "StaticFilter", ids: Iterable[int]) -> Set[int]:
        """The ``ids`` that pass ``static`` (:meth:`passes`): each node's kind is remembered per scene, and each
        kind's result per filter for every scene."""
        sid = id(static)  # by identity: the rules (and their filters) outlive the kinds
        kinds = self.node_kinds
        out = set()
        for i in ids:
            k = kinds.get(i)
            if k is None:
                k = self.kind(i)
                if k is None:
                    continue
            ok = k._ok.get(sid)
            if ok is None:
                ok = k.passes(static)
            if ok:
                out.add(i)
        return out


def node_kind(state: StateView, node_id: int, kb: ObjectKB, node_kinds: Dict[int, "NodeKind"],
              kinds: Dict[Tuple[str, FrozenSet[str]], "NodeKind"]) -> Optional["NodeKind"]:
    """The :class:`NodeKind` of a node of ``state`` (None: no such node), from ``kinds`` ((class name,
    properties) -> kind, for every scene) and remembered in ``node_kinds`` (node id -> kind, per scene) when the
    node is one of the scene's."""
    n = state.node(node_id)
    if n is None:
        return None
    key = (n.class_name, n.properties)
    k = kinds.get(key)
    if k is None:
        k = kinds[key] = NodeKind(kb.canonical(n.class_name), kb.attrs(n.class_name, n.properties), n.properties)
    if node_id in state.scene:  # a node of the scene: its class and properties are fixed
        node_kinds[node_id] = k
    return k


class NodeKind:
    """What static filters read of a node (canonical class, attributes, properties: never changed by a
    simulation), with the filters' results remembered by filter identity. Nodes of one class and properties, in
    any scene, share one."""

    __slots__ = ("canonical", "attrs", "props", "_ok", "_rules", "_term", "_filters", "_filters_n")

    def __init__(self, canonical: str, attrs: FrozenSet[str], props: FrozenSet[str]):
        self.canonical, self.attrs, self.props = canonical, attrs, props
        self._ok: Dict[int, bool] = {}
        self._rules: Dict[str, tuple] = {}
        self._filters: Optional[Tuple[int, ...]] = None  # filters_passed
        self._filters_n = 0
        #: (the rules of ChangeSet.static_rule_nodes, the indexes of those whose filter this kind passes)
        self._term: Optional[Tuple[tuple, Tuple[int, ...]]] = None

    def filters_passed(self) -> Tuple[int, ...]:
        """Ids of the filters of compiled affected functions (:data:`_FILTERS`) that this kind passes."""
        n = len(_FILTERS)
        if self._filters is None or self._filters_n != n:  # filters compiled since (another rule set): look again
            self._filters = tuple(id(sf) for sf in _FILTERS[:n] if self.passes(sf))
            self._filters_n = n
        return self._filters

    def rules_passed(self, rules: Tuple[Tuple[int, "StaticFilter"], ...]) -> Tuple[int, ...]:
        """The indexes of ``rules`` (``(index, static filter)``, :meth:`ChangeSet.static_rule_nodes`) whose filter
        this kind passes, remembered for the last ``rules`` asked about (one detector's)."""
        got = self._term
        if got is None or got[0] is not rules:
            got = self._term = (rules, tuple(r for r, static in rules if self.passes(static)))
        return got[1]

    def process_rules(self, action: str, rules: Sequence[Any]) -> tuple:
        """Those of ``rules`` (the process rules of ``action``, the same list for every call with it) whose first
        argument's static filter this kind passes, or that take no argument: the others cannot match a step of
        ``action`` on such a node."""
        out = self._rules.get(action)
        if out is None:
            out = self._rules[action] = tuple(r for r in rules if not r.arg_statics or self.passes(r.arg_statics[0]))
        return out

    def passes(self, static: "StaticFilter") -> bool:
        ok = self._ok.get(id(static))  # the rules, and so their filters, outlive the detector's kinds
        if ok is None:
            ok = self._ok[id(static)] = static.ok(self.canonical, self.attrs, self.props)
        return ok


#: given a change set, the nodes whose value under a predicate may differ between initial and final states, or
#: that reach a used object through the predicate's relations; None: the predicate is not local (no pruning)
Affected = Callable[[ChangeSet], Set[int]]


def compile_affected(spec: Any, kb: ObjectKB, within: Optional[StaticFilter] = None) -> Optional[Affected]:
    """Over-approximate the nodes a (validated) predicate can newly match or attribute to the plan.

    A node outside the result either fails the predicate's static conditions (then it fails it in every state,
    with no witnesses) or has a footprint (itself, the nodes its ``related``/``related_from`` hops read) that
    the plan neither changed nor used: its value is the same in the initial and the final state and none of its
    witnesses was used, so attribution would drop it anyway.

    ``within``: the caller keeps only the nodes of the result that pass this filter, and covers the nodes of
    ``base`` itself (a part of a predicate with a static filter of its own: ``perishable`` and ``not: ...``). The
    function may then leave ``base`` out, and read a hop's sources from the scene's index of the nodes passing
    the filter (:meth:`ChangeSet.filtered_sources_of`) instead of gathering every source and filtering them."""
    key = (id(kb), _spec_key(spec), id(within) if within is not None else None)
    hit = _AFFECTED.get(key)
    if hit is not None and hit[0] is kb:
        return hit[1]
    fn = _compile_affected(spec, kb, next(_AFFECTED_IDS), within)
    _AFFECTED[key] = (kb, fn)
    return fn


#: the static filters that compiled affected functions ask ``base_passing`` for (gathered in one pass per plan)
_FILTERS: List[StaticFilter] = []
_FILTER_IDS: Set[int] = set()


def _filter_of(static: StaticFilter) -> StaticFilter:
    if id(static) not in _FILTER_IDS:
        _FILTER_IDS.add(id(static))
        _FILTERS.append(static)
    return static


#: compiled :func:`compile_affected` functions by (object KB, predicate without line numbers, the caller's filter), so
#: that equal sub-predicates of different rules share one function and so one memo entry per change set
_AFFECTED: Dict[Tuple[int, str, Optional[int]], Tuple[Any, Optional[Affected]]] = {}
_AFFECTED_IDS = itertools.count()


def _static_only(spec: Any) -> bool:
    """A predicate that reads only what a simulation never changes (class, properties, attributes)."""
    return isinstance(spec, Mapping) and bool(spec) and all(k in STATIC_KEYS or k == "__line__" for k in spec)


def _spec_key(spec: Any) -> str:
    def strip(v: Any) -> Any:
        if isinstance(v, Mapping):
            return {str(k): strip(x) for k, x in v.items() if k != "__line__"}
        if isinstance(v, (list, tuple)):
            return [strip(x) for x in v]
        return v

    return repr(strip(spec))


def _compile_affected(spec: Any, kb: ObjectKB, memo_key: int, within: Optional[StaticFilter] = None) -> Optional[Affected]:
    """The affected function of ``spec`` (``within``: see :func:`compile_affected`); its result is remembered in
    ``cs.affected_memo[memo_key]``: the same sub-predicate (a heat source that is ON, ...) recurs across rules,
    and is computed once per plan."""
    if spec is None:
        def everything(cs: ChangeSet) -> Set[int]:
            out = cs.affected_memo.get(memo_key)
            if out is None:
                out = cs.affected_memo[memo_key] = set(cs.base)
            return out

        everything.filtered_by = None  # type: ignore[attr-defined]
        return everything
    static = compile_static(spec, kb)
    has_static = any(k in spec for k in STATIC_KEYS)
    sid = id(static)
    # what the nodes of the result outside ``base`` must pass to count: the part's own filter, else the caller's
    flt = static if has_static else within
    hops = []
    for key, direction in (("related", "to"), ("related_from", "from")):
        if key in spec:
            r = spec[key]
            rels = [x.upper() for x in _as_list(r["relation"], "relation")]
            if not set(rels) <= LOCAL_RELATIONS | EXT_RELATIONS:
                return None
            target = r.get(direction)
            if _static_only(target):  # nodes picked by what never changes: see ``affected`` below
                if direction == "to" and not set(rels) & EXT_RELATIONS:
                    continue  # such a hop adds nothing: its value moves only with the edges of ``base`` nodes
                hops.append((direction, rels, None))
                continue
            inner = compile_affected(target, kb)
            if inner is None:
                return None
            hops.append((direction, rels, inner))
    children = []
    for sub in ([spec["not"]] if "not" in spec else []) + list(spec.get("any") or []):
        c = compile_affected(sub, kb, flt)
        if c is None:
            return None
        if not getattr(c, "within_base", False):  # a part within ``base`` adds nothing: ``base`` is covered below
            children.append(c)

    # the two commonest shapes, with nothing to remember per change set beyond what the change set keeps itself
    if not hops and not children:
        if has_static:  # class, properties or attributes, and states or events: the base nodes passing the filter
            if within is None:  # (with one, the caller drops the part: it lies within ``base``)
                _filter_of(static)
            def affected_static(cs: ChangeSet) -> FrozenSet[int]:
                m = cs._base_pass
                if m is None:
                    return cs.base_passing(static)
                return m.get(sid, _NONE)

            affected_static.filtered_by = static  # type: ignore[attr-defined]
            affected_static.within_base = True  # type: ignore[attr-defined]
            return affected_static

        def affected_base(cs: ChangeSet) -> Set[int]:  # states or events only: what the plan may have changed
            return cs.base

        affected_base.filtered_by = None  # type: ignore[attr-defined]
        affected_base.within_base = True  # type: ignore[attr-defined]
        return affected_base

    if has_static and within is None:
        _filter_of(static)

    def affected(cs: ChangeSet) -> Set[int]:
        # the result is read, never changed, by its callers (it is remembered per change set)
        memo = cs.affected_memo
        got = memo.get(memo_key)
        if got is not None:
            return got
        # with a filter, base's part is added below (own filter) or by the caller (``within``)
        out: Set[int] = set() if flt is not None else set(cs.base)
        for direction, rels, inner in hops:
            # a hop to nodes picked by class, properties or attributes only (``inner`` None): their side never changes,
            # so the value moves only with the edges, whose ends are in ``base`` ("to") or ``d_in`` ("from")
            reached = inner(cs) if inner is not None else _NONE
            for r in rels:
                if r in EXT_RELATIONS:  # every end of such an edge, whatever the hop's direction
                    out |= cs.ext_ends(r)
                    continue
                if direction == "to":
                    if reached:
                        if flt is not None:  # the sources outside base that pass the filter: base's are covered
                            cs.filtered_sources_of(flt, reached, r, out)
                        else:
                            cs.sources_of(reached, r, out)
                else:
                    out |= cs.d_in(r)
                    for f in reached:
                        out |= cs.targets(f, r)
        for c in children:
            out |= c(cs)
        if has_static:
            if within is not None:  # the caller covers base
                if out:
                    out = cs.passing(static, out)
            else:
                in_base = cs.base_passing(static)
                out = in_base | cs.passing(static, out) if out else in_base
        memo[memo_key] = out
        return out

    affected.filtered_by = static if has_static else None  # type: ignore[attr-defined]
    return affected


# -- the initial graph's reverse ON/INSIDE index ------------------------------------------------------------------
_ON, _INSIDE = _sim.Relation.ON, _sim.Relation.INSIDE


class ReverseIndex:
    """``(to_id, "ON" | "INSIDE") -> {from_id}`` over a scene's initial graph (what ``SceneGraph.reverse_on_inside``
    gives), read with :meth:`get` like a dict. Built in one pass over the simulator's edge map that tells the two
    relations apart by identity (a dict lookup of an enum member calls its Python-level ``__hash__``, once for each
    of the map's 800-odd keys, most of them CLOSE and FACING), keyed by relation, then by target (no tuple per
    edge)."""

    __slots__ = ("_by_rel", "_fwd")

    def __init__(self, scene: SceneGraph):
        on: Dict[int, Set[int]] = defaultdict(set)
        inside: Dict[int, Set[int]] = defaultdict(set)
        fwd_on: Dict[int, Iterable[int]] = {}
        fwd_inside: Dict[int, Iterable[int]] = {}
        for key, tos in scene.env_graph._edge_map.items():  # (INSIDE first: most of the two relations' edges)
            rel = key[1]
            if rel is _INSIDE:
                from_id = key[0]
                fwd_inside[from_id] = tos
                for to_id in tos:
                    inside[to_id].add(from_id)
            elif rel is _ON:
                from_id = key[0]
                fwd_on[from_id] = tos
                for to_id in tos:
                    on[to_id].add(from_id)
        on.default_factory = inside.default_factory = None  # type: ignore[attr-defined]  # plain dicts from here
        self._by_rel = {"ON": on, "INSIDE": inside}
        #: the initial graph's own ON/INSIDE edges, from -> the targets (the simulator's own collections: read only)
        self._fwd = {"ON": fwd_on, "INSIDE": fwd_inside}

    def initial_targets(self, from_id: int, rel: str) -> Iterable[int]:
        """``initial.targets(from_id, rel)`` for ON or INSIDE (read only)."""
        return self._fwd[rel].get(from_id, _NONE)

    def of(self, rel: str) -> Mapping[int, Set[int]]:
        """``to_id -> {from_id}`` for ``rel`` (ON or INSIDE; read only)."""
        return self._by_rel[rel]

    def get(self, key: Tuple[int, str], default=()):
        d = self._by_rel.get(key[1])
        return default if d is None else d.get(key[0], default)

    def as_dict(self) -> Dict[Tuple[int, str], Set[int]]:
        """Every entry as ``SceneGraph.reverse_on_inside`` has it (for tests)."""
        return {(t, rel): set(f) for rel, d in self._by_rel.items() for t, f in d.items()}
