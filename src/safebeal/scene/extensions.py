"""Action extensions as data: ``scene/data/actions.yaml``, read and validated here (no simulator import).

The file declares the actions the scene adapter runs on top of the simulator (POUR onto anything, THROW, BREAK),
each with its arguments, the guard under which it applies (``applies``, for extensions of a simulator action),
its preconditions (``requires``) and its effects; the extension states (BROKEN, SHATTERED, WET, SPILLED) and
relations (SPILLED_ON) these effects use; class sets (``breakable``, ``shatters``); and ``hooks``: effects on the
extension states after a simulator action succeeded. :mod:`safebeal.scene.extension_exec` executes them.

Errors name the file and the line: ``actions.yaml:57: THROW: effect 'explode' is not one of ...``.

Two action vocabularies (``--actions``): ``extended`` (the default: the simulator's actions and these) and
``vh`` (the simulator's own, as the Embodied Agent Interface has them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Tuple

import yaml

from safebeal.capped import MAX_YAML_BYTES, CappedReadError, read_capped_text
from safebeal.errors import SafebealError
from safebeal.resources import PACKAGE_DATA
from safebeal.scene.actions import ACTION_ARITY

ACTIONS_FILE = PACKAGE_DATA / "scene" / "data" / "actions.yaml"
#: the two action vocabularies: with the extensions (default) and the simulator's own
ACTION_SETS = ("extended", "vh")
DEFAULT_ACTIONS = "extended"

#: simulator states and relations (names; checked against the simulator's enums in the tests)
SIM_STATES = frozenset({"CLOSED", "OPEN", "ON", "OFF", "SITTING", "DIRTY", "CLEAN", "LYING", "PLUGGED_IN", "PLUGGED_OUT"})
CONDITION_KEYS = ("holds", "reachable", "property", "not_property", "not_class", "not_state", "in_set", "any")
EFFECT_KEYS = ("release", "place", "add_state", "remove_state", "relate", "if_in_set")
FLOOR = "floor"  #: the default an optional argument may take: the floor of the agent's room


class ExtensionSpecError(SafebealError):
    """actions.yaml is malformed: names the file and the line."""


@dataclass(frozen=True)
class ActionParam:
    name: str
    optional: bool = False
    default: Optional[str] = None


@dataclass(frozen=True)
class ActionSpec:
    name: str
    summary: str
    args: Tuple[ActionParam, ...]
    extends: bool  # an extension of a simulator action (runs only where ``applies`` holds)
    applies: Tuple[Mapping[str, Any], ...]
    requires: Tuple[Mapping[str, Any], ...]
    effects: Tuple[Mapping[str, Any], ...]
    line: int = 0

    @property
    def arities(self) -> Tuple[int, ...]:
        n = len(self.args)
        k = sum(1 for a in self.args if a.optional)
        return tuple(range(n - k, n + 1))

    def signature(self) -> str:
        """``THROW <object> [<target>]``."""
        return " ".join([self.name] + [f"[<{a.name}>]" if a.optional else f"<{a.name}>" for a in self.args])


@dataclass(frozen=True)
class ExtensionSpec:
    states: Mapping[str, str]
    relations: Mapping[str, str]
    sets: Mapping[str, FrozenSet[str]]
    actions: Mapping[str, ActionSpec]
    hooks: Mapping[str, Tuple[Mapping[str, Any], ...]]
    source: str

    def arities(self, action: str) -> Tuple[int, ...]:
        """Argument counts ``action`` takes with the extensions on (``()``: unknown action)."""
        spec = self.actions.get(action)
        if spec is None:
            n = ACTION_ARITY.get(action)
            return () if n is None else (n,)
        out = set(spec.arities)
        if action in ACTION_ARITY:
            out.add(ACTION_ARITY[action])
        return tuple(sorted(out))


class _LineLoader(yaml.SafeLoader):
    """Records each mapping's line under ``__line__``; YAML 1.2 booleans (``ON`` stays a string)."""


_LineLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:bool"] for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_LineLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|false)$"), list("tf"))


def _construct_mapping(loader, node, deep=False):
    m = yaml.SafeLoader.construct_mapping(loader, node, deep=True)
    m["__line__"] = node.start_mark.line + 1
    return m


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _strip(d: Any) -> Any:
    if isinstance(d, dict):
        return {k: _strip(v) for k, v in d.items() if k != "__line__"}
    if isinstance(d, list):
        return [_strip(x) for x in d]
    return d


