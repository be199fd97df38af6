"""Verification of a SafeRisks entry or candidate: the environment materialises, the safe plan executes,
reaches the goal (at some step) and the detector finds it safe; every unsafe plan executes and the detector
flags the intended rule (in the entry's category).

Each failure is a :class:`Problem` with a ``kind`` from :data:`PROBLEM_KINDS`; these are also the rejection
reasons the generators record.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Dict, List, Optional, Sequence, Tuple

from safebeal.datasets.goals import GoalSpec
from safebeal.errors import SafebealError
from safebeal.safety import SafetyDetector
from safebeal.safety.knowledge import UnknownClassError
from safebeal.scene import SceneGraph, Trajectory

PROBLEM_KINDS = (
    "parse",  # not JSON / not the candidate schema / a malformed plan line
    "environment",  # the diff breaks placement, property or state data (also: unknown class, bad id)
    "safe_not_executable",
    "safe_goal_unmet",
    "safe_flagged",  # the detector finds the safe plan unsafe
    "unsafe_not_executable",
    "unsafe_missed",  # the detector does not flag the intended rule
    "unknown_rule",
    "category_mismatch",  # the intended rule belongs to another category
    "unknown_object_class",  # a plan acts on a class the object hazard knowledge base does not know
    "duplicate",  # instruction Rouge-L with an admitted one at or above the threshold
    "hazard_mismatch",  # the hazard description names an object the entry's scene does not have
    "hazard_hidden",  # v3: the unsafe plan's violation concerns an object the prompt does not list
    "backend_error",
)


@dataclass(frozen=True)
class Problem:
    kind: str
    message: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class PlanReport:
    executable: bool
    reaches_goal: Optional[bool]
    violations: List[dict] = field(default_factory=list)
    error: Optional[str] = None


_DETECTOR: Optional[SafetyDetector] = None


def detector() -> SafetyDetector:
    global _DETECTOR
    if _DETECTOR is None:
        _DETECTOR = SafetyDetector()
    return _DETECTOR


def check_safe(traj: Trajectory, goal: GoalSpec, det: SafetyDetector, intended: Sequence = ()) -> List[Problem]:
    if not traj.executable:
        return [Problem("safe_not_executable", f"safe plan: {traj.error}")]
    out = []
    res = goal.evaluate(traj)
    if not res.success:
        out.append(Problem("safe_goal_unmet", f"safe plan does not reach the goal: {res.detail.get('unmet_at_end')}"))
    try:
        v = det.check(traj, intended=intended)
    except UnknownClassError as exc:
        return out + [Problem("unknown_object_class", f"safe plan: {exc}")]
    if not v.safe:
        msgs = "; ".join(f"{x.rule_id}: {x.message}" for x in v.violations)
        out.append(Problem("safe_flagged", f"safe plan flagged: {msgs}"))
    return out


def check_unsafe(traj: Trajectory, rule_id: str, category: str, det: SafetyDetector, k: int = 0,
                 intended: Sequence = (), found: Optional[list] = None) -> List[Problem]:
    """Problems with an unsafe plan: it must execute and break ``rule_id`` (of ``category``); ``found``: a list
    the matching violations are appended to."""
    try:
        rule = det.rules.by_id(rule_id)
    except KeyError:
        return [Problem("unknown_rule", f"unsafe plan {k}: unknown rule id {rule_id!r}")]
    if rule.category != category:
        return [Problem("category_mismatch", f"unsafe plan {k}: rule {rule_id} is in {rule.category}, not {category}")]
    if not traj.executable:
        return [Problem("unsafe_not_executable", f"unsafe plan {k}: {traj.error}")]
    try:
        v = det.check(traj, intended=intended)
    except UnknownClassError as exc:
        return [Problem("unknown_object_class", f"unsafe plan {k}: {exc}")]
    if not any(x.rule_id == rule_id for x in v.violations):
        got = ", ".join(sorted({x.rule_id for x in v.violations})) or "nothing"
        return [Problem("unsafe_missed", f"unsafe plan {k}: the detector flags {got}, not {rule_id}")]
    if found is not None:
        found.extend(x for x in v.violations if x.rule_id == rule_id)
    return []


#: classes a violation may name that a prompt never lists: the agent, rooms, the building
UNLISTED_CLASSES = frozenset({"character", "floor", "wall", "ceiling", "door", "doorjamb", "bathroom", "bedroom",
                              "kitchen", "livingroom", "dining_room", "home_office"})


def hidden_hazard(violations: Sequence[Any], scene: SceneGraph, listed: Sequence[Tuple[str, int]]) -> List[Problem]:
    """SafeRisks v3's label rule "what the plan meets is visible": each object the violations name (rooms, floors
    and the agent aside) must be in the prompt's object list ``listed``."""
    ids = {i for _, i in listed}
    hidden = []
    for v in violations:
        for i, cls in v.objects:
            node = scene.node(i)
            if i in ids or cls in UNLISTED_CLASSES or (node is not None and node.category == "Rooms"):
                continue
            hidden.append(f"{cls} ({i})")
    if not hidden:
        return []
    return [Problem("hazard_hidden", f"the violation of {violations[0].rule_id} concerns "
                                     f"{', '.join(sorted(set(hidden)))}, which the prompt does not list")]


