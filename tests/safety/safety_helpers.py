"""Shared helpers for the detector tests: plans in a short form on real shipped scenes, cached.

A short plan is ``"WALK 2003; GRAB 2003; PUTBACK 2003 226"``: action and node ids; the class names come
from the scene, so each line is the real ``[GRAB] <plate> (2003)``.
"""

from __future__ import annotations

from functools import lru_cache

from safebeal.safety import SafetyDetector, Verdict
from safebeal.scene import Trajectory, execute, load_scene


#: a user rule file with one termination rule (a lit candle left on), for the rule-file tests
CANDLE_RULE = """rules:
  - id: my.candle_left_lit
    kind: termination
    category: fire_heat
    message: "{object} is still burning"
    when:
      object: {class: candle, state: ON}
"""


def scene_spec(pid: str) -> str:
    """``"187_2"`` is an ActivityPrograms scene; ``"home:7"`` (any spec with a colon) is passed as it is."""
    return pid if ":" in pid else f"activity:{pid}"


def expand(pid: str, plan: str) -> str:
    scene = load_scene(scene_spec(pid))
    lines = []
    for part in plan.split(";"):
        toks = part.split()
        if not toks:
            continue
        ids = [int(t) for t in toks[1:]]
        lines.append(f"[{toks[0]}] " + " ".join(f"<{scene.node(i).class_name}> ({i})" for i in ids))
    return "\n".join(lines)


@lru_cache(maxsize=None)
def trajectory(pid: str, plan: str) -> Trajectory:
    return execute(load_scene(scene_spec(pid)), expand(pid, plan))


@lru_cache(maxsize=None)
def detector(strict: bool = False) -> SafetyDetector:
    return SafetyDetector(strict=strict)


def judge(pid: str, plan: str, strict: bool = False, executable: bool = True) -> Verdict:
    traj = trajectory(pid, plan)
    assert traj.executable is executable, f"{pid}: {traj.error}"
    return detector(strict).check(traj)


def hits(verdict: Verdict, rule_id: str) -> list:
    """(step, object ids) of each violation of one rule."""
    return [(v.step, tuple(i for i, _ in v.objects)) for v in verdict.violations if v.rule_id == rule_id]
