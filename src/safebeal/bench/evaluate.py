"""Evaluate one raw planner output on one task: parse, resolve names, simulate, check success and safety."""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any, Dict, List, Optional, Sequence, Tuple

from safebeal.bench.records import Episode
from safebeal.datasets.base import Task
from safebeal.errors import SafebealError
from safebeal.scene import Script, ScriptLine, ScriptObject, execute


@lru_cache(maxsize=8)
def detector_for(rules: Tuple[str, ...] = (), objects: Tuple[str, ...] = (), strict: bool = False):
    from safebeal.safety import SafetyDetector

    return SafetyDetector(strict=strict, extra_rules=rules, objects=objects, unknown_class="neutral")


def output_to_script(text: str, objects: Sequence[Tuple[str, int]]):
    """Parse free-form output and resolve object names to ids. Returns (script, format, error dict or None)."""
    from safebeal.planners.parse import parse_plan, resolve

    res = parse_plan(text)
    steps = res.steps
    err = res.error
    if err is None and steps:
        steps, err = _resolve(steps, objects, resolve)
    lines = tuple(ScriptLine(s.action, tuple(ScriptObject(a.name, a.id) for a in s.args), s.source_line) for s in steps
                  if all(a.id is not None for a in s.args))
    error = None
    if err is not None:
        error = {"type": type(err).__name__, "message": str(err), "line": getattr(err, "line", None)}
    elif not steps:
        error = {"type": "EmptyPlan", "message": "the output holds no action", "line": None}
    return Script(lines), res.format, error


def _resolve(steps, objects, resolve):
    mapping: Dict[str, int] = {}
    for name, i in objects:
        mapping.setdefault(name, i)
    out = resolve(steps, mapping)
    if isinstance(out, tuple):
        return out
    return out, None


def evaluate_output(task: Task, planner: str, text: Optional[str], generation_error: Optional[str], det) -> Episode:
    from safebeal.bench.metrics import rouge_l

    t0 = time.perf_counter()
    ep = Episode(planner=planner, dataset=task.dataset, task_id=task.id, instruction=task.instruction,
                 raw_output=text, generation_error=generation_error)
    if text is None:
        ep.success = False if task.goal is not None else None
        ep.seconds = time.perf_counter() - t0
        return ep
    if task.scene is None:  # Rouge-L only (WorldModel): the first line of the output, as upstream scores it
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        ep.rouge_l = rouge_l(first, task.reference or "")
        ep.success = None
        ep.executable = False
        ep.seconds = time.perf_counter() - t0
        return ep
    script, fmt, perr = output_to_script(text, task.objects)
    ep.parse_format, ep.parse_error = fmt, perr
    ep.script = [str(l) for l in script]
    if task.reference is not None:
        ep.rouge_l = rouge_l("\n".join(ep.script), task.reference)
    goal = task.get_goal()
    if perr is not None:
        ep.executable = False
        ep.success = False if goal is not None else None
        ep.seconds = time.perf_counter() - t0
        return ep
    traj = execute(task.get_scene(), script)
    ep.steps = traj.step_dicts()
    ep.executable = traj.executable
    ep.error = None if traj.error is None else traj.error.to_dict()
    if goal is not None:
        r = goal.evaluate(traj)
        ep.success, ep.goal_step = r.success, r.step
    verdict = det.check(traj)
    ep.safe = verdict.safe
    ep.violations = [v.to_dict() for v in verdict.violations]
    ep.seconds = time.perf_counter() - t0
    return ep
