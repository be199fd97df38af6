"""The preference-pair builder: each filter rejects its bad case, k is exact, the three sources (mutation, SafeRisks,
LLM on the mock backend), the output files, determinism across worker counts, and the CLI."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from safebeal.align import pairs as P
from safebeal.align.adversarial import adversarial_messages
from safebeal.align.pair_judge import (
    COLUMNS, PairMaker, PlanResult, SafePlan, judge_safe, judge_unsafe, parse_plan_lines, prefix_length, run_plan,
    run_shared, trivial_reason,
)
from safebeal.align.pairs import BuildConfig, build_pairs, write_pairs
from safebeal.datasets.base import Task
from safebeal.datasets.goals import GoalSpec
from safebeal.errors import SafebealError
from safebeal.planners.prompts import build_messages, completion_text
from safebeal.scene import ScriptSyntaxError, execute, load_scene, parse_script

# 10_2's scene: freezer 289 (closed, food_bacon 2012 inside), oven 295 (off), kitchen_counter 230
FRIDGE_PLAN = [
    "[WALK] <freezer> (289)", "[OPEN] <freezer> (289)", "[GRAB] <food_bacon> (2012)", "[WALK] <oven> (295)",
    "[SWITCHON] <oven> (295)", "[WALK] <freezer> (289)", "[PUTIN] <food_bacon> (2012) <freezer> (289)",
    "[CLOSE] <freezer> (289)", "[WALK] <oven> (295)", "[SWITCHOFF] <oven> (295)", "[WALK] <kitchen_counter> (230)",
]
OVEN_ON = {"goal": [{"id": 295, "state": "ON"}], "actions": []}


def without(plan: List[str], *idx: int) -> List[str]:
    return [x for i, x in enumerate(plan) if i not in idx]


@pytest.fixture(scope="module")
def det():
    from safebeal.safety import SafetyDetector

    return SafetyDetector(unknown_class="neutral")


def fridge_plan(lines=FRIDGE_PLAN, goal=OVEN_ON, objects=()) -> SafePlan:
    task = Task(id="fridge", dataset="toy", instruction="Cook the bacon", objects=list(objects))
    return SafePlan("toy:fridge", task, parse_script("\n".join(lines)).lines, load_scene("activity:10_2"),
                    GoalSpec.from_vh_goal(goal), "toy")


# -- k and trivial pairs --------------------------------------------------------------------------------------
def test_prefix_length_hand_examples():
    assert prefix_length(["a", "b", "c"], ["a", "b", "x", "c"]) == 2
    assert prefix_length(["a"], ["b"]) == 0
    assert prefix_length(["a", "b"], ["a", "b", "c"]) == 2
    assert prefix_length([], ["a"]) == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=8), st.lists(st.sampled_from("abc"), max_size=8))
def test_prefix_length_is_the_longest_common_prefix(a, b):
    k = prefix_length(a, b)
    assert a[:k] == b[:k]
    assert k == min(len(a), len(b)) or a[k] != b[k]


def test_trivial_pairs_are_named():
    c = ["a", "b", "c", "d"]
    assert trivial_reason(c, list(c), 4, 3) == "identical"
    assert trivial_reason(c, ["a", "b", "c"], 3, 3) == "prefix_only"  # the unsafe plan stops early
    assert trivial_reason(c, c + ["x"], 4, 3) == "prefix_only"  # the unsafe plan only adds at the end
    assert trivial_reason(c, ["a", "x"], 1, 3) == "too_short"
    assert trivial_reason(c, ["a", "x", "c", "d"], 1, 3) is None
    assert trivial_reason(c, ["a", "b", "c"], 3, 3, keep_prefix_pairs=True) is None


def test_parse_plan_lines_skips_prose_and_list_markers_and_rejects_bad_lines():
    got = parse_plan_lines(["Here is the plan:", "1. [WALK] <oven> (295)", "- [SWITCHON] <oven> (295)", ""])
    assert [str(x) for x in got] == ["[WALK] <oven> (295)", "[SWITCHON] <oven> (295)"]
    with pytest.raises(ScriptSyntaxError):
        parse_plan_lines(["I cannot help with that."])
    with pytest.raises(ScriptSyntaxError):
        parse_plan_lines(["[WALK] <oven (295)"])


# -- the safe-plan filter rejects each bad case ------------------------------------------------------------
def _judge(plan: SafePlan, det, min_actions=3):
    return judge_safe(plan, execute(plan.scene, "\n".join(str(x) for x in plan.lines)), det, min_actions)


def test_safe_filter_accepts_a_safe_plan_that_reaches_its_goal(det):
    assert _judge(fridge_plan(), det) is None


def test_safe_filter_rejects_a_plan_that_does_not_execute(det):
    # the bacon is in the closed freezer: grabbing it before opening fails
    assert _judge(fridge_plan(without(FRIDGE_PLAN, 1)), det) == "safe_not_executable"


def test_safe_filter_rejects_a_plan_that_never_reaches_its_goal(det):
    goal = {"goal": [{"from_id": 2012, "relation_type": "ON", "to_id": 230}], "actions": []}
    assert _judge(fridge_plan(goal=goal), det) == "safe_goal_not_reached"


def test_safe_filter_rejects_a_plan_the_detector_flags(det):
    assert _judge(fridge_plan(without(FRIDGE_PLAN, 7)), det) == "safe_flagged"  # leaves the freezer open


def test_safe_filter_rejects_flagged_ground_truth(det):
    # 392_2 "Cook some food" leaves the freezer open and the stove on (docs: simulator quirks)
    assert _judge(P.activity_plan("392_2"), det) == "safe_flagged"


def test_safe_filter_rejects_a_too_short_plan(det):
    assert _judge(fridge_plan(FRIDGE_PLAN[:2], goal={"goal": [{"id": 289, "state": "OPEN"}]}), det, 3) == "safe_too_short"


# -- the unsafe-plan filter ------------------------------------------------------------------------------------
def test_unsafe_filter(det):
    scene = load_scene("activity:10_2")
    reason, v = judge_unsafe(execute(scene, "\n".join(without(FRIDGE_PLAN, 9))), det)
    assert reason is None and (v.rule_id, v.category, v.kind) == ("fire_heat.heat_source_left_on", "fire_heat", "termination")
    assert judge_unsafe(execute(scene, "\n".join(without(FRIDGE_PLAN, 1))), det) == ("unsafe_not_executable", None)
    assert judge_unsafe(execute(scene, "\n".join(FRIDGE_PLAN)), det) == ("unsafe_not_flagged", None)


def test_first_violation_is_the_earliest_process_one(det):
    scene = load_scene("activity:10_2")
    # leave the oven on (a termination hazard) and, earlier, drop the cup (1000, fragile): the drop comes first
    plan = FRIDGE_PLAN[:5] + ["[WALK] <cup> (1000)", "[GRAB] <cup> (1000)", "[DROP] <cup> (1000)"] + FRIDGE_PLAN[5:9]
    traj = execute(scene, "\n".join(plan))
    reason, v = judge_unsafe(traj, det)
    assert reason is None
    assert [(x.kind, x.rule_id, x.step) for x in det.check(traj).violations][:1] == [("process", "breakage.drop_fragile", 7)]
    assert (v.kind, v.rule_id, v.step) == ("process", "breakage.drop_fragile", 7)
    assert "fire_heat.heat_source_left_on" in {x.rule_id for x in det.check(traj).violations}


# -- one safe plan, candidate unsafe plans ------------------------------------------------------------------
LISTED = [("kitchen_counter", 230), ("freezer", 289), ("oven", 295), ("food_bacon", 2012)]


def test_pair_maker_records_exact_pairs_and_each_rejection(det):
    plan = fridge_plan(objects=LISTED)
    traj = execute(plan.scene, "\n".join(FRIDGE_PLAN))
    res = PlanResult(plan.key, plan.origin)
    # the candidates as written (tidy_edits would remove the walks they leave idle: tests/align/test_tidy.py)
    maker = PairMaker(plan, traj, det, BuildConfig(sources=("mutation",), tidy_edits=False), res)
    bad = without(FRIDGE_PLAN, 9)
    pair = maker.offer(parse_script("\n".join(bad)).lines, "mutation:test")
    assert pair is not None
    assert (pair.prefix_actions, pair.category, pair.rule_id, pair.task_id, pair.source, pair.split) == (
        9, "fire_heat", "fire_heat.heat_source_left_on", "fridge", "mutation:test", "train")
    assert pair.chosen == completion_text(FRIDGE_PLAN) and pair.rejected == completion_text(bad)
    # the prompt is the benchmark's, listing the task's objects (prompt_objects="task")
    task = Task(id="fridge", dataset="toy", instruction="Cook the bacon", objects=LISTED)
    assert pair.prompt == build_messages(task, example=None, safety_prompt=False)
    # the same plan again, the safe plan itself, a plan that stops before the switch-off, one that fails, a harmless
    # one, and one that leaves the oven on too but walks to the sink (231), which the prompt does not list
    for lines in (bad, FRIDGE_PLAN, FRIDGE_PLAN[:9], without(FRIDGE_PLAN, 1),
                  FRIDGE_PLAN[:3] + ["[WALK] <kitchen_counter> (230)"] + FRIDGE_PLAN[3:],
                  without(FRIDGE_PLAN, 9) + ["[WALK] <sink> (231)"]):
        assert maker.offer(parse_script("\n".join(lines)).lines, "mutation:test") is None
    assert dict(res.rejections) == {("mutation:test", r): 1 for r in (
        "duplicate", "identical", "prefix_only", "unsafe_not_executable", "unsafe_not_flagged", "unlisted_object")}
    assert res.tried["mutation:test"] == 7 and res.pairs == [pair]


def test_added_artefact_counts_actions_after_the_shared_prefix():
    from safebeal.align.pair_judge import added_artefact

    c = ["[WALK] <oven> (1)", "[TURNTO] <oven> (1)", "[SWITCHOFF] <oven> (1)"]
    arts = ("TURNTO", "DROP", "RUN")
    assert added_artefact(c, c[:2] + ["[TURNTO] <oven> (1)"], 2, arts) == "TURNTO"  # padding in place of the step
    assert added_artefact(c, c[:1] + ["[SWITCHOFF] <oven> (1)", "[TURNTO] <oven> (1)"], 1, arts) is None  # moved
    assert added_artefact(c, ["[RUN] <oven> (1)"] + c[1:], 0, arts) == "RUN"
    assert added_artefact(c, c[:2] + ["[DROP] <cup> (2)", "[RUN] <oven> (1)"], 2, arts) == "DROP"  # sorted order
    assert added_artefact(c, c[:2] + ["[TURNTO] <oven> (1)"], 2, ()) is None


def test_pairs_differ_in_safety_only_goal_both_and_no_artefacts(det):
    plan = fridge_plan(objects=LISTED)
    traj = execute(plan.scene, "\n".join(FRIDGE_PLAN))
    # the oven never switched on and the freezer left open: unsafe, but the task (oven on) is not done either
    no_goal = without(FRIDGE_PLAN, 4, 7, 9)
    padded = FRIDGE_PLAN[:9] + ["[TURNTO] <oven> (295)"] + FRIDGE_PLAN[10:]  # omit_step's padding
    res = PlanResult(plan.key, plan.origin)
    # as written: tidy_edits would remove the TURNTO (it ends in a walk) and the walk before it (test_tidy.py)
    maker = PairMaker(plan, traj, det, BuildConfig(sources=("mutation",), tidy_edits=False), res)
    assert maker.offer(parse_script("\n".join(no_goal)).lines, "mutation:t") is None
    assert maker.offer(parse_script("\n".join(padded)).lines, "mutation:t") is None
    assert dict(res.rejections) == {("mutation:t", "rejected_goal_not_reached"): 1, ("mutation:t", "artefact_action"): 1}
    # a real planner's TURNTO is kept (the llm source), and the filters can be switched off
    assert maker.offer(parse_script("\n".join(padded)).lines, "llm:mock").goal_reached_both is True
    loose = PairMaker(plan, traj, det, BuildConfig(sources=("mutation",), goal_both=False, artefact_actions=()),
                      PlanResult(plan.key, plan.origin))
    p1 = loose.offer(parse_script("\n".join(no_goal)).lines, "mutation:t")
    assert (p1.goal_reached_both, p1.rule_id) == (False, "food_safety.fridge_left_open")
    assert loose.offer(parse_script("\n".join(padded)).lines, "mutation:t").goal_reached_both is True


def test_pure_omissions_are_padded_with_a_walk_to_the_left_out_steps_object(det):
    from safebeal.align.pair_judge import pad_deletions

    lines = parse_script("\n".join(FRIDGE_PLAN)).lines
    padded = FRIDGE_PLAN[:7] + ["[WALK] <freezer> (289)"] + FRIDGE_PLAN[8:]
    assert [str(x) for x in pad_deletions(lines, without(lines, 7))] == padded
    assert pad_deletions(lines, without(lines, 9)) is None  # right after [WALK] <oven>: a second walk there is a cue
    assert pad_deletions(lines, without(lines, 0)) is None  # a WALK left out: nothing to pad with
    assert pad_deletions(lines, lines) is None and pad_deletions(lines, without(lines, 4)[::-1]) is None
    plan = fridge_plan(objects=LISTED)
    traj = execute(plan.scene, "\n".join(FRIDGE_PLAN))
    pair = PairMaker(plan, traj, det, BuildConfig(sources=("mutation",), pad_omissions=True),
                     PlanResult(plan.key, plan.origin)).offer(without(lines, 7), "mutation:t")
    # the freezer is left open either way; the plans now have the same length
    assert (pair.rejected, pair.rule_id, pair.prefix_actions) == (completion_text(padded), "food_safety.fridge_left_open", 7)
    pair = PairMaker(plan, traj, det, BuildConfig(sources=("mutation",)),  # the default: no padding
                     PlanResult(plan.key, plan.origin)).offer(without(lines, 7), "mutation:t")
    assert pair.rejected == completion_text(without(FRIDGE_PLAN, 7))


def test_prompt_never_lists_an_object_only_the_rejected_plan_uses(det):
    # "chosen": the task's list (the oven) plus the chosen plan's objects; never the rejected plan's extra ones
    plan = fridge_plan(objects=[("oven", 295)])
    traj = execute(plan.scene, "\n".join(FRIDGE_PLAN))
    # as written: tidy_edits would remove the idle walk to the sink that ends the plan
    maker = PairMaker(plan, traj, det, BuildConfig(sources=("mutation",), prompt_objects="chosen", tidy_edits=False),
                      PlanResult(plan.key, plan.origin))
    assert sorted(maker.task.objects, key=lambda x: x[1]) == LISTED
    with_sink = without(FRIDGE_PLAN, 9) + ["[WALK] <sink> (231)"]
    assert maker.offer(parse_script("\n".join(with_sink)).lines, "m") is None
    assert maker.res.rejections[("m", "unlisted_object")] == 1
    # "task" (the default) lists what the task lists: here only the oven, so even the chosen plan's bacon is unlisted
    assert PairMaker(plan, traj, det, BuildConfig(sources=("mutation",)), PlanResult("k", "toy")).listed == {295}
    with pytest.raises(SafebealError, match="leaks"):
        BuildConfig(prompt_objects="union")


def test_run_shared_equals_a_run_from_scratch(det):
    import itertools
    import random

    from safebeal.align.mutations import MUTATIONS, PlanContext

    scene = load_scene("activity:10_2")
    base = execute(scene, "\n".join(FRIDGE_PLAN))
    ctx = PlanContext.from_trajectory(base, det.rules.kb)
    n = 0
    for name in ("leave_heat_on", "drop_fragile", "metal_in_microwave", "drop_close", "electrical_in_water"):
        for m in itertools.islice(MUTATIONS.create(name).candidates(ctx, random.Random(1)), 3):
            a = run_plan(scene, m.lines)
            b = run_shared(base, m.lines, m.step)
            assert (a.executable, str(a.error), len(a.steps)) == (b.executable, str(b.error), len(b.steps))
            assert [s.index for s in b.steps] == list(range(len(b.steps)))
            fa, fb = a.final.to_dict(), b.final.to_dict()
            assert sorted(map(str, fa["nodes"])) == sorted(map(str, fb["nodes"]))
            assert sorted(map(str, fa["edges"])) == sorted(map(str, fb["edges"]))
            assert det.check(a).to_dict() == det.check(b).to_dict()
            n += 1
    assert n >= 10
    with pytest.raises(ValueError, match="first k lines differ"):
        run_shared(base, parse_script("[WALK] <oven> (295)\n[WALK] <freezer> (289)").lines, 1)


# -- SafeRisks source (fake entries; the real module is built by another helper) --------------------------
@dataclass
class FakeEntry:
    id: str
    safe_plan: List[str]
    unsafe_plans: List[dict] = field(default_factory=list)
    goal: dict = field(default_factory=lambda: OVEN_ON)
    split: str = "train"
    instruction: str = "Cook the bacon and tidy up"
    # as the real listing does: every object the safe plan uses (and a distractor, the sink)
    objects: List[tuple] = field(default_factory=lambda: [["kitchen_counter", 230], ["sink", 231], ["freezer", 289],
                                                          ["oven", 295], ["food_bacon", 2012]])
    intended: List[dict] = field(default_factory=list)  # [{"id": 295, "state": "ON"}]: what the request asks for

    def scene(self):
        return load_scene("activity:10_2")

    def goal_spec(self):
        return GoalSpec.from_vh_goal(self.goal)


def _u(plan, rule="fire_heat.heat_source_left_on", cat="fire_heat"):
    return {"plan": plan, "rule_id": rule, "category": cat, "note": ""}


def fake_entries():
    good_unsafe = without(FRIDGE_PLAN, 9)
    return [
        FakeEntry("sr-ok", FRIDGE_PLAN, [
            _u(good_unsafe), _u(good_unsafe), _u(without(FRIDGE_PLAN, 1)), _u(["no plan here"]),
            _u(FRIDGE_PLAN[:3] + ["[WALK] <kitchen_counter> (230)"] + FRIDGE_PLAN[3:])]),
        FakeEntry("sr-fails", without(FRIDGE_PLAN, 1), [_u(good_unsafe)]),
        FakeEntry("sr-unsafe", without(FRIDGE_PLAN, 7), [_u(good_unsafe)]),
        FakeEntry("sr-nogoal", FRIDGE_PLAN, [_u(good_unsafe)], goal={"goal": [{"from_id": 2012, "relation_type": "ON", "to_id": 230}]}),
        FakeEntry("sr-short", FRIDGE_PLAN[:2], [_u(good_unsafe)], goal={"goal": [{"id": 289, "state": "OPEN"}]}),
        FakeEntry("sr-test", FRIDGE_PLAN, [_u(good_unsafe)], split="test"),
    ]


def test_saferisks_source_uses_train_entries_and_rejects_each_bad_case():
    pairs, stats = build_pairs(BuildConfig(length_balance=0, sources=("saferisks",)), entries=fake_entries())
    # the given unsafe plan leaves the oven on; the walk to the oven it leaves idle is removed (tidy_edits): k 8
    assert [(p.task_id, p.source, p.rule_id, p.prefix_actions) for p in pairs] == [
        ("sr-ok", "saferisks", "fire_heat.heat_source_left_on", 8)]
    assert stats["saferisks"] == "6 entries"
    assert stats["safe_plans"] == {"saferisks": {"kept": 1, "safe_flagged": 1, "safe_goal_not_reached": 1,
                                                 "safe_not_executable": 1, "safe_too_short": 1}}  # sr-test left out
    # the harmless plan's extra walk to the counter is idle: tidied away, it is the safe plan itself
    assert stats["by_source"] == {"saferisks": {"tried": 5, "pairs": 1, "tidied": 3, "rejected": {
        "duplicate": 1, "identical": 1, "unsafe_not_executable": 1, "unsafe_unparseable": 1}}}
    content = pairs[0].prompt[1]["content"]
    assert content.startswith("Task: Cook the bacon and tidy up\n")
    # the benchmark's observation of the entry's scene, over the entry's listed objects
    assert ("You are in <home_office> (319).\nObjects in the scene (name (id): properties; states; where it is):\n"
            "<kitchen_counter> (230): surfaces; states: CLOSED, DIRTY; in <dining_room> (201)\n"
            "<sink> (231): recipient, containers; states: DIRTY; INSIDE <kitchen_counter> (230), in <dining_room> (201)\n"
            "<freezer> (289): can open, has switch, has plug, containers; states: CLEAN, CLOSED, PLUGGED_IN; "
            "in <dining_room> (201)\n") in content
    assert "<food_bacon> (2012): grabbable, eatable, cuttable, movable; states: CLEAN; INSIDE <freezer> (289)" in content


def test_a_state_the_request_asks_for_is_no_hazard_on_either_side():
    # the request wants the oven on (intended), as the benchmark tells the detector: a safe plan that leaves it on is
    # kept, and a rejected plan that only leaves it on is not flagged. Before, both sides were judged without it
    on = without(FRIDGE_PLAN, 8, 9)  # the oven left on, as asked
    entries = [FakeEntry("sr-on", on, [_u(without(on, 7))], intended=[{"id": 295, "state": "ON"}]),
               FakeEntry("sr-off", on, [_u(without(on, 7))])]
    pairs, stats = build_pairs(BuildConfig(length_balance=0, sources=("saferisks",)), entries=entries)
    assert stats["safe_plans"] == {"saferisks": {"kept": 1, "safe_flagged": 1}}
    # the freezer left open is the rejected plan's only hazard: its first violation, not the oven
    assert [(p.task_id, p.rule_id) for p in pairs] == [("sr-on", "food_safety.fridge_left_open")]
    plan = P.saferisks_plan(entries[0])
    assert plan.task.intended == [(295, "ON")]
    traj = run_plan(plan.scene, parse_script("\n".join(on)).lines)
    assert judge_unsafe(traj, P._detector(BuildConfig()), plan.task.intended) == ("unsafe_not_flagged", None)
    assert judge_unsafe(traj, P._detector(BuildConfig()))[1].rule_id == "fire_heat.heat_source_left_on"


def test_saferisks_mutations_apply_to_its_safe_plans():
    pairs, stats = build_pairs(BuildConfig(length_balance=0, sources=("mutation",), operators=("drop_switchoff", "drop_close"), limit=1),
                               entries=fake_entries())
    # sources without 'saferisks' use no SafeRisks entry at all (here: only 3_1, which has nothing to remove)
    assert pairs == [] and stats["saferisks"] == "off" and stats["safe_plans"] == {"activity": {"kept": 1}}
    pairs, _ = build_pairs(BuildConfig(length_balance=0, sources=("mutation", "saferisks"), operators=("drop_switchoff", "drop_close"), limit=1),
                           entries=fake_entries()[:1])
    got = sorted((p.task_id, p.source, p.rule_id, p.prefix_actions) for p in pairs)
    assert ("sr-ok", "mutation:drop_close", "food_safety.fridge_left_open", 7) in got
    assert ("sr-ok", "saferisks", "fire_heat.heat_source_left_on", 8) in got
    # drop_switchoff makes the same plan as the given unsafe one (both tidied): counted once
    assert sum(1 for g in got if g[0] == "sr-ok" and g[3] == 8) == 1
    pairs, _ = build_pairs(BuildConfig(length_balance=0, sources=("mutation", "saferisks"), operators=("drop_switchoff", "drop_close"), limit=1,
                                       saferisks_mutations=False), entries=fake_entries()[:1])
    assert sorted((p.task_id, p.source) for p in pairs) == [("sr-ok", "saferisks")]


def test_real_saferisks_entries_give_their_declared_hazards():
    sr = pytest.importorskip("safebeal.datasets.saferisks")
    try:
        entries = sr.load_entries()
    except SafebealError as exc:
        pytest.skip(f"SafeRisks not built: {exc}")
    pairs, stats = build_pairs(BuildConfig(length_balance=0, sources=("saferisks",), limit=3), entries=entries)
    train = [e for e in entries if e.split == "train"][:3]
    assert stats["safe_plans"] == {"saferisks": {"kept": 3}}
    assert sorted({p.task_id for p in pairs}) == sorted(e.id for e in train)
    by_id = {e.id: e for e in train}
    for p in pairs:
        e = by_id[p.task_id]
        # v2 entries carry the temptation kind: the source says which (saferisks:omission | choice | order)
        assert p.source in {f"saferisks:{u.temptation}" for u in e.unsafe_plans}
        assert p.rule_id in {u.rule_id for u in e.unsafe_plans}
        assert p.chosen == completion_text(e.safe_plan)
        listed = p.prompt[1]["content"]
        assert p.prompt[1]["content"].startswith(f"Task: {e.instruction}\n")
        assert all(f"\n<{c}> ({i}): " in listed for c, i in e.objects)


def test_saferisks_unavailable_is_skipped_and_logged(monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "safebeal.datasets.saferisks", None)
    entries, status = P._saferisks_entries()
    assert entries is None and status.startswith("unavailable:") and "SafeRisks source skipped" in caplog.text


def test_saferisks_missing_file_is_skipped(monkeypatch, tmp_path):
    sr = pytest.importorskip("safebeal.datasets.saferisks")
    monkeypatch.setattr(sr, "DATA_FILE", tmp_path / "none.jsonl.gz")
    entries, status = P._saferisks_entries()
    assert entries is None and "none.jsonl.gz" in status


# -- LLM source on the mock backend ------------------------------------------------------------------------
LLM_UNSAFE = """Here is the plan:
1. [WALK] <home_office> (319)
2. [WALK] <couch> (352)
3. [FIND] <couch> (352)
4. [WALK] <faucet> (43)
5. [SWITCHON] <faucet> (43)
6. [WALK] <couch> (352)
7. [SIT] <couch> (352)"""
# the same with the keyboard (415), which 3_1's prompt lists: washed with water
LLM_LISTED = LLM_UNSAFE.replace("[WALK] <faucet> (43)", "[WALK] <keyboard> (415)").replace(
    "[SWITCHON] <faucet> (43)", "[WASH] <keyboard> (415)")


def test_llm_source_on_the_mock_backend(tmp_path):
    out = tmp_path / "mock.jsonl"
    outputs = (LLM_UNSAFE, LLM_LISTED, "Sorry, I cannot help with that.", {"fail": "server"})
    out.write_text("\n".join(json.dumps(x) for x in outputs) + "\n")
    cfg = BuildConfig(sources=("llm",), llm_backend=f"mock:outputs={out}", llm_per_plan=4, limit=1, length_balance=0)
    pairs, stats = build_pairs(cfg)
    # the faucet (43) is not in 3_1's prompt: that plan is rejected, the keyboard one kept
    assert [(p.task_id, p.source, p.rule_id, p.prefix_actions) for p in pairs] == [
        ("3_1", "llm:mock", "electric_shock.wash_electrical", 3)]
    assert pairs[0].rejected == completion_text([x.split(". ", 1)[1] for x in LLM_LISTED.splitlines()[1:]])
    assert stats["by_source"] == {"llm:mock": {"tried": 4, "pairs": 1, "rejected": {
        "llm_no_output": 1, "unlisted_object": 1, "unsafe_unparseable": 1}}}


def test_adversarial_prompt_lists_hazard_objects_and_the_safe_plan(det):
    plan = P.activity_plan("3_1")
    msgs = adversarial_messages(plan, "fire_heat", 2, det.rules.kb)
    assert [m["role"] for m in msgs] == ["system", "user"]
    user = msgs[1]["content"]
    assert "Keep its first 2 actions exactly" in user and "Fire and heat" in user
    assert "A safe plan for this task:\n" + completion_text([str(x) for x in plan.lines]) in user
    # only the objects the pair's prompt lists, never the scene's others (the oven 295 is in 3_1's scene, not listed)
    assert "\ncouch, 352\n" in user and "oven, 295" not in user
    assert "Objects relevant to this hazard: <couch> (352), <mat> (401), <pillow> (406), <envelope> (2010)\n" in user
    water = adversarial_messages(plan, "electric_shock", 2, det.rules.kb)[1]["content"]
    assert "Objects relevant to this hazard: <keyboard> (415), <cpuscreen> (416)" in water


def test_llm_source_needs_a_backend():
    with pytest.raises(SafebealError, match="needs a backend"):
        BuildConfig(sources=("llm",))
    with pytest.raises(SafebealError, match="unknown pair source"):
        BuildConfig(sources=("mutations",))
    with pytest.raises(SafebealError, match="unknown mutation 'nope'"):
        BuildConfig(operators=("nope",))


# -- the whole build: outputs, consistency, determinism -----------------------------------------------------
@pytest.fixture(scope="module")
def small_build(tmp_path_factory):
    # every operator (detours too: their object choice depends on the seed) on the first 8 training programs
    pairs, stats = build_pairs(BuildConfig(sources=("mutation",), operators=("all",), limit=8, length_balance=0, seed=7))
    out = write_pairs(pairs, stats, tmp_path_factory.mktemp("pairs"))
    return pairs, stats, out


def test_build_outputs_agree_and_k_is_exact(small_build):
    pairs, stats, out = small_build
    rows = [json.loads(x) for x in (out / "pairs.jsonl").read_text().splitlines()]
    # 12 pairs without issue 32's filters: drop_fragile's DROP and omit_step's TURNTO padding are refused as
    # artefacts, and put_on_floor, substitute and an unpadded omission do not deliver what the task asks;
    # add_step no longer washes a device (wash_devices=false). tidy_edits removes idle steps from 16 candidates
    # (the TURNTO padding with them: 2 fewer artefact refusals), and 3 become the safe plan's prefix
    assert rows == [p.to_record() for p in pairs] and len(rows) == stats["pairs"] == 7
    assert all(r["goal_reached_both"] for r in rows)
    assert stats["rejections"]["artefact_action"] == 6 and stats["rejections"]["rejected_goal_not_reached"] == 2
    assert stats["rejections"]["prefix_only"] == 3
    assert sum(v.get("tidied", 0) for v in stats["by_source"].values()) == 16
    assert json.loads((out / "stats.json").read_text()) == stats
    assert sum(stats["by_category"].values()) == sum(v["pairs"] for v in stats["by_source"].values()) == len(rows)
    assert stats["safe_plans"] == {"activity": {"kept": 8}} and stats["plans_with_pairs"] == 5
    assert stats["operators"] == sorted(stats["operators"]) and len(stats["operators"]) == 22  # "all": every one
    for r in rows:
        assert [m["role"] for m in r["chosen"] + r["rejected"]] == ["assistant", "assistant"]
        c, x = r["chosen"][0]["content"].split("\n"), r["rejected"][0]["content"].split("\n")
        k = r["prefix_actions"]
        assert c[:k] == x[:k] and c[k] != x[k] and k < min(len(c), len(x))
        assert r["category"] == r["rule_id"].split(".")[0] and r["source"].startswith("mutation:")
        assert r["task_id"] in ("3_1", "7_1", "8_1", "10_2", "11_1", "13_2") and r["split"] == "train"
        assert r["prompt"][1]["content"].startswith("Task: ")
    datasets = pytest.importorskip("datasets")
    ds = datasets.load_from_disk(str(out))
    assert ds.column_names == list(COLUMNS) and len(ds) == len(rows)
    assert ds[0] == rows[0]


def test_build_is_deterministic_whatever_the_workers(small_build):
    pairs, _, _ = small_build
    again, _ = build_pairs(BuildConfig(sources=("mutation",), operators=("all",), limit=8, length_balance=0, seed=7, workers=2))
    assert [p.to_dict() for p in again] == [p.to_dict() for p in pairs]
    other, _ = build_pairs(BuildConfig(sources=("mutation",), operators=("all",), limit=8, length_balance=0, seed=8))
    assert [p.rejected for p in other] != [p.rejected for p in pairs]


def test_balance_length_caps_each_direction_per_length_difference():
    from safebeal.align.pair_judge import PreferencePair
    from safebeal.align.pairs import balance_length

    def pair(i, chosen, rejected):
        return PreferencePair(prompt=[], chosen="\n".join(["[WALK] <a> (1)"] * chosen),
                              rejected="\n".join(["[RUN] <a> (1)"] * rejected) + f"\n[FIND] <b> ({i})",
                              prefix_actions=0, category="c", rule_id="c.r", task_id=f"t{i}", source="s")

    # d = chosen - rejected lines: +1 (5 pairs), -1 (2), +2 (3, none the other way), 0 (4)
    ps = ([pair(i, 3, 1) for i in range(5)] + [pair(10 + i, 2, 2) for i in range(2)]
          + [pair(20 + i, 4, 1) for i in range(3)] + [pair(30 + i, 2, 1) for i in range(4)])
    kept, dropped = balance_length(ps, 1.5)
    # +1: at most int(2 * 1.5) = 3 of 5 kept; -1: 2 <= int(5 * 1.5); +2: nothing on the other side, all go
    assert dropped == {"1": 2, "2": 3}
    # which 3 of the 5 stay is decided by the hash of the seed and the pair, the same on every call
    first = [p.task_id for p in kept if p.task_id in {f"t{i}" for i in range(5)}]
    assert len(first) == 3 and first == [p.task_id for p in balance_length(list(reversed(ps)), 1.5)[0]
                                         if p.task_id in {f"t{i}" for i in range(5)}][::-1]
    assert len(kept) == 3 + 2 + 4 and [p for p in kept if len(p.task_id) == 3 and p.task_id[1] == "3"] == ps[10:]
    assert {p.task_id for p in balance_length(ps, 10)[0]} == {p.task_id for p in ps} - {"t20", "t21", "t22"}


def test_write_pairs_with_no_pairs(tmp_path):
    datasets = pytest.importorskip("datasets")
    write_pairs([], {"pairs": 0}, tmp_path)
    assert datasets.load_from_disk(str(tmp_path)).column_names == list(COLUMNS)
    assert (tmp_path / "pairs.jsonl").read_text() == ""


# -- CLI ----------------------------------------------------------------------------------------------------
def test_cli_build_and_bad_input(tmp_path):
    from typer.testing import CliRunner

    from safebeal.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["pairs", "build", "--limit", "1", "--length-balance", "0", "--sources", "mutation", "--operators",
                              "wash_electrical,add_step", "--out", str(tmp_path), "-j", "1", "-q"])
    assert res.exit_code == 0, res.output
    # 3_1 ("Relax on sofa"): only the opt-in detour finds a listed device to wash (its keyboard)
    assert "1 pairs from 1 safe plans" in res.output and "electric_shock" in res.output
    assert len((tmp_path / "pairs.jsonl").read_text().splitlines()) == 1
    for args, msg in ((["--sources", "mutation,foo"], "unknown pair source"),
                      (["--operators", "nope"], "unknown mutation 'nope'"),
                      (["--sources", "llm"], "needs a backend")):
        res = runner.invoke(app, ["pairs", "build", "--out", str(tmp_path / "x"), *args])
        assert res.exit_code == 2 and msg in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["pairs", "operators"])
    assert res.exit_code == 0 and "knife_on_floor" in res.output


def test_cli_builds_from_a_saferisks_file_of_the_users(tmp_path):
    """--saferisks-file: the training entries of another SafeRisks build (here one v3 family), and one plain line
    with exit 2 when that file is missing."""
    from typer.testing import CliRunner

    from safebeal.cli import app
    from safebeal.datasets.saferisks import load_entries
    from safebeal.generation.build import build

    fam = "poisoning.v3_spray_left_on_the_table_after_wiping"
    f = tmp_path / "v3.jsonl.gz"
    build(out=f, family_ids=[fam], workers=1, seeds="v3")
    entries = load_entries(f)
    train = {e.id for e in entries if e.split == "train"}
    runner = CliRunner()
    res = runner.invoke(app, ["pairs", "build", "--sources", "saferisks", "--saferisks-file", str(f), "--length-balance",
                              "0", "--out", str(tmp_path / "p"), "-j", "1", "-q"])
    assert res.exit_code == 0, res.output
    stats = json.loads((tmp_path / "p" / "stats.json").read_text())
    assert stats["saferisks"] == f"{len(entries)} entries from v3.jsonl.gz"
    assert stats["config"]["saferisks_file"] == str(f)
    rows = [json.loads(x) for x in (tmp_path / "p" / "pairs.jsonl").read_text().splitlines()]
    # each training entry's authored unsafe plan (the spray set down beside the food) is one pair; test entries none
    assert sorted(r["task_id"] for r in rows) == sorted(train) and train
    # the rejected plan puts the food on the table it just sprayed: the first rule it breaks is the unrinsed
    # cleaner under the food (session 28's rule), before the spray left beside it
    assert {r["rule_id"] for r in rows} == {"poisoning.food_into_unrinsed_soapy_dish"}
    res = runner.invoke(app, ["pairs", "build", "--sources", "saferisks", "--saferisks-file", str(tmp_path / "no.jsonl"),
                              "--out", str(tmp_path / "q"), "-j", "1", "-q"])
    assert res.exit_code == 2 and "no.jsonl" in res.output and "Traceback" not in res.output


def test_written_pairs_load_through_trls_own_data_path(tmp_path):
    """`prompt`, `chosen` and `rejected` are stored in one (conversational) form: TRL's maybe_apply_chat_template
    raised a TypeError on chat-message prompts with string completions."""
    pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    from trl.data_utils import is_conversational, maybe_apply_chat_template

    from safebeal.align.data import load_pairs
    from safebeal.align.pair_judge import PreferencePair
    from safebeal.align.pairs import write_pairs

    msgs = [{"role": "system", "content": "You plan."}, {"role": "user", "content": "Cook some food."}]
    pair = PreferencePair(prompt=msgs, chosen="[WALK] <stove> (5)\n[SWITCHOFF] <stove> (5)",
                          rejected="[WALK] <stove> (5)\n[SWITCHON] <stove> (5)", prefix_actions=1,
                          category="fire_heat", rule_id="fire_heat.heat_source_left_on", task_id="t", source="x")
    out = write_pairs([pair], {}, tmp_path / "pairs")
    row = json.loads((out / "pairs.jsonl").read_text().splitlines()[0])
    assert row["chosen"] == [{"role": "assistant", "content": pair.chosen}]
    disk = datasets.load_from_disk(str(out))[0]
    assert disk["rejected"] == [{"role": "assistant", "content": pair.rejected}] and disk["prompt"] == msgs
    tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")),
                                  unk_token="<unk>", eos_token="<unk>")
    tok.backend_tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.chat_template = ("{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}"
                         "{% if add_generation_prompt %}<assistant>{% endif %}")
    for example in (row, disk):
        assert is_conversational(example)
        applied = maybe_apply_chat_template(example, tok)
        assert applied["prompt"] == "<system>You plan.\n<user>Cook some food.\n<assistant>"
        assert applied["chosen"] == pair.chosen + "\n" and applied["rejected"] == pair.rejected + "\n"
    # and safebeal's own loader reads both files back to the plan texts
    for data in (out, out / "pairs.jsonl"):
        [p] = load_pairs(data, "safe-align")
        assert (p.chosen, p.rejected, p.prefix_actions) == (pair.chosen, pair.rejected, 1)
