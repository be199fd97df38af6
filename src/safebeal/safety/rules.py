"""Hazard rules as data: YAML files of process and termination rules, validated on load.

    rules:
      - id: fire_heat.heat_source_left_on
        kind: termination          # process | termination
        category: fire_heat        # one of the 8 slugs
        message: "{object} was left on"
        when:
          object: {attr: heat_source, state: ON}

Process rules match an executed action in the state *before* it runs::

        when:
          action: [PUTBACK, PUTIN]
          args: [{attr: flammable}, {attr: heat_source, state: ON}]   # one predicate per argument
          agent: {event: hands_wet}                                     # optional: event, holds, leaves_room_with

Errors name the file, the line and the rule id; a bad file stops loading (no rule is silently dropped).
Extra rule files come from ``--rules PATH`` and from the ``safebeal.rules`` entry-point group.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from safebeal.resources import PACKAGE_DATA
from safebeal.safety.agent_conditions import AgentPred, compile_agent
from safebeal.safety.conditions import (ConditionError, Pred, StaticFilter, candidate_classes, compile_predicate,
                                        compile_static)
from safebeal.safety.pruning import Affected, compile_affected
from safebeal.safety.knowledge import ObjectKB, build_kb
from safebeal.safety.repairs import RepairOption, compile_repairs
from safebeal.safety.taxonomy import CATEGORIES, KINDS
from safebeal.capped import read_capped
from safebeal.errors import SafebealError
from safebeal.safety.yamlio import MAX_YAML_BYTES, LINE_KEY, YamlError, line_of, load_yaml_with_lines
from safebeal.scene.extensions import all_arities

#: every action a rule may name, simulator's and extensions', with the most arguments it takes
ACTION_ARITY = {a: max(n) for a, n in all_arities().items()}

DEFAULT_RULES_DIR = PACKAGE_DATA / "safety" / "data" / "rules"
ENTRY_POINT_GROUP = "safebeal.rules"
RULE_KEYS = {"id", "kind", "category", "message", "when", "description", "severity", "references", "repair", "physics"}


@dataclass
class Rule:
    id: str
    kind: str
    category: str
    message: str
    when: Dict[str, Any]
    source: str = ""
    line: int = 0
    description: str = ""
    #: a mechanism rule's physics in one sentence (docs/design/mechanisms.md): why the hazard happens
    physics: str = ""
    # compiled
    actions: Tuple[str, ...] = ()
    arg_preds: Tuple[Pred, ...] = ()
    arg_statics: Tuple[StaticFilter, ...] = ()  # the class/property/attribute part of each argument's predicate
    agent_events: Tuple[str, ...] = ()
    agent_pred: Optional[AgentPred] = None  # holds / leaves_room_with (agent_conditions.compile_agent)
    object_pred: Optional[Pred] = None
    candidates: Optional[frozenset] = None  # classes the subject must have (None: any)
    static: Optional[StaticFilter] = None  # the subject's class/property/attribute conditions
    affected: Optional[Affected] = None  # attribution pruning (None: evaluate every candidate)
    subject_states: Tuple[str, ...] = ()  # termination: the states ``when.object.state`` asks of the subject
    repairs: Tuple[RepairOption, ...] = ()  # how the shield makes the hazard safe (safety.repairs)

    def summary(self) -> dict:
        return {"id": self.id, "kind": self.kind, "category": self.category, "message": self.message,
                "source": f"{self.source}:{self.line}"}


def _compile(rule: Rule, kb: ObjectKB) -> None:
    w = rule.when
    if not isinstance(w, dict):
        raise ConditionError("'when' must be a mapping")
    keys = set(w) - {LINE_KEY}
    if rule.kind == "process":
        allowed = {"action", "args", "agent"}
        if keys - allowed:
            raise ConditionError(f"process rule 'when' has unknown key(s) {sorted(keys - allowed)}; allowed: {sorted(allowed)}")
        if "action" not in w:
            raise ConditionError("a process rule needs 'when.action'")
        acts = [w["action"]] if isinstance(w["action"], str) else w["action"]
        if not isinstance(acts, list) or not acts:
            raise ConditionError("'action' takes an action name or a list")
        acts = [str(a).upper() for a in acts]
        bad = [a for a in acts if a not in ACTION_ARITY]
        if bad:
            raise ConditionError(f"unknown action(s) {bad}; known: {sorted(ACTION_ARITY)}")
        args = w.get("args") or []
        if not isinstance(args, list):
            raise ConditionError("'args' takes a list of predicates, one per action argument")
        for a in acts:
            if len(args) > ACTION_ARITY[a]:
                raise ConditionError(f"'args' has {len(args)} predicates but {a} takes {ACTION_ARITY[a]} argument(s)")
        rule.actions = tuple(acts)
        rule.arg_preds = tuple(compile_predicate(p, kb) for p in args)
        rule.arg_statics = tuple(compile_static(p, kb) for p in args)
        if "agent" in w:
            rule.agent_events, rule.agent_pred = compile_agent(w["agent"], kb)
    else:
        if keys - {"object"}:
            raise ConditionError(f"termination rule 'when' has unknown key(s) {sorted(keys - {'object'})}; allowed: ['object']")
        if "object" not in w:
            raise ConditionError("a termination rule needs 'when.object'")
        rule.object_pred = compile_predicate(w["object"], kb)
        rule.candidates = candidate_classes(w["object"], kb)
        rule.static = compile_static(w["object"], kb)
        rule.affected = compile_affected(w["object"], kb)
        st = w["object"].get("state") if isinstance(w["object"], dict) else None
        rule.subject_states = tuple(str(x).upper() for x in ([st] if isinstance(st, str) else (st or ())))


MAX_FORMAT_WIDTH = 200  #: widest format spec allowed in a message field ({object:>2000000000} hung `check`)
TERMINATION_FIELDS = ("object", "witness")


def message_fields(rule: Rule) -> Tuple[str, ...]:
    """The fields a rule's message may use: ``{object}`` and ``{witness}``, and ``{arg0}``.. for process rules."""
    if rule.kind == "process":
        n = max((ACTION_ARITY[a] for a in rule.actions), default=0)
        return TERMINATION_FIELDS + tuple(f"arg{i}" for i in range(n))
    return TERMINATION_FIELDS


