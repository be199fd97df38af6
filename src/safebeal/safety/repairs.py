"""Repairs as data: how to make a rule's hazard safe, declared next to the rule in its YAML (``repair:``).

A repair is a list of options, tried in order by the shield (:mod:`safebeal.safety.shield`); each option is a
list of script steps with placeholders::

      - id: fire_heat.heat_source_left_on          # a termination rule: steps appended after the plan
        ...
        repair:
          - do: ["[WALK] {object}", "[SWITCHOFF] {object}"]

      - id: water_hazard.run_washer_with_door_open  # a process rule: steps before the step, or instead of it
        ...
        repair:
          - before: ["[CLOSE] {arg0}"]
      - id: cut_injury.run_with_sharp
        ...
        repair:
          - instead: ["[WALK] {arg0}"]

- ``do`` (termination rules): steps run after the plan, on the final state;
- ``before`` (process rules): steps run before the unsafe step, which then runs (if it is safe now);
- ``instead`` (process rules): steps run in place of the unsafe step.

A process step that no option makes safe is skipped (the shield's last resort; declare nothing to mean "skip").

Placeholders: ``{object}`` (the rule's subject: a termination rule's object, a process rule's first argument),
``{witness}`` (the first object a condition matched through: the heat source a towel lies on), ``{arg0}``,
``{arg1}`` (a process step's arguments), ``{held}`` (something the agent holds other than these: what to put down
to free a hand) and ``{any:CLASS|CLASS|...}``: a scene object of one of these classes
(those close to the agent first, then those in its room, then the rest; the shield tries a few), and
``{surface}``, short for ``{any:...}`` of :data:`SURFACES` (counters, tables, shelves: where a thing is put
down safely). One option uses at most one ``any:`` list or ``{surface}`` (it may appear in several of its steps:
the same object). A step written
``?[OPEN] {arg0}`` is optional: when the simulator refuses it (the door is already open), or a placeholder has
nothing to name (the agent holds nothing), it is left out.

Every option is checked when the rules load: known actions, the right number of arguments, placeholders the
rule has, known classes; errors name the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from safebeal.safety.conditions import ConditionError
from safebeal.safety.knowledge import ObjectKB
from safebeal.safety.yamlio import LINE_KEY, line_of
from safebeal.scene.actions import ACTION_ARITY

#: what ``{surface}`` stands for: places where an object is put down out of harm's way
SURFACES = ("kitchen_counter", "table", "kitchen_table", "coffee_table", "desk", "bathroom_counter", "nightstand",
            "bookshelf", "wallshelf", "tvstand", "dresser", "cabinet")
OPTION_KINDS = {"process": ("before", "instead"), "termination": ("do",)}
MAX_STEPS = 12  #: steps in one option
_STEP_RE = re.compile(r"^\s*(\?)?\s*\[\s*([A-Za-z_]+)\s*\]((?:\s*\{[^{}]*\})*)\s*$")
_PH_RE = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class StepTemplate:
    action: str
    args: Tuple[str, ...]  # placeholder names: object, witness, arg0, arg1, any:a|b
    optional: bool = False

    def __str__(self) -> str:
        return ("?" if self.optional else "") + " ".join([f"[{self.action}]"] + ["{" + a + "}" for a in self.args])


@dataclass(frozen=True)
class RepairOption:
    kind: str  # before | instead | do
    steps: Tuple[StepTemplate, ...]
    line: int = 0

    @property
    def selector(self) -> Optional[Tuple[str, ...]]:
        """The classes of the option's ``{any:...}`` placeholder, or None."""
        for s in self.steps:
            for a in s.args:
                if a.startswith("any:"):
                    return tuple(a[4:].split("|"))
        return None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "steps": [str(s) for s in self.steps]}


def placeholders(kind: str, arity: int) -> Tuple[str, ...]:
    """The placeholders a rule of ``kind`` may use (``arity``: the fewest arguments its actions take)."""
    if kind == "termination":
        return ("object", "witness", "held")
    return ("object", "witness", "held") + tuple(f"arg{i}" for i in range(arity))


