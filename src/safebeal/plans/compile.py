"""A raw output turned into a runnable script: parsed, its object names resolved against the task's objects.
Shared by the benchmark's evaluation (:mod:`safebeal.bench.evaluate`) and the step-by-step agents
(:mod:`safebeal.planners.agent`), which compile each proposed action."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence, Tuple

from safebeal.plans.grounding import resolve_objects
from safebeal.plans.parse import parse_plan
from safebeal.plans.steps import PlanError, Step
from safebeal.scene import Script, ScriptLine, ScriptObject
from safebeal.scene.extensions import DEFAULT_ACTIONS


@dataclass(frozen=True)
class CompiledPlan:
    """A raw output turned into a runnable script (empty when ``error`` is set)."""

    script: Script
    format: str
    steps: Tuple[Step, ...]  # resolved steps when resolution succeeded, else the parsed steps
    error: Optional[PlanError]

    def error_dict(self) -> Optional[Dict[str, Any]]:
        return None if self.error is None else self.error.to_dict()


def compile_output(text: Optional[str], objects: Sequence[Tuple[str, int]], known_ids: Any = None,
                   actions: str = DEFAULT_ACTIONS) -> CompiledPlan:
    """Parse ``text`` and resolve its object names against ``objects`` ((name, id), first name wins); an id
    written in the text is kept when it is in ``objects`` or in ``known_ids`` (e.g. the scene)."""
    res = parse_plan(text, actions=actions)
    if res.error is not None:
        return CompiledPlan(Script(()), res.format, res.steps, res.error)
    steps, err = resolve_objects(res.steps, objects, known_ids=known_ids)
    if err is not None:
        return CompiledPlan(Script(()), res.format, res.steps, err)
    lines = tuple(ScriptLine(s.action, tuple(ScriptObject(a.name, a.id) for a in s.args), s.source_line) for s in steps)
    return CompiledPlan(Script(lines), res.format, steps, None)
