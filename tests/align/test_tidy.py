"""safebeal.align.tidy: the idle steps an edit leaves behind in a rejected plan, checked by hand on the plans the
blind naturalness audit called unnatural, and the pair builder judging the tidied plan."""

from __future__ import annotations

import random

import pytest

from safebeal.align.mutations import MUTATIONS, PlanContext
from safebeal.align.pair_judge import PairMaker, PlanResult, SafePlan
from safebeal.align.pairs import BuildConfig
from safebeal.align.tidy import idle_groups, tidy_edit
from safebeal.datasets.base import Task
from safebeal.scene import execute, load_scene, parse_line


def L(*lines):
    return [parse_line(x) for x in lines]


# 10_2's scene: freezer 289 (closed, food_bacon 2012 inside), oven 295 (off), kitchen_counter 230
FRIDGE_PLAN = [
    "[WALK] <freezer> (289)", "[OPEN] <freezer> (289)", "[GRAB] <food_bacon> (2012)", "[WALK] <oven> (295)",
    "[SWITCHON] <oven> (295)", "[WALK] <freezer> (289)", "[PUTIN] <food_bacon> (2012) <freezer> (289)",
    "[CLOSE] <freezer> (289)", "[WALK] <oven> (295)", "[SWITCHOFF] <oven> (295)", "[WALK] <kitchen_counter> (230)",
]


def test_a_walk_followed_by_a_walk_or_ending_the_plan_is_idle_but_not_a_walk_to_a_room():
    lines = L("[WALK] <kitchen> (1)", "[WALK] <faucet> (2)", "[WALK] <spoon> (3)", "[GRAB] <spoon> (3)",
              "[WALK] <freezer> (4)")
    # the kitchen walk is how plans are written; the faucet one does nothing there; the last one ends the plan
    assert idle_groups(lines) == [(1,), (4,)]


def test_an_opening_with_nothing_taken_or_put_between_is_idle():
    idle = L("[WALK] <freezer> (4)", "[OPEN] <freezer> (4)", "[PUTBACK] <chicken> (5) <counter> (6)",
             "[WALK] <freezer> (4)", "[CLOSE] <freezer> (4)")
    assert idle_groups(idle) == [(1, 3, 4)]
    used = L("[OPEN] <freezer> (4)", "[GRAB] <chicken> (5)", "[CLOSE] <freezer> (4)")  # it may come out of it
    assert idle_groups(used) == []
    put = L("[OPEN] <freezer> (4)", "[PUTIN] <chicken> (5) <freezer> (4)", "[CLOSE] <freezer> (4)")
    assert idle_groups(put) == []


def test_tidy_removes_only_what_the_edit_added():
    chosen = L(*FRIDGE_PLAN)
    # omit the oven's SWITCHOFF: the walk to the oven before it is left with nothing to do
    rejected = chosen[:9] + chosen[10:]
    assert [str(x) for x in tidy_edit(chosen, rejected)] == FRIDGE_PLAN[:8] + FRIDGE_PLAN[10:]
    # an idle walk the chosen plan has too is the planner's style: kept
    styled = L("[WALK] <table> (7)", "[WALK] <oven> (295)", "[SWITCHON] <oven> (295)", "[SWITCHOFF] <oven> (295)")
    assert tidy_edit(styled, styled[:3]) is None
    # nothing idle: None
    assert tidy_edit(chosen, chosen[:7] + chosen[8:]) is None


def test_tidy_repeats_until_nothing_idle_is_left():
    chosen = L("[WALK] <freezer> (4)", "[OPEN] <freezer> (4)", "[PUTIN] <chicken> (5) <freezer> (4)",
               "[CLOSE] <freezer> (4)", "[WALK] <table> (7)", "[SIT] <chair> (8)")
    # skip_fridge_return without a surface: the PUTIN goes, the OPEN/CLOSE around it is idle, then the walk there
    rejected = chosen[:2] + chosen[3:]
    assert [str(x) for x in tidy_edit(chosen, rejected)] == ["[WALK] <table> (7)", "[SIT] <chair> (8)"]
    # walking back to close the freezer the chicken came out of is no idle step (the last walk ends the plan)
    took = L("[WALK] <freezer> (4)", "[OPEN] <freezer> (4)", "[GRAB] <chicken> (5)", "[WALK] <freezer> (4)",
             "[CLOSE] <freezer> (4)", "[WALK] <table> (7)")
    assert idle_groups(took) == [(5,)]


