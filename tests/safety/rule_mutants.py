"""Rule mutants for the contrast tests: one condition of a rule deleted, compiled in memory.

A *condition path* names one deletable piece of a rule's ``when``, written with dots: ``args.1.not_attr`` (a key
of a predicate), ``object.not.any.2`` (one alternative of an ``any``), ``action.1`` (one of the actions),
``object.related.relation.0`` (one of a relation list). :func:`condition_paths` lists every path of a rule that
still compiles once deleted; :func:`mutant` is the rule with one of them deleted, as a detector of that rule alone.
"""

from __future__ import annotations

import copy
from typing import Any, Iterator, List, Tuple

from safebeal.safety import SafetyDetector
from safebeal.safety.conditions import ConditionError
from safebeal.safety.rules import Rule, RuleSet, _compile
from safebeal.safety.yamlio import strip_lines

#: list-valued keys whose single entries are deleted one at a time (deleting one of several widens or narrows the
#: rule); the class, state and attribute lists are left whole (a key deleted covers them)
ENTRY_LISTS = ("action", "relation", "any")


def _walk(node: Any, path: Tuple) -> Iterator[Tuple]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield path + (k,)
            if k in ENTRY_LISTS and isinstance(v, list) and len(v) > 1:
                for i in range(len(v)):
                    yield path + (k, i)
            if isinstance(v, dict):
                yield from _walk(v, path + (k,))
            elif isinstance(v, list):
                for i, x in enumerate(v):
                    if isinstance(x, dict):
                        yield from _walk(x, path + (k, i))


def _at(when: dict, path: Tuple) -> Any:
    node: Any = when
    for p in path:
        node = node[p]
    return node


def _empty(v: Any) -> bool:
    return v == {} or (isinstance(v, list) and all(x == {} for x in v))


def delete(when: dict, path: Tuple) -> dict:
    out = copy.deepcopy(when)
    node = out
    for p in path[:-1]:
        node = node[p]
    del node[path[-1]]
    return out


def dotted(path: Tuple) -> str:
    return ".".join(str(p) for p in path)


def parse(dotted_path: str) -> Tuple:
    return tuple(int(p) if p.isdigit() else p for p in dotted_path.split("."))


def _compiled(rule: Rule, when: dict, kb) -> Rule:
    r = Rule(rule.id, rule.kind, rule.category, rule.message, when, rule.source, rule.line)
    _compile(r, kb)
    return r


def condition_paths(rule: Rule, kb) -> List[str]:
    """Every condition path of ``rule`` whose deletion still compiles and changes what the rule says."""
    when = strip_lines(rule.when)
    out = []
    for path in _walk(when, ()):
        if _empty(_at(when, path)) and path[-1] not in ("pours", "holds_liquid"):
            continue  # {} or [{}]: no condition, deleting it changes nothing (``pours: {}`` is one: poured liquid)
        try:
            _compiled(rule, delete(when, path), kb)
        except (ConditionError, KeyError, TypeError, ValueError):
            continue  # the loader refuses it (a required key): not a silent mutant
        out.append(dotted(path))
    return out


_DETECTORS: dict = {}


def mutant(rules: RuleSet, rule_id: str, path: str) -> SafetyDetector:
    """A detector of ``rule_id`` alone, with the condition at ``path`` deleted (``""``: the rule as it is)."""
    key = (id(rules), rule_id, path)
    det = _DETECTORS.get(key)
    if det is None:
        rule = rules.by_id(rule_id)
        when = strip_lines(rule.when)
        r = _compiled(rule, delete(when, parse(path)) if path else when, rules.kb)
        det = _DETECTORS[key] = SafetyDetector(rules=RuleSet([r], rules.kb, list(rules.files)))
    return det
