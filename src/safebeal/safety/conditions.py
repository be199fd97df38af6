"""The rule condition language: small, declarative, no ``eval``.

An *object predicate* is a mapping whose keys are all AND-ed:

==================  ==========================================================================
``attr``            hazard attribute(s) the object has (all of them)
``any_attr``        at least one of these attributes
``not_attr``        none of these attributes
``class``           class name(s), any of them (aliases resolved: ``stove`` = ``oven``)
``state``           simulator state(s) the object is in (all): ON, OFF, OPEN, CLOSED, PLUGGED_IN, ...
``not_state``       none of these states
``property``        simulator properties (all): HAS_SWITCH, HAS_PLUG, GRABBABLE, RECIPIENT, ...
``event``           trajectory events recorded on the object (all); see :data:`safebeal.safety.events.OBJECT_EVENTS`
``recent``          ``{event: <name>, within: k}``: the event was recorded on the object in the last k steps
``related``         ``{relation: ON|INSIDE|..., to: <predicate>}``: an edge from the object to a match
``related_from``    ``{relation: ..., from: <predicate>}``: an edge from a match to the object
``holds_liquid``    ``<predicate>``: the object (a container) holds a liquid matching it (the witness); tap water
                    is the tap (derived.py)
``pours``           ``<predicate>``: what a POUR of the object pours matches it: the object is a liquid matching
                    it, or holds one (short for ``any: [{attr: liquid, ...}, {holds_liquid: ...}]``)
``not``             a predicate that must not hold
``any``             a list of predicates, at least one of which holds
==================  ==========================================================================

Events are what the final graph cannot show (the simulator forgets poured liquids and leaves no floor
edge after DROP), so the detector records them from the actions as they happen, each with the step it was last
recorded at (an :class:`~safebeal.safety.events.EventLog`). Two readings of the trajectory follow, in past-time
linear temporal logic over the steps so far (docs/hazards.md, "Time"):

- ``event: e`` holds when ``e`` happened and nothing has cleared it since: ``¬clear_e S e`` (*since*), e.g.
  ``hands_wet`` since washing and until wiping, ``dropped`` since the drop and until the object is picked up;
- ``recent: {event: e, within: k}`` holds when ``e`` was recorded at one of the last k steps: ``◆[0,k] e``
  (*once, within k*).

``raw_contaminated`` (and the agent's ``hands_raw_contaminated``) is recorded by contact: see
:func:`safebeal.safety.contact.record_raw` and docs/hazards.md ("Raw-meat contamination").

Relations ``INSIDE+``, ``ON+`` and ``IN_OR_ON+`` are transitive (up to 4 levels, through the shadow edges of
carried containers), and states ``POWERED``, ``RUNNING`` and ``LIVE`` are derived: :mod:`safebeal.safety.derived`.

``hot`` is derived, not recorded: an object is hot while it is on or in a heat source that is on (directly or in
or on a container standing on it) and for :data:`~safebeal.safety.events.HOT_STEPS` steps after it was last heated
there. A process rule's ``agent`` conditions are compiled in :mod:`safebeal.safety.agent_conditions`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

from safebeal.errors import SafebealError
from safebeal.scene import StateView
from safebeal.scene import _sim
from safebeal.scene.extensions import extension_relations, extension_states
from safebeal.safety.derived import DERIVED_STATES, PLUS_RELATIONS, Derived, derived_states, reach
from safebeal.safety.events import HEATERS, HOT_STEPS, OBJECT_EVENTS, RECORDED_EVENTS
from safebeal.safety.knowledge import ObjectKB

#: the simulator's states and relations, and those the action extensions add (scene/data/actions.yaml: BROKEN,
#: SHATTERED, WET, SPILLED; SPILLED_ON)
STATES = frozenset(_sim.State.__members__) | extension_states() | DERIVED_STATES
RELATIONS = frozenset(_sim.Relation.__members__) | extension_relations() | frozenset(PLUS_RELATIONS)
PROPERTIES = frozenset(_sim.Property.__members__)

PREDICATE_KEYS = ("attr", "any_attr", "not_attr", "class", "state", "not_state", "property", "event", "recent", "related",
                  "related_from", "holds_liquid", "pours", "not", "any")


class ConditionError(SafebealError, ValueError):
    """Raised at compile time; the rule loader adds file and rule id. ``line``: the innermost predicate's line."""

    def __init__(self, message: str, line: Optional[int] = None):
        super().__init__(message)
        self.line = line


