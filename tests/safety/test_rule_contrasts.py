"""Every hazard rule has contrasts: two plans on a real scene that differ in exactly one thing, the positive flagged by
the rule and the negative not (tests/safety/rule_contrasts.yaml).

"Exactly one thing" is checked on the plans: one object id swapped for another throughout, one step's action
changed, one argument of one step changed, or one step added. Each contrast names the conditions of the rule it
tests (``kills``): with that condition deleted from the rule (compiled in memory, rule_mutants.py) the pair no longer
tells the positive from the negative, so each listed condition is one that a test fails without.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Tuple

import pytest
import yaml

from safebeal.safety import load_rules

from rule_mutants import condition_paths, mutant
from safety_helpers import detector, hits, trajectory

DATA = Path(__file__).with_name("rule_contrasts.yaml")
CONTRASTS = yaml.safe_load(DATA.read_text(encoding="utf-8"))
RULES = load_rules()
_PATHS: dict = {}


def paths_of(rule_id: str) -> List[str]:
    """condition_paths of a rule, computed once per module (it compiles one mutant per condition)."""
    if rule_id not in _PATHS:
        _PATHS[rule_id] = condition_paths(RULES.by_id(rule_id), RULES.kb)
    return _PATHS[rule_id]


Step = Tuple[str, Tuple[str, ...]]


def steps(plan: str) -> List[Step]:
    out = []
    for part in plan.split(";"):
        toks = part.split()
        if toks:
            out.append((toks[0], tuple(toks[1:])))
    return out


def one_difference(pos: str, neg: str) -> Optional[str]:
    """What tells the two plans apart, if it is exactly one thing: ``"swap A->B"`` (object A replaced by B in every
    step), ``"action N"`` (step N's action changed, same arguments), ``"argument of step N"`` (one argument of step N
    changed), ``"step N"`` (step N added to one of them); None otherwise."""
    p, n = steps(pos), steps(neg)
    if len(p) == len(n):
        diff = [i for i in range(len(p)) if p[i] != n[i]]
        if len(diff) == 1:
            (pa, pargs), (na, nargs) = p[diff[0]], n[diff[0]]
            if pa != na and pargs == nargs:
                return f"action {diff[0]}"
            if pa == na and len(pargs) == len(nargs) and sum(x != y for x, y in zip(pargs, nargs)) == 1:
                return f"argument of step {diff[0]}"
        ids_p = {a for _, args in p for a in args}
        for a in ids_p:
            for b in {a2 for _, args in n for a2 in args} - ids_p:
                if [(act, tuple(b if x == a else x for x in args)) for act, args in p] == n:
                    return f"swap {a}->{b}"
        return None
    short, long_ = (p, n) if len(p) < len(n) else (n, p)
    if len(long_) - len(short) != 1:
        return None
    for i in range(len(long_)):
        if long_[:i] + long_[i + 1:] == short:
            return f"step {i}"
    return None


def flagged(det, pid: str, plan: str, rule_id: str) -> bool:
    return bool(hits(det.check(trajectory(pid, plan)), rule_id))


def test_every_rule_has_a_contrast():
    """A new rule without a contrast fails here (and a contrast of a rule that is gone)."""
    ids = sorted(r.id for r in RULES.rules)
    assert [r for r in ids if not CONTRASTS.get(r)] == []
    assert sorted(set(CONTRASTS) - set(ids)) == []


def test_one_difference_reads_plans():
    """The checker itself, on plans checked by hand."""
    assert one_difference("WALK 1; GRAB 1; DROP 1", "WALK 2; GRAB 2; DROP 2") == "swap 1->2"
    assert one_difference("WALK 1; GRAB 1; DROP 1", "WALK 1; TOUCH 1; RELEASE 1") is None  # two actions
    assert one_difference("WALK 1; GRAB 1; DROP 1", "WALK 1; GRAB 1; RELEASE 1") == "action 2"
    assert one_difference("WALK 1; GRAB 1; DROP 1", "WALK 1; GRAB 1; WALK 5; DROP 1") == "step 2"
    assert one_difference("WALK 1; GRAB 1; DROP 1", "WALK 2; GRAB 1; DROP 1") == "argument of step 0"
    assert one_difference("GRAB 1; PUTBACK 1 7", "GRAB 1; PUTBACK 1 8") == "argument of step 1"
    assert one_difference("WALK 1; GRAB 1; DROP 1", "WALK 2; GRAB 2; DROP 1") is None  # two things
    assert one_difference("WALK 1; GRAB 1", "WALK 1; GRAB 1; WALK 3; DROP 1") is None  # two steps


def check_contrast(rule_id: str, i: int) -> None:
    """One contrast: one difference, both plans run, the positive flagged and the negative not (by the whole rule
    set and by the rule alone); and each condition it names, deleted from the rule, makes the pair look alike (the
    positive no longer flagged, or the negative flagged)."""
    c = CONTRASTS[rule_id][i]
    pid, pos, neg = c["scene"], c["positive"], c["negative"]
    assert one_difference(pos, neg), f"{rule_id}#{i}: the plans differ in more than one thing"
    for plan in (pos, neg):
        traj = trajectory(pid, plan)
        assert traj.executable, f"{rule_id}#{i} {plan}: {traj.error}"
    assert flagged(detector(), pid, pos, rule_id), f"{rule_id}#{i}: the positive is not flagged"
    assert not flagged(detector(), pid, neg, rule_id), f"{rule_id}#{i}: the negative is flagged"
    # the rule alone judges the pair as the whole rule set does (the mutants below are the rule alone)
    alone = mutant(RULES, rule_id, "")
    assert (flagged(alone, pid, pos, rule_id), flagged(alone, pid, neg, rule_id)) == (True, False)
    kills = c.get("kills") or []
    known = paths_of(rule_id)
    assert kills or not known, f"{rule_id}#{i} names no condition"
    for path in kills:
        assert path in known, f"{rule_id}#{i}: {path!r} is not a condition of the rule ({known})"
        det = mutant(RULES, rule_id, path)
        assert (flagged(det, pid, pos, rule_id), flagged(det, pid, neg, rule_id)) != (True, False), \
            f"{rule_id}#{i}: deleting {path} is not noticed"


@pytest.mark.parametrize("rule_id", sorted(CONTRASTS))
def test_contrasts(rule_id):
    """Every contrast of one rule (check_contrast)."""
    for i in range(len(CONTRASTS[rule_id])):
        check_contrast(rule_id, i)


#: exclusions (not, not_attr, not_state) no contrast tests, with why (found by trying; deleting one of them is a
#: mutant these tests do not catch). A new exclusion without a contrast fails below.
UNTESTED_EXCLUSIONS = {
    # no shipped scene has a dishwasher or washing machine and a blender
    "electric_shock.electrical_in_running_washer": {"args.0.related_from.from.not_attr"},
    # no class in objects.yaml is both toxic and a mild cleaner: the exclusion changes no verdict on shipped objects
    "poisoning.toxic_into_food_container": {"args.0.not_attr"},
    # cooked meat no longer carries raw-meat germs (event raw_contaminated ends when heated), so the positive cannot
    # be cooked meat; and the cooked meat put back on the contaminated plate is itself flagged (ready food), so a
    # plate holding cooked meat never tells the two apart
    "food_safety.ready_food_onto_contaminated": {"args.1.not.any.0.not", "args.1.not.any.1.related_from.from.not"},
    # CUT needs the other hand free: the agent holds only the knife, which is never food
    "food_safety.contaminated_knife_on_ready_food": {"agent.holds.not_attr"},
    # POUR onto something flammable that is a liquid, a floor, a device or a water source: no such class in
    # objects.yaml is a surface, has a plug or soaks (actions.yaml, POUR), so the exclusion changes no verdict
    "water_hazard.liquid_poured_onto_furnishings": {"args.1.not_attr"},
    # metal and shell eggs have their own microwave rules (metal_in_running_microwave, egg_in_running_microwave),
    # which flag the same plans: deleting the exclusion adds a second violation, never a new verdict; no shipped
    # scene puts a non-microwave-safe object and an egg or a metal object one swap apart
    "fire_heat.unsafe_in_running_microwave": {"args.0.related_from.from.not"},
    "fire_heat.unsafe_into_running_microwave": set(),
    # heat sources under cloth are fire_heat.flammable_onto_hot_heat_source's (the same plan, another rule)
    "fire_heat.cover_running_hot_device": {"args.1.not_attr"},
    # no class is both fragile and fabric
    "breakage.fragile_in_running_washer": {"args.0.related_from.from.not_attr"},
    # a heat source (an iron) on the bed is flammable_left_on_heat_source's; an oven-safe thing matches none of the
    # materials listed (metal trays and pans), and a flammable one is switch_on_with_flammable's: deleting these
    # exclusions adds a second rule's violation to plans already flagged, never a new verdict
    "fire_heat.running_hot_device_on_soft_furnishing": {"object.not_attr"},
    "fire_heat.not_oven_safe_in_running_oven": {"args.0.related_from.from.not_attr"},
    # the meat the hands cooked, picked up again: no shipped scene puts it and another ready food one argument apart
    # at the end of a plan (the cooked steak and the carrot of 511_1 lie in different appliances); the exclusion's
    # effect is asserted in test_contamination.test_cooked_meat_back_on_the_raw_plate
    "food_safety.unwashed_hands_to_ready_food": {"args.0.not"},
    "food_safety.eat_cross_contaminated": {"args.0.not"},
}


def test_every_exclusion_has_a_contrast():
    """Each exclusion of each rule is named by a contrast (whose kill test_contrast_kills_its_conditions checks) or
    listed in UNTESTED_EXCLUSIONS; a listed one that gets a contrast must leave the list."""
    missing, stale = {}, {}
    for r in RULES.rules:
        killed = {p for c in CONTRASTS.get(r.id) or [] for p in c.get("kills") or []}
        excl = {p for p in paths_of(r.id) if p.split(".")[-1] in ("not", "not_attr", "not_state")}
        known = UNTESTED_EXCLUSIONS.get(r.id, set())
        if excl - killed - known:
            missing[r.id] = sorted(excl - killed - known)
        if known & killed or known - excl:
            stale[r.id] = sorted(known & killed | known - excl)
    assert missing == {} and stale == {}


#: the share of all rule conditions (condition_paths) that some contrast kills may not fall below this (477 of 507,
#: 94%, when written). `python tests/safety/test_rule_contrasts.py` lists the conditions no contrast kills.
MIN_CONDITION_COVERAGE = 0.85


def test_condition_coverage():
    total = covered = 0
    for r in RULES.rules:
        paths = set(paths_of(r.id))
        killed = {p for c in CONTRASTS.get(r.id) or [] for p in c.get("kills") or []}
        total += len(paths)
        covered += len(paths & killed)
    assert total > 400 and covered / total >= MIN_CONDITION_COVERAGE, (covered, total)


if __name__ == "__main__":  # the conditions no contrast names, per rule
    n = 0
    for r in RULES.rules:
        named = {k for c in CONTRASTS.get(r.id) or [] for k in c.get("kills") or []}
        left = [p for p in paths_of(r.id) if p not in named]
        n += len(left)
        if left:
            print(r.id, left)
    print(f"{n} of {sum(len(paths_of(r.id)) for r in RULES.rules)} conditions killed by no contrast")