def check_message(rule: Rule) -> None:
    """Validate ``rule.message`` as a ``str.format`` template: it parses, names only :func:`message_fields`
    (no attribute or index access), and any format spec is a plain one with a width of at most
    :data:`MAX_FORMAT_WIDTH` (no nested fields). Use ``{{`` and ``}}`` for literal braces."""
    import string

    allowed = message_fields(rule)
    try:
        parts = list(string.Formatter().parse(rule.message))
    except ValueError as exc:
        raise ConditionError(f"message {rule.message[:80]!r} is not a valid template ({exc}); write literal braces as {{{{ and }}}}") from None
    for _, name, spec, conv in parts:
        if name is None:
            continue
        if name not in allowed:
            raise ConditionError(f"message field {{{name}}} is not one of {['{' + a + '}' for a in allowed]}")
        if conv not in (None, "s", "r"):
            raise ConditionError(f"message field {{{name}}}: unknown conversion !{conv}")
        if spec:
            if "{" in spec or "}" in spec:
                raise ConditionError(f"message field {{{name}}}: nested fields in a format spec are not allowed")
            import re

            m = re.fullmatch(r"(?:.?[<>^])?(\d{1,4})?(?:\.(\d{1,4}))?s?", spec)
            if not m or any(int(g) > MAX_FORMAT_WIDTH for g in m.groups() if g):
                raise ConditionError(f"message field {{{name}}}: format spec {spec[:40]!r} is not allowed (an alignment "
                                     f"and a width up to {MAX_FORMAT_WIDTH}, e.g. {{{name}:>20}})")
    try:
        rule.message.format(**{a: "x" for a in allowed})
    except (ValueError, KeyError, IndexError) as exc:
        raise ConditionError(f"message {rule.message[:80]!r} cannot be formatted: {exc}") from None