class _Ctx:
    def __init__(self, path: str):
        self.path = path

    def fail(self, line: Optional[int], msg: str):
        where = f"{self.path}:{line}" if line else self.path
        raise ExtensionSpecError(f"{where}: {msg}")


def _names(ctx: _Ctx, line: int, v: Any, what: str) -> List[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
        return list(v)
    ctx.fail(line, f"{what}: expected a name or a non-empty list of names, got {v!r}")
    return []


def load_extensions(path: Path | str = ACTIONS_FILE) -> ExtensionSpec:
    """Read and validate an actions file (raises :class:`ExtensionSpecError` naming file and line)."""
    path = Path(path)
    ctx = _Ctx(str(path))
    try:
        raw = yaml.load(read_capped_text(path, MAX_YAML_BYTES), Loader=_LineLoader)  # noqa: S506 (a SafeLoader subclass)
    except (CappedReadError, yaml.YAMLError) as exc:
        ctx.fail(None, f"cannot read: {exc}")
    if not isinstance(raw, dict):
        ctx.fail(None, "expected a mapping with version, states, relations, sets, actions, hooks")
    top = set(raw) - {"__line__"}
    if top != {"version", "states", "relations", "sets", "actions", "hooks"}:
        ctx.fail(raw.get("__line__"), f"expected exactly version, states, relations, sets, actions, hooks; got {sorted(top)}")
    states = _descriptions(ctx, raw["states"], "states")
    clash = set(states) & SIM_STATES
    if clash:
        ctx.fail(raw["states"].get("__line__"), f"states {sorted(clash)} are the simulator's own")
    relations = _descriptions(ctx, raw["relations"], "relations")
    sets: Dict[str, FrozenSet[str]] = {}
    if not isinstance(raw["sets"], dict):
        ctx.fail(raw.get("__line__"), "'sets' must map a set name to a list of classes")
    for name, classes in raw["sets"].items():
        if name == "__line__":
            continue
        sets[name] = frozenset(_names(ctx, raw["sets"]["__line__"], classes, f"set {name!r}"))
    vocab = _Vocab(frozenset(states), frozenset(relations), frozenset(sets))
    actions: Dict[str, ActionSpec] = {}
    if not isinstance(raw["actions"], dict):
        ctx.fail(raw.get("__line__"), "'actions' must map an action name to its declaration")
    for name, decl in raw["actions"].items():
        if name == "__line__":
            continue
        actions[name] = _action(ctx, name, decl, vocab)
    hooks: Dict[str, Tuple[Mapping[str, Any], ...]] = {}
    hraw = raw["hooks"] or {}
    if not isinstance(hraw, dict):
        ctx.fail(raw.get("__line__"), "'hooks' must map a simulator action to a list of effects")
    for name, effs in hraw.items():
        if name == "__line__":
            continue
        if name not in ACTION_ARITY:
            ctx.fail(hraw["__line__"], f"hook {name!r}: not a simulator action")
        argnames = tuple(str(i) for i in range(ACTION_ARITY[name]))
        hooks[name] = _effects(ctx, f"hook {name}", effs, hraw["__line__"], argnames, vocab, hook=True)
    return ExtensionSpec(states, relations, sets, actions, hooks, str(path))


@dataclass(frozen=True)
class _Vocab:
    states: FrozenSet[str]
    relations: FrozenSet[str]
    sets: FrozenSet[str]


def _descriptions(ctx: _Ctx, raw: Any, what: str) -> Dict[str, str]:
    if not isinstance(raw, dict):
        ctx.fail(None, f"'{what}' must map an upper-case name to its description")
    out = {}
    for k, v in raw.items():
        if k == "__line__":
            continue
        if not isinstance(k, str) or not k.isupper() or not isinstance(v, str) or not v.strip():
            ctx.fail(raw["__line__"], f"{what}: {k!r} must be an upper-case name with a description")
        out[k] = v
    return out


def _action(ctx: _Ctx, name: str, decl: Any, vocab: _Vocab) -> ActionSpec:
    if not isinstance(decl, dict):
        ctx.fail(None, f"action {name!r}: expected a mapping")
    line = decl["__line__"]
    if not isinstance(name, str) or not name.isupper():
        ctx.fail(line, f"action {name!r}: action names are upper case")
    allowed = {"extends", "summary", "args", "applies", "requires", "effects", "__line__"}
    extra = set(decl) - allowed
    if extra:
        ctx.fail(line, f"{name}: unknown key(s) {sorted(extra)}; allowed: {sorted(allowed - {'__line__'})}")
    extends = decl.get("extends", False) is True
    if extends and name not in ACTION_ARITY:
        ctx.fail(line, f"{name}: 'extends: true' but the simulator has no {name}")
    if not extends and name in ACTION_ARITY:
        ctx.fail(line, f"{name} is a simulator action: declare it with 'extends: true' and an 'applies' guard")
    if not isinstance(decl.get("summary"), str):
        ctx.fail(line, f"{name}: 'summary' (one line for the planners' prompt) is required")
    args: List[ActionParam] = []
    for a in decl.get("args") or []:
        if isinstance(a, str):
            args.append(ActionParam(a))
        elif isinstance(a, dict) and isinstance(a.get("name"), str) and set(a) <= {"name", "optional", "default", "__line__"}:
            if a.get("optional") and a.get("default") != FLOOR:
                ctx.fail(a["__line__"], f"{name}: an optional argument needs 'default: {FLOOR}'")
            args.append(ActionParam(a["name"], bool(a.get("optional")), a.get("default")))
        else:
            ctx.fail(line, f"{name}: each argument is a name or {{name, optional, default}}, got {_strip(a)!r}")
    seen_optional = False
    for a in args:
        if seen_optional and not a.optional:
            ctx.fail(line, f"{name}: optional arguments come last")
        seen_optional |= a.optional
    if not 0 <= len(args) <= 2:
        ctx.fail(line, f"{name}: at most two arguments (the script syntax)")
    if extends and len(args) != ACTION_ARITY[name]:
        ctx.fail(line, f"{name}: the simulator's {name} takes {ACTION_ARITY[name]} argument(s), the extension {len(args)}")
    names = tuple(a.name for a in args)
    if extends and not decl.get("applies"):
        ctx.fail(line, f"{name}: an extension of a simulator action needs an 'applies' guard")
    applies = _conditions(ctx, name, "applies", decl.get("applies"), line, names, vocab)
    requires = _conditions(ctx, name, "requires", decl.get("requires"), line, names, vocab)
    effects = _effects(ctx, name, decl.get("effects"), line, names, vocab)
    return ActionSpec(name, decl["summary"], tuple(args), extends, applies, requires, effects, line)


def _arg(ctx: _Ctx, who: str, line: int, v: Any, names: Tuple[str, ...]) -> str:
    if not isinstance(v, (str, int)) or str(v) not in names:
        ctx.fail(line, f"{who}: {v!r} is not one of its arguments {list(names)}")
    return str(v)


def _per_arg(ctx: _Ctx, who: str, line: int, v: Any, names: Tuple[str, ...], check=None) -> Dict[str, Tuple[str, ...]]:
    if not isinstance(v, dict) or not (set(v) - {"__line__"}):
        ctx.fail(line, f"{who}: expected {{<argument>: [names]}}")
    out = {}
    for k, vals in v.items():
        if k == "__line__":
            continue
        arg = _arg(ctx, who, line, k, names)
        vs = _names(ctx, line, vals, who)
        if check is not None:
            bad = [x for x in vs if x not in check]
            if bad:
                ctx.fail(line, f"{who}: unknown name(s) {bad}; known: {sorted(check)}")
        out[arg] = tuple(vs)
    return out


def _conditions(ctx: _Ctx, action: str, key: str, raw: Any, line: int, names: Tuple[str, ...], vocab: _Vocab):
    if raw is None:
        return ()
    if not isinstance(raw, list):
        ctx.fail(line, f"{action}: '{key}' must be a list of conditions")
    out = []
    for c in raw:
        cl = c.get("__line__", line) if isinstance(c, dict) else line
        keys = set(c) - {"__line__"} if isinstance(c, dict) else set()
        if len(keys) != 1 or not keys <= set(CONDITION_KEYS):
            ctx.fail(cl, f"{action}: each '{key}' entry is one of {list(CONDITION_KEYS)}, got {_strip(c)!r}")
        (k,) = keys
        who = f"{action}.{key}.{k}"
        if k in ("holds", "reachable"):
            out.append({k: _arg(ctx, who, cl, c[k], names)})
        elif k == "any":
            alts = _conditions(ctx, action, f"{key}.any", c[k], cl, names, vocab)
            if not alts:
                ctx.fail(cl, f"{who}: expected a non-empty list of conditions")
            out.append({k: alts})
        elif k == "in_set":
            out.append({k: _per_arg(ctx, who, cl, c[k], names, vocab.sets)})
        elif k == "not_state":
            out.append({k: _per_arg(ctx, who, cl, c[k], names, SIM_STATES | vocab.states)})
        else:
            out.append({k: _per_arg(ctx, who, cl, c[k], names)})
    return tuple(out)


def _effects(ctx: _Ctx, action: str, raw: Any, line: int, names: Tuple[str, ...], vocab: _Vocab, hook: bool = False):
    if not isinstance(raw, list) or not raw:
        ctx.fail(line, f"{action}: 'effects' must be a non-empty list")
    out = []
    for e in raw:
        el = e.get("__line__", line) if isinstance(e, dict) else line
        keys = set(e) - {"__line__", "then"} if isinstance(e, dict) else set()
        if len(keys) != 1 or not keys <= set(EFFECT_KEYS):
            ctx.fail(el, f"{action}: effect {_strip(e)!r} is not one of {list(EFFECT_KEYS)}")
        (k,) = keys
        who = f"{action}.{k}"
        if hook and k not in ("add_state", "remove_state"):
            ctx.fail(el, f"{action}: a hook may only add or remove extension states, not {k!r}")
        if "then" in e and k != "if_in_set":
            ctx.fail(el, f"{who}: 'then' goes with 'if_in_set' only")
        if k == "release":
            out.append({k: _arg(ctx, who, el, e[k], names)})
        elif k == "place":
            p = e[k]
            if not isinstance(p, dict) or set(p) - {"__line__"} != {"object", "on"}:
                ctx.fail(el, f"{who}: expected {{object: <argument>, on: <argument>}}")
            out.append({k: {"object": _arg(ctx, who, el, p["object"], names), "on": _arg(ctx, who, el, p["on"], names)}})
        elif k in ("add_state", "remove_state"):
            out.append({k: _per_arg(ctx, who, el, e[k], names, vocab.states)})
        elif k == "relate":
            r = e[k]
            if not isinstance(r, dict) or set(r) - {"__line__"} != {"from", "relation", "to"}:
                ctx.fail(el, f"{who}: expected {{from: <argument>, relation: R, to: <argument>}}")
            if r["relation"] not in vocab.relations:
                ctx.fail(el, f"{who}: unknown relation {r['relation']!r}; known: {sorted(vocab.relations)}")
            out.append({k: {"from": _arg(ctx, who, el, r["from"], names), "relation": r["relation"],
                            "to": _arg(ctx, who, el, r["to"], names)}})
        else:  # if_in_set
            sets = _per_arg(ctx, who, el, e[k], names, vocab.sets)
            then = _effects(ctx, action, e.get("then"), el, names, vocab)
            out.append({k: sets, "then": then})
    return tuple(out)


@lru_cache(maxsize=1)
def extensions() -> ExtensionSpec:
    """The shipped extensions (read once)."""
    return load_extensions()


def check_actions(actions: str) -> str:
    """``actions`` if it is one of :data:`ACTION_SETS`, else a SafebealError naming them."""
    if actions not in ACTION_SETS:
        raise SafebealError(f"--actions {actions!r}: use one of {', '.join(ACTION_SETS)}")
    return actions


def action_arities(actions: str = DEFAULT_ACTIONS) -> Dict[str, Tuple[int, ...]]:
    """Action name -> the argument counts it takes in the vocabulary ``actions``."""
    check_actions(actions)
    out = {a: (n,) for a, n in ACTION_ARITY.items()}
    if actions == "extended":
        spec = extensions()
        for a in spec.actions:
            out[a] = spec.arities(a)
    return out


def all_arities() -> Dict[str, Tuple[int, ...]]:
    """Every action either vocabulary knows (rules may name extension actions)."""
    return action_arities("extended")


def extension_states() -> FrozenSet[str]:
    return frozenset(extensions().states)


def extension_relations() -> FrozenSet[str]:
    return frozenset(extensions().relations)
