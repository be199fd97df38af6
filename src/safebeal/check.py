"""``safebeal check``: run one plan on one scene and report executability and success (and, once the
safety detector is plugged in, safety). The JSON record is designed to grow: new fields are added, none
are renamed."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from safebeal.datasets.goals import DiffGoal, Goal, GoalSpec
from safebeal.errors import SafebealError
from safebeal.resources import PACKAGE_DATA
from safebeal.scene import SceneGraph, Trajectory, execute, load_scene, parse_script

DEFAULT_SCENE = "activity:392_2"
DEFAULT_PLAN = PACKAGE_DATA / "examples" / "cook_some_food.txt"


def read_plan(plan: str) -> Tuple[str, str]:
    """Read a plan from a path, or from standard input when ``plan`` is ``-``. Returns (text, source)."""
    if plan == "-":
        return sys.stdin.read(), "<stdin>"
    p = Path(plan)
    try:
        return p.read_text(), str(p)
    except FileNotFoundError:
        raise SafebealError(f"{plan}: plan file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SafebealError(f"{plan}: cannot read plan: {exc}") from None


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
        return GoalSpec.from_vh_goal(scene.goal, source=scene_spec)
    return None


def check_plan(scene_spec: str, plan_text: str, plan_source: str = "<plan>", success: str = "auto") -> Dict[str, Any]:
    scene = load_scene(scene_spec)
    script = parse_script(plan_text, source=plan_source)
    traj = execute(scene, script)
    goal = goal_for(scene_spec, scene, success)
    return report(scene_spec, plan_source, traj, goal)


def report(scene_spec: str, plan_source: str, traj: Trajectory, goal: Optional[Goal]) -> Dict[str, Any]:
    res = goal.evaluate(traj) if goal is not None else None
    err = traj.error
    return {
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