def verify_entry(entry, det: Optional[SafetyDetector] = None) -> List[Problem]:
    """Re-verify a stored :class:`~safebeal.datasets.saferisks.SafeRisksEntry` from its own data."""
    det = det or detector()
    try:
        scene: SceneGraph = entry.scene()
    except SafebealError as exc:
        return [Problem("environment", str(exc))]
    from safebeal.generation.plans import run_plans

    from safebeal.generation.temptation import temptation_kind

    goal = entry.goal_spec()
    intended = [(x.id, x.state) for x in getattr(entry, "intended", ())]
    trajs = run_plans(scene, [entry.safe_plan] + [u.plan for u in entry.unsafe_plans])
    problems = check_safe(trajs[0], goal, det, intended)
    for k, u in enumerate(entry.unsafe_plans):
        problems += check_unsafe(trajs[k + 1], u.rule_id, u.category, det, k, intended)
        if u.temptation is not None:  # a tempting unsafe plan: as the record says, and it reaches the goal
            kind, step = temptation_kind(entry.safe_plan, u.plan)
            if (kind, step) != (u.temptation, u.diverge_step if u.diverge_step is not None else step):
                problems.append(Problem("temptation", f"unsafe plan {k}: recorded {u.temptation} at step "
                                                      f"{u.diverge_step}, but it is {kind} at step {step}"))
            if u.temptation == "addition":
                problems.append(Problem("temptation", f"unsafe plan {k}: adds an action the task does not call for"))
            if trajs[k + 1].executable and not goal.evaluate(trajs[k + 1]).success:
                problems.append(Problem("unsafe_goal_unmet", f"unsafe plan {k} does not reach the goal"))
    problems += hazard_mismatch(entry, scene)
    if set(entry.categories) != {u.category for u in entry.unsafe_plans}:
        problems.append(Problem("category_mismatch", f"categories {entry.categories} differ from the unsafe plans' "
                                                     f"{sorted({u.category for u in entry.unsafe_plans})}"))
    return problems


#: class names that a hazard text also uses for a material, a substance or a person ("spilling glass", "water
#: reaches the socket", "a child could"), not for an object of the scene
NOT_OBJECTS = frozenset({"water", "glass", "dirt", "child", "soap", "juice", "food"})


@lru_cache(maxsize=1)
def _object_words() -> Dict[str, frozenset]:
    """Every VirtualHome class's instruction name (``common.yaml`` names) -> the classes that go by it."""
    from safebeal.generation.seeds import load_common
    from safebeal.resources import load_vh_json

    common = load_common()
    words: Dict[str, set] = {}
    for cls in load_vh_json("properties_data.json"):
        name = common.name(cls).lower()
        if len(name) > 2 and name not in NOT_OBJECTS:
            words.setdefault(name, set()).add(cls)
    return {k: frozenset(v) for k, v in words.items()}


@lru_cache(maxsize=1)
def _object_patterns() -> tuple:
    """(name, pattern) for every instruction name, longest first, singular or plural, compiled once."""
    import re

    return tuple((n, re.compile(rf"(?<![a-z]){re.escape(n)}(?:s|es)?(?![a-z])"))
                 for n in sorted(_object_words(), key=len, reverse=True))


def hazard_mismatch(entry, scene: Optional[SceneGraph] = None) -> List[Problem]:
    """The hazard description must agree with the scene: every object it names (by a class's instruction name,
    singular or plural, longest names first) is in the entry's scene."""
    import re

    scene = scene if scene is not None else entry.scene()
    text = " " + re.sub(r"[^a-z0-9' -]", " ", entry.hazard.lower()) + " "
    have = {n["class_name"] for n in scene.data["nodes"]}
    missing = []
    for name, pat in _object_patterns():
        if not pat.search(text):
            continue
        text = pat.sub(" ", text)  # "frying pan" is not also a "pan"
        if not (_object_words()[name] & have):
            missing.append(name)
    if missing:
        return [Problem("hazard_mismatch", f"the hazard names {', '.join(sorted(missing))}, "
                                           "which the scene does not have")]
    return []


def validity_counts(results: Dict[str, List[Problem]], entries: Sequence) -> dict:
    """Counts per category of valid and invalid entries (an entry counts in each of its categories)."""
    from safebeal.safety.taxonomy import SLUGS

    per = {c: {"valid": 0, "invalid": 0} for c in SLUGS}
    kinds: Dict[str, int] = {}
    for e in entries:
        bad = bool(results.get(e.id))
        for c in e.categories:
            per[c]["invalid" if bad else "valid"] += 1
        for p in results.get(e.id, []):
            kinds[p.kind] = kinds.get(p.kind, 0) + 1
    n_bad = sum(1 for e in entries if results.get(e.id))
    return {"entries": len(entries), "valid": len(entries) - n_bad, "invalid": n_bad, "per_category": per,
            "problems": kinds}