def parse_repair_step(text: Any, allowed: Tuple[str, ...], kb: ObjectKB, line: Optional[int]) -> StepTemplate:
    if not isinstance(text, str):
        raise ConditionError(f"a repair step must be text like \"[SWITCHOFF] {{object}}\", got {text!r}", line)
    m = _STEP_RE.match(text)
    if not m:
        raise ConditionError(f"cannot read repair step {text[:80]!r}: expected \"[ACTION] {{placeholder}} ...\" "
                             f"(placeholders: {', '.join('{' + a + '}' for a in allowed)}, {{surface}}, {{any:CLASS|CLASS}})", line)
    action = m.group(2).upper()
    if action not in ACTION_ARITY:
        raise ConditionError(f"repair step {text!r}: unknown action {action!r}", line)
    args = tuple(a.strip() for a in _PH_RE.findall(m.group(3)))
    args = tuple("any:" + "|".join(SURFACES) if a == "surface" else a for a in args)
    if len(args) != ACTION_ARITY[action]:
        raise ConditionError(f"repair step {text!r}: {action} takes {ACTION_ARITY[action]} argument(s), got {len(args)}", line)
    for a in args:
        if a.startswith("any:"):
            classes = [c.strip() for c in a[4:].split("|")]
            if not classes or any(not c for c in classes):
                raise ConditionError(f"repair step {text!r}: {{any:...}} needs class names separated by '|'", line)
            unknown = [c for c in classes if not kb.known(c)]
            if unknown:
                raise ConditionError(f"repair step {text!r}: unknown class(es) {unknown} in {{{a}}}", line)
        elif a not in allowed:
            raise ConditionError(f"repair step {text!r}: placeholder {{{a}}} is not one of "
                                 f"{['{' + x + '}' for x in allowed] + ['{surface}', '{any:CLASS|CLASS}']}", line)
    args = tuple("any:" + "|".join(c.strip() for c in a[4:].split("|")) if a.startswith("any:") else a for a in args)
    return StepTemplate(action, args, bool(m.group(1)))


def compile_repairs(raw: Any, kind: str, arity: int, kb: ObjectKB, line: Optional[int]) -> Tuple[RepairOption, ...]:
    """Validate a rule's ``repair:`` list (``arity``: the fewest arguments the rule's actions take)."""
    if not isinstance(raw, list) or not raw:
        raise ConditionError("'repair' takes a non-empty list of options, e.g. "
                             + ("- do: [\"[WALK] {object}\", \"[SWITCHOFF] {object}\"]" if kind == "termination"
                                else "- before: [\"[CLOSE] {arg0}\"]"), line)
    kinds = OPTION_KINDS[kind]
    allowed = placeholders(kind, arity)
    out: List[RepairOption] = []
    for opt in raw:
        oline = line_of(opt) or line
        keys = set(opt) - {LINE_KEY} if isinstance(opt, dict) else set()
        if not isinstance(opt, dict) or len(keys) != 1 or next(iter(keys)) not in kinds:
            raise ConditionError(f"a {kind} rule's repair option is a mapping with one key, one of {list(kinds)}; "
                                 f"got {opt if not isinstance(opt, dict) else sorted(keys)!r}", oline)
        k = next(iter(keys))
        steps = opt[k]
        if isinstance(steps, str):
            steps = [steps]
        if not isinstance(steps, list) or not steps or len(steps) > MAX_STEPS:
            raise ConditionError(f"repair '{k}' takes a list of 1 to {MAX_STEPS} steps", oline)
        templates = tuple(parse_repair_step(s, allowed, kb, oline) for s in steps)
        selectors = {a for t in templates for a in t.args if a.startswith("any:")}
        if len(selectors) > 1:
            raise ConditionError(f"a repair option uses at most one {{any:...}} list, got {sorted(selectors)}", oline)
        if all(t.optional for t in templates):
            raise ConditionError("a repair option needs at least one step that is not optional ('?')", oline)
        out.append(RepairOption(k, templates, oline or 0))
    return tuple(out)
