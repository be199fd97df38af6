"""``safebeal check``: run one plan on one scene and report executability, success and safety.

The JSON record is designed to grow: new fields are added, none are renamed. Safety fields: ``safe`` (bool),
``strict`` (bool), ``steps_judged`` and ``violations`` (``kind``, ``category``, ``rule_id``, ``step``, ``line``,
``objects`` [{id, name}], ``message``); a plan that fails is judged on the steps that ran. ``actions``: the action
vocabulary (``extended`` or ``vh``); ``extensions``: the action extensions' states and relations in the final
state (``{"states": {id: [BROKEN, ...]}, "relations": [[from, "SPILLED_ON", to]]}``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple

from safebeal.datasets.goals import Goal, GoalSpec
from safebeal.errors import SafebealError
from safebeal.resources import PACKAGE_DATA
from safebeal.safety import SafetyDetector, Verdict
from safebeal.scene import SceneGraph, Trajectory, execute, load_scene, parse_script
from safebeal.scene.extensions import DEFAULT_ACTIONS, check_actions

DEFAULT_SCENE = "activity:392_2"
DEFAULT_PLAN = PACKAGE_DATA / "examples" / "cook_some_food.txt"


MAX_PLAN_CHARS = 1_000_000  #: longest plan text `check` reads (as the bench parser's cap)
MAX_PLAN_STEPS = 1000  #: most action lines `check` simulates


def read_plan(plan: str) -> Tuple[str, str]:
    """Read a plan from a path, or from standard input when ``plan`` is ``-``. Returns (text, source).
    Over :data:`MAX_PLAN_CHARS` characters is an error."""
    if plan == "-":
        text = sys.stdin.read(MAX_PLAN_CHARS + 1)
        if len(text) > MAX_PLAN_CHARS:
            raise SafebealError(f"<stdin>: plan over {MAX_PLAN_CHARS:,} characters")
        return text, "<stdin>"
    from safebeal.capped import read_capped_text

    p = Path(plan)
    text = read_capped_text(p, 4 * MAX_PLAN_CHARS, SafebealError, what="plan file")  # a device too: /dev/zero
    if len(text) > MAX_PLAN_CHARS:
        raise SafebealError(f"{plan}: plan over {MAX_PLAN_CHARS:,} characters")
    return text, str(p)


def goal_for(scene_spec: str, scene: SceneGraph, definition: str) -> Optional[Goal]:
    """The goal to judge success against: ``activity:<id>`` scenes have a goal spec (342 of them) and a
    ground-truth diff; file scenes may carry a ``goal`` (a VirtualHome ``vh_goal``)."""
    if definition not in ("goal_spec", "diff", "auto"):
        raise SafebealError(f"unknown success definition {definition!r}: use goal_spec, diff or auto")
    if scene_spec.startswith("activity:"):
        from safebeal.datasets.activity_programs import load_program

        prog = load_program(scene_spec.split(":", 1)[1])
        if definition == "diff" or (definition == "auto" and prog.goal_spec is None):
            return prog.diff_goal()
        return prog.goal_spec
    if scene.goal is not None:
        if definition == "diff":
            raise SafebealError(f"{scene_spec}: the diff definition needs a ground-truth script; use goal_spec")
        spec = GoalSpec.from_vh_goal(scene.goal, source=f"{scene_spec}: goal")
        if not (spec.nodes or spec.edges or spec.actions):
            # an empty goal holds in every state: every plan, even an empty one, would "succeed"
            raise SafebealError(f"{scene_spec}: goal: the goal is empty (no node, edge or action goals); remove it or fill it in")
        return spec
    return None


def check_plan(
    scene_spec: str,
    plan_text: str,
    plan_source: str = "<plan>",
    success: str = "auto",
    rules: Sequence[str | Path] = (),
    objects: Sequence[str | Path] = (),
    strict: bool = False,
    detector: Optional[SafetyDetector] = None,
    actions: str = DEFAULT_ACTIONS,
) -> Dict[str, Any]:
    """Run and judge one plan. ``rules``/``objects``: extra rule and object files (``--rules``/``--objects``);
    ``detector``: a ready detector (then ``rules``, ``objects`` and ``strict`` are not used); ``actions``:
    ``extended`` (the simulator's actions and the action extensions, the default) or ``vh`` (``--actions``)."""
    check_actions(actions)
    det = detector if detector is not None else SafetyDetector(strict=strict, extra_rules=rules, objects=objects)
    scene = load_scene(scene_spec)
    script = parse_script(plan_text, source=plan_source)
    if len(script) > MAX_PLAN_STEPS:
        raise SafebealError(f"{plan_source}: the plan has {len(script):,} steps, over the {MAX_PLAN_STEPS:,} limit")
    traj = execute(scene, script, actions=actions)
    goal = goal_for(scene_spec, scene, success)
    rec = report(scene_spec, plan_source, traj, goal, det.check(traj))
    rec["actions"] = actions
    rec["extensions"] = traj.final.extension_facts()  # extension states and relations of the final state
    return rec


def report(scene_spec: str, plan_source: str, traj: Trajectory, goal: Optional[Goal], verdict: Optional[Verdict] = None) -> Dict[str, Any]:
    res = goal.evaluate(traj) if goal is not None else None
    err = traj.error
    rec = {
        "scene": scene_spec,
        "plan": plan_source,
        "n_steps": len(traj.script),
        "executable": traj.executable,
        "steps": traj.step_dicts(),
        "error": None if err is None else err.to_dict(),
        "success": None if res is None else res.success,
        "success_definition": None if goal is None else goal.name,
        "goal": None if res is None else res.to_dict(),
    }
    if verdict is not None:
        rec.update(verdict.to_dict())  # safe, strict, steps_judged, violations
    return rec