@dataclass
class Context:
    """What predicates are evaluated against: a state, the object KB, and recorded events.

    ``attr_cache`` (node id -> attributes) may be shared by every context on the same scene: a node's class and
    properties never change during a simulation, so neither do its hazard attributes."""

    state: StateView
    kb: ObjectKB
    events: Mapping[str, Mapping[int, int]]  # event -> {object id: step last recorded}
    agent_events: FrozenSet[str] = frozenset()
    attr_cache: Dict[int, FrozenSet[str]] = field(default_factory=dict)
    clock: int = 0  # the step being judged (process rules) or the number of steps judged (termination rules)
    char: Optional[int] = None  # the character's id (looked up in the scene when not given)
    #: the initial graph's reverse ON/INSIDE index ((to_id, "ON" | "INSIDE") -> {from_id}), when the caller has one:
    #: :meth:`sources` then reads it instead of the scene-wide index a StateView builds per relation
    rev: Optional[Mapping[Tuple[int, str], Set[int]]] = None
    #: the episode's derived state (liquids held, shadow containment), when the caller records one
    derived: Optional[Derived] = None

    def sources(self, node_id: int, rel: str) -> Set[int]:
        """``state.sources(node_id, rel)``."""
        if self.rev is not None and (rel == "ON" or rel == "INSIDE"):
            return sources_from(self.state, self.rev, node_id, rel)
        return self.state.sources(node_id, rel)

    def char_id(self) -> int:
        c = self.char
        if c is None:
            c = self.char = self.state.character_id()
        return c

    def held(self) -> Set[int]:
        """What the character holds (``StateView.held`` without looking the character up again)."""
        c, st = self.char_id(), self.state
        return st.targets(c, "HOLDS_RH") | st.targets(c, "HOLDS_LH")

    def has_event(self, nid: int, event: str) -> bool:
        if event == "hot":
            return self.is_hot(nid)
        return nid in self.events.get(event, ())

    def recent(self, nid: int, event: str, within: int) -> bool:
        if event == "hot":
            return self.is_hot(nid)
        t = self.events.get(event, {}).get(nid)
        return t is not None and self.clock - t <= within

    def is_hot(self, nid: int) -> bool:
        t = self.events.get("heated", {}).get(nid)
        if t is not None and self.clock - t <= HOT_STEPS:
            return True
        frontier = [nid]
        for _ in range(3):  # the object, the pot it is in, the stove the pot stands on
            nxt = []
            for x in frontier:
                for r in ("ON", "INSIDE"):
                    for h in self.state.targets(x, r):
                        if self.attrs(h) & HEATERS and "ON" in self.state.states_of(h):
                            return True
                        nxt.append(h)
            frontier = nxt
        return False

    def states(self, node_id: int) -> FrozenSet[str]:
        """The node's simulator states and its derived ones (POWERED, RUNNING, LIVE)."""
        st = self.state.states_of(node_id)
        return st | derived_states(st, self.attrs(node_id))

    def attrs(self, node_id: int) -> FrozenSet[str]:
        a = self.attr_cache.get(node_id)
        if a is None:
            a = self.attr_cache[node_id] = self.kb.node_attrs(self.state.node(node_id))
        return a


_RELATION = {"ON": _sim.Relation.ON, "INSIDE": _sim.Relation.INSIDE}


def sources_from(state: StateView, rev: Mapping[Tuple[int, str], Set[int]], to_id: int, rel: str) -> Set[int]:
    """``state.sources(to_id, rel)`` for ON or INSIDE, from ``rev``, the reverse index of the state's initial graph
    (what StateView.sources does with the scene's own index: the initial sources, plus the state's new edges to
    ``to_id``, less its removed ones)."""
    r = _RELATION[rel]
    st = state._st
    out = set(rev.get((to_id, rel), ()))
    for (f, fr), tos in st._new_edges_from.items():
        if fr is r and to_id in tos:
            out.add(f)
    removed = st._removed_edges_from
    return {f for f in out if to_id not in removed.get((f, r), ())}


# A compiled predicate returns (matched, witness ids) for one node.
Pred = Callable[[Context, int], Tuple[bool, Tuple[int, ...]]]