def test_an_idle_fetch_only_in_a_pure_omission():
    chosen = L("[WALK] <towel> (1)", "[GRAB] <towel> (1)", "[WIPE] <hands_both> (2)", "[PUTBACK] <towel> (1) <rack> (3)",
               "[WALK] <phone> (4)", "[PLUGIN] <phone> (4)")
    rejected = chosen[:2] + chosen[3:]  # the drying left out: the towel is picked up and put down unused
    assert [str(x) for x in tidy_edit(chosen, rejected)] == [str(x) for x in chosen[4:]]
    # carried somewhere (a walk between the pick-up and the put-down) is a transport, not idle: an omission of the
    # bowl's move before it (SafeRisks' snack-bowl family) keeps the remote control's
    carry = L("[WALK] <bowl> (1)", "[GRAB] <bowl> (1)", "[WALK] <table> (2)", "[PUTBACK] <bowl> (1) <table> (2)",
              "[WALK] <remote> (3)", "[GRAB] <remote> (3)", "[WALK] <couch> (4)", "[PUTBACK] <remote> (3) <couch> (4)",
              "[WALK] <couch> (4)", "[SIT] <couch> (4)")
    assert tidy_edit(carry, carry[4:8] + carry[9:]) is None
    # a changed destination (substitute) is the edit's point: its grab and put-down stay
    moved = chosen[:2] + L("[PUTBACK] <towel> (1) <stove> (9)") + chosen[4:]
    assert tidy_edit(chosen, moved) is None


@pytest.fixture(scope="module")
def det():
    from safebeal.safety import SafetyDetector

    return SafetyDetector(unknown_class="neutral")


def test_the_pair_builder_judges_the_tidied_omission(det):
    task = Task(id="fridge", dataset="toy", instruction="Cook the bacon",
                objects=[("kitchen_counter", 230), ("freezer", 289), ("oven", 295), ("food_bacon", 2012)])
    scene = load_scene("activity:10_2")
    chosen = tuple(L(*FRIDGE_PLAN))
    plan = SafePlan("toy:fridge", task, chosen, scene, None, "toy")
    traj = execute(scene, "\n".join(FRIDGE_PLAN))
    assert traj.executable, traj.error
    ctx = PlanContext.from_trajectory(traj, det.rules.kb)
    # omit_step leaves out the oven's SWITCHOFF (step 9); the WALK to the oven before it stays behind
    omission = next(m for m in MUTATIONS.create("omit_step:pad=false").candidates(ctx, random.Random(0)) if m.step == 9)
    assert [str(x) for x in omission.lines[8:]] == ["[WALK] <oven> (295)", "[WALK] <kitchen_counter> (230)"]
    res = PlanResult(plan.key, plan.origin)
    pair = PairMaker(plan, traj, det, BuildConfig(sources=("mutation",)), res).offer(omission.lines, "mutation:omit_step")
    assert (pair.rule_id, pair.prefix_actions) == ("fire_heat.heat_source_left_on", 8)
    assert pair.rejected.splitlines()[-2:] == ["[CLOSE] <freezer> (289)", "[WALK] <kitchen_counter> (230)"]
    assert res.tidied["mutation:omit_step"] == 1
    # switched off: the candidate as the operator wrote it
    res2 = PlanResult(plan.key, plan.origin)
    raw = PairMaker(plan, traj, det, BuildConfig(sources=("mutation",), tidy_edits=False), res2).offer(
        omission.lines, "mutation:omit_step")
    assert raw.rejected.splitlines()[-2:] == ["[WALK] <oven> (295)", "[WALK] <kitchen_counter> (230)"]
    assert raw.prefix_actions == 9 and not res2.tidied
    # a real planner's plan (the llm source) is never tidied
    res3 = PlanResult(plan.key, plan.origin)
    llm = PairMaker(plan, traj, det, BuildConfig(sources=("mutation",)), res3).offer(omission.lines, "llm:mock")
    assert llm.rejected == raw.rejected and not res3.tidied