def load_rule_file(path: Path | str, kb: ObjectKB) -> List[Rule]:
    src = str(path)
    raw = load_yaml_with_lines(path)
    if not isinstance(raw, dict) or not isinstance(raw.get("rules"), list):
        raise YamlError(src, line_of(raw), "expected a mapping with a 'rules' list")
    out: List[Rule] = []
    for item in raw["rules"]:
        line = line_of(item)
        rid = item.get("id") if isinstance(item, dict) else None
        if not isinstance(item, dict):
            raise YamlError(src, line, "each rule must be a mapping")
        unknown = set(item) - RULE_KEYS - {LINE_KEY}
        if unknown:
            raise YamlError(src, line, f"unknown rule key(s) {sorted(unknown)}; allowed: {sorted(RULE_KEYS)}", rid)
        for req in ("id", "kind", "category", "message", "when"):
            if req not in item:
                raise YamlError(src, line, f"missing required key '{req}'", rid)
        if not isinstance(rid, str) or not rid.strip() or any(c.isspace() for c in rid):
            raise YamlError(src, line, f"rule id must be a non-empty name without spaces, got {rid!r}", None)
        if item["kind"] not in KINDS:
            raise YamlError(src, line, f"kind must be one of {list(KINDS)}, got {item['kind']!r}", rid)
        if item["category"] not in CATEGORIES:
            raise YamlError(src, line, f"unknown category slug {item['category']!r}; known: {list(CATEGORIES)}", rid)
        if not isinstance(item["message"], str):
            raise YamlError(src, line, f"message must be text, got {item['message']!r}", rid)
        if "physics" in item and (not isinstance(item["physics"], str) or not item["physics"].strip()):
            raise YamlError(src, line, f"physics must be one sentence of text, got {item['physics']!r}", rid)
        rule = Rule(str(rid), item["kind"], item["category"], item["message"], item["when"], src, line or 0,
                    str(item.get("description", "")), str(item.get("physics", "")))
        try:
            _compile(rule, kb)
            check_message(rule)
        except ConditionError as exc:
            raise YamlError(src, exc.line or line_of(item.get("when")) or line, str(exc), rid) from None
        if "repair" in item:
            arity = min((ACTION_ARITY[a] for a in rule.actions), default=0)
            try:
                rule.repairs = compile_repairs(item["repair"], rule.kind, arity, kb, line)
            except ConditionError as exc:
                raise YamlError(src, exc.line or line, str(exc), rid) from None
        out.append(rule)
    return out


def _entry_point_paths() -> List[Path]:
    paths: List[Path] = []
    from safebeal.registry import describe_entry_point

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            target = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin is one error naming it, never skipped
            raise SafebealError(f"rules plugin {describe_entry_point(ep)} failed to load: {type(exc).__name__}: {exc}") from exc
        value = target() if callable(target) else target
        items = value if isinstance(value, (list, tuple)) else [value]
        paths.extend(Path(p) for p in items)
    return paths


@dataclass
class RuleSet:
    rules: List[Rule]
    kb: ObjectKB
    files: List[str] = field(default_factory=list)

    @property
    def process(self) -> List[Rule]:
        return [r for r in self.rules if r.kind == "process"]

    @property
    def termination(self) -> List[Rule]:
        return [r for r in self.rules if r.kind == "termination"]

    def by_id(self, rid: str) -> Rule:
        for r in self.rules:
            if r.id == rid:
                return r
        raise KeyError(rid)

    def digest(self) -> str:
        """A hash of every rule and object file's content: recorded in run logs."""
        h = hashlib.sha256()
        for f in sorted(set(self.files) | set(self.kb.sources)):
            h.update(read_capped(f, MAX_YAML_BYTES))
        return h.hexdigest()[:16]


def load_rules(
    extra: Sequence[Path | str] = (),
    objects: Sequence[Path | str] = (),
    defaults: bool = True,
    entry_points_too: bool = True,
) -> RuleSet:
    """Load the default rules (unless ``defaults=False``), entry-point rule files and ``extra`` files or folders."""
    kb = build_kb(objects)
    files: List[Path] = []
    if defaults:
        files += sorted(DEFAULT_RULES_DIR.glob("*.yaml"))
    if entry_points_too:
        files += _entry_point_paths()
    for p in extra:
        p = Path(p)
        files += sorted(p.glob("*.yaml")) + sorted(p.glob("*.yml")) if p.is_dir() else [p]
    rules: List[Rule] = []
    seen: Dict[str, Rule] = {}
    for f in files:
        for r in load_rule_file(f, kb):
            if r.id in seen:
                prev = seen[r.id]
                raise YamlError(r.source, r.line, f"duplicate rule id (first defined at {prev.source}:{prev.line})", r.id)
            seen[r.id] = r
            rules.append(r)
    return RuleSet(rules, kb, [str(f) for f in files])