def _as_list(v: Any, key: str) -> List[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return list(v)
    raise ConditionError(f"'{key}' takes a name or a list of names, got {v!r}")


def _check_names(names: List[str], known, what: str, upper: bool = False) -> List[str]:
    out = [n.upper() if upper else n for n in names]
    bad = [n for n in out if n not in known]
    if bad:
        raise ConditionError(f"unknown {what} {bad}; known: {sorted(known)}")
    return out


def conjunction(checks: Sequence[Callable[[Context, Any], Tuple[bool, Tuple[int, ...]]]]):
    """All of ``checks`` on the same subject (a node id, or a step's arguments): true with every check's witnesses
    in order, or false with none."""
    if len(checks) == 1:  # every check answers (False, ()) when it fails: it is its own conjunction
        return checks[0]

    def pred(ctx: Context, subject: Any) -> Tuple[bool, Tuple[int, ...]]:
        witnesses: Tuple[int, ...] = ()
        for c in checks:
            ok, w = c(ctx, subject)
            if not ok:
                return False, ()
            witnesses += w
        return True, witnesses

    return pred


def compile_predicate(spec: Any, kb: ObjectKB) -> Pred:
    try:
        return _compile_predicate(spec, kb)
    except ConditionError as exc:
        if exc.line is None and isinstance(spec, Mapping):
            exc.line = spec.get("__line__")
        raise


def _compile_predicate(spec: Any, kb: ObjectKB) -> Pred:
    if spec is None:
        return lambda ctx, nid: (True, ())
    if not isinstance(spec, Mapping):
        raise ConditionError(f"an object predicate must be a mapping, got {spec!r}")
    unknown = [k for k in spec if k not in PREDICATE_KEYS and k != "__line__"]
    if unknown:
        raise ConditionError(f"unknown predicate key(s) {unknown}; known: {list(PREDICATE_KEYS)}")
    checks: List[Pred] = []
    vocab = set(kb.attributes) | {"electrical"}

    if "attr" in spec:
        need = frozenset(_check_names(_as_list(spec["attr"], "attr"), vocab, "attribute"))
        checks.append(lambda ctx, nid: (need <= ctx.attrs(nid), ()))
    if "any_attr" in spec:
        anyof = frozenset(_check_names(_as_list(spec["any_attr"], "any_attr"), vocab, "attribute"))
        checks.append(lambda ctx, nid: (bool(anyof & ctx.attrs(nid)), ()))
    if "not_attr" in spec:
        none = frozenset(_check_names(_as_list(spec["not_attr"], "not_attr"), vocab, "attribute"))
        checks.append(lambda ctx, nid: (not (none & ctx.attrs(nid)), ()))
    if "class" in spec:
        names = frozenset(kb.canonical(c) for c in _as_list(spec["class"], "class"))
        unknown_cls = [c for c in names if c not in kb.classes]
        if unknown_cls:
            raise ConditionError(f"unknown class(es) {unknown_cls} (not in the object knowledge base)")

        def _cls(ctx: Context, nid: int, names=names):
            n = ctx.state.node(nid)
            return (n is not None and ctx.kb.canonical(n.class_name) in names, ())

        checks.append(_cls)
    if "state" in spec:
        st = frozenset(_check_names(_as_list(spec["state"], "state"), STATES, "state", upper=True))
        states = _states_reader(st)
        checks.append(lambda ctx, nid: (st <= states(ctx, nid), ()))
    if "not_state" in spec:
        nst = frozenset(_check_names(_as_list(spec["not_state"], "not_state"), STATES, "state", upper=True))
        nstates = _states_reader(nst)
        checks.append(lambda ctx, nid: (not (nst & nstates(ctx, nid)), ()))
    if "property" in spec:
        props = frozenset(_check_names(_as_list(spec["property"], "property"), PROPERTIES, "property", upper=True))

        def _prop(ctx: Context, nid: int, props=props):
            n = ctx.state.node(nid)
            return (n is not None and props <= n.properties, ())

        checks.append(_prop)
    if "event" in spec:
        evs = _check_names(_as_list(spec["event"], "event"), OBJECT_EVENTS, "object event")
        checks.append(lambda ctx, nid: (all(ctx.has_event(nid, e) for e in evs), ()))
    if "recent" in spec:
        rc = spec["recent"]
        if not isinstance(rc, Mapping) or set(rc) - {"event", "within", "__line__"} or "event" not in rc or "within" not in rc:
            raise ConditionError("'recent' takes {event: <name>, within: <steps>}")
        (rev,) = _check_names(_as_list(rc["event"], "recent.event")[:1], OBJECT_EVENTS, "object event")
        k = rc["within"]
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= 1000:
            raise ConditionError(f"'recent.within' takes a number of steps from 0 to 1000, got {k!r}")
        checks.append(lambda ctx, nid, rev=rev, k=k: (ctx.recent(nid, rev, k), ()))
    for key, direction in (("related", "to"), ("related_from", "from")):
        if key in spec:
            checks.append(_compile_related(spec[key], key, direction, kb))
    if "holds_liquid" in spec:
        liquid = compile_predicate(spec["holds_liquid"], kb)

        def _holds_liquid(ctx: Context, nid: int, liquid=liquid) -> Tuple[bool, Tuple[int, ...]]:
            d = ctx.derived
            if d is not None and nid in d.liquids:
                found = first_match(ctx, liquid, d.liquids[nid])
                if found[0]:
                    return found
            # a liquid the scene itself puts inside it (a cup of juice from the start)
            inside = [i for i in ctx.sources(nid, "INSIDE") if "liquid" in ctx.attrs(i)]
            return first_match(ctx, liquid, inside) if inside else (False, ())

        checks.append(_holds_liquid)
    if "pours" in spec:
        what = spec["pours"]
        if what is not None and not isinstance(what, Mapping):
            raise ConditionError(f"'pours' takes a predicate on the liquid, got {what!r}")
        checks.append(compile_predicate(pours_spec(what), kb))
    if "not" in spec:
        inner = compile_predicate(spec["not"], kb)
        checks.append(lambda ctx, nid: (not inner(ctx, nid)[0], ()))
    if "any" in spec:
        if not isinstance(spec["any"], list) or not spec["any"]:
            raise ConditionError("'any' takes a non-empty list of predicates")
        alts = [compile_predicate(s, kb) for s in spec["any"]]

        def _any(ctx: Context, nid: int, alts=alts):
            for a in alts:
                ok, w = a(ctx, nid)
                if ok:
                    return True, w
            return False, ()

        checks.append(_any)

    return conjunction(checks)


def _states_reader(names: FrozenSet[str]) -> Callable[[Context, int], FrozenSet[str]]:
    """How to read a node's states for a check on ``names``: with the derived ones only when one is asked for."""
    if names & DERIVED_STATES:
        return Context.states
    return lambda ctx, nid: ctx.state.states_of(nid)


def pours_spec(what: Any) -> Dict[str, Any]:
    """The predicate ``pours: what`` stands for: a liquid matching ``what``, or a container holding one."""
    inner = {k: v for k, v in (what or {}).items() if k != "__line__"}
    direct = dict(inner)
    direct["attr"] = ["liquid"] + [a for a in _as_list(inner.get("attr", []), "attr") if a != "liquid"]
    return {"any": [direct, {"holds_liquid": inner or None}]}


def first_match(ctx: Context, pred: Pred, ids) -> Tuple[bool, Tuple[int, ...]]:
    """The first of ``ids`` (ascending) that ``pred`` matches, with its witnesses: ``(True, (id, *witnesses))``."""
    return first_match_ordered(ctx, pred, sorted(ids))


def first_match_ordered(ctx: Context, pred: Pred, ids: Sequence[int]) -> Tuple[bool, Tuple[int, ...]]:
    """The first of ``ids`` in their order that ``pred`` matches, with its witnesses."""
    for o in ids:
        ok, w = pred(ctx, o)
        if ok:
            return True, (o,) + w
    return False, ()


def _compile_related(spec: Any, key: str, direction: str, kb: ObjectKB) -> Pred:
    if not isinstance(spec, Mapping) or "relation" not in spec:
        raise ConditionError(f"'{key}' takes {{relation: ..., {direction}: <predicate>}}")
    extra = [k for k in spec if k not in ("relation", direction, "__line__")]
    if extra:
        raise ConditionError(f"'{key}' has unknown key(s) {extra}; expected 'relation' and '{direction}'")
    rels = _check_names(_as_list(spec["relation"], "relation"), RELATIONS, "relation", upper=True)
    inner = spec.get(direction)
    other = compile_predicate(inner, kb)
    # a 'from' predicate that needs a recorded event can only match objects that carry it: look at those few
    # (their out-edges) instead of the scene-wide reverse index a StateView builds on first use
    ev = inner.get("event") if isinstance(inner, Mapping) and direction == "from" else None
    via = (ev if isinstance(ev, str) else ev[0]) if ev else None
    via = via if via in RECORDED_EVENTS else None

    plus = [PLUS_RELATIONS[r] for r in rels if r in PLUS_RELATIONS]
    rels = [r for r in rels if r not in PLUS_RELATIONS]

    def rel(ctx: Context, nid: int) -> Tuple[bool, Tuple[int, ...]]:
        for chain in plus:  # transitive: nearest first
            found = first_match_ordered(ctx, other, reach(ctx, nid, chain, direction))
            if found[0]:
                return found
        for r in rels:
            if via is not None:
                ids = {c for c in ctx.events.get(via, ()) if nid in ctx.state.targets(c, r)}
            else:
                ids = ctx.state.targets(nid, r) if direction == "to" else ctx.sources(nid, r)
            found = first_match(ctx, other, ids)
            if found[0]:
                return found
        return False, ()

    return rel


#: predicate keys that depend only on what never changes during a simulation (class, properties, attributes)
STATIC_KEYS = ("attr", "any_attr", "not_attr", "class", "property")


@dataclass(frozen=True)
class StaticFilter:
    """The static part of a top-level predicate: a node failing it can never match, whatever the state."""

    all_attrs: FrozenSet[str] = frozenset()
    any_attrs: Optional[FrozenSet[str]] = None
    no_attrs: FrozenSet[str] = frozenset()
    classes: Optional[FrozenSet[str]] = None  # canonical names
    props: FrozenSet[str] = frozenset()

    def ok(self, canonical_class: str, attrs: FrozenSet[str], props: FrozenSet[str]) -> bool:
        return (
            self.all_attrs <= attrs
            and (self.any_attrs is None or bool(self.any_attrs & attrs))
            and not (self.no_attrs & attrs)
            and (self.classes is None or canonical_class in self.classes)
            and self.props <= props
        )


def compile_static(spec: Any, kb: ObjectKB) -> StaticFilter:
    """The static filter of a top-level predicate (call after :func:`compile_predicate` validated ``spec``)."""
    if not isinstance(spec, Mapping):
        return StaticFilter()
    names = lambda key: frozenset(_as_list(spec[key], key)) if key in spec else None  # noqa: E731
    sf = StaticFilter(
        names("attr") or frozenset(),
        names("any_attr"),
        names("not_attr") or frozenset(),
        frozenset(kb.canonical(c) for c in names("class")) if "class" in spec else None,
        frozenset(p.upper() for p in names("property")) if "property" in spec else frozenset(),
    )
    # one object per distinct filter, so that results remembered by identity (NodeKind) are shared by equal ones
    got = _STATICS.get(sf)
    if got is None:
        got = _STATICS[sf] = sf
        _STATIC_LIST.append(sf)
    return got


#: every static filter compiled, by value and in order (:func:`compile_static`); they live as long as the process
_STATICS: Dict[StaticFilter, StaticFilter] = {}
_STATIC_LIST: List[StaticFilter] = []
_NONE: FrozenSet[int] = frozenset()


def candidate_classes(spec: Any, kb: ObjectKB) -> Optional[FrozenSet[str]]:
    """Classes a node must belong to for ``spec`` to hold (None = any class): a cheap pre-filter."""
    if not isinstance(spec, Mapping):
        return None
    sets = []
    if "attr" in spec:
        for a in _as_list(spec["attr"], "attr"):
            if a == "electrical":
                return None  # also derived from properties, so any class may have it
            sets.append(kb.classes_with(a))
    if "any_attr" in spec:
        names = _as_list(spec["any_attr"], "any_attr")
        if "electrical" in names:
            return None
        sets.append(frozenset().union(*(kb.classes_with(a) for a in names)))
    if "class" in spec:
        sets.append(frozenset(kb.canonical(c) for c in _as_list(spec["class"], "class")))
    if not sets:
        return None
    out = sets[0]
    for s in sets[1:]:
        out &= s
    return out
