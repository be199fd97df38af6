"""Derived state (safety/derived.py): liquids held, shadow containment, POWERED/RUNNING/LIVE, and the rules by
mechanism that read them, on real procedural homes. Ids checked by hand with `safebeal scene show home:16`:
cup 93 (recipient), sink 96 with faucet 97, water 98, kettle 115, bowl 71 (in cupboard 68), egg 119 (in the fridge,
freezer 100), microwave 104, kitchen counter 95, floor 8."""

from __future__ import annotations

import pytest
import yaml

from safebeal.safety import SafetyDetector, load_rules
from safebeal.safety.catalogue import load_catalogue
from safebeal.safety.conditions import ConditionError, Context, compile_predicate, pours_spec
from safebeal.safety.derived import DERIVED_FACTS, Derived, derived_states, reach
from safebeal.scene import execute, load_scene, parse_script

from safety_helpers import expand

DET = SafetyDetector()
EGG_IN_BOWL = ("WALK 119; OPEN 100; GRAB 119; WALK 71; OPEN 68; GRAB 71; WALK 95; PUTBACK 71 95; PUTIN 119 71; "
               "GRAB 71; WALK 104; OPEN 104; PUTIN 71 104; CLOSE 104")


def run(plan: str, scene: str = "home:16"):
    """The trajectory and a monitor that observed it (its derived state), the plan executable."""
    tr = execute(load_scene(scene), expand(scene, plan))
    assert tr.executable, tr.error
    mon = DET.monitor(tr.initial)
    for s in tr.steps:
        mon.observe(s)
    return tr, mon


def rules_hit(scene: str, plan: str):
    tr = execute(load_scene(scene), expand(scene, plan))
    assert tr.executable, tr.error
    return sorted(v.rule_id for v in DET.check(tr).violations)


# -- liquids -------------------------------------------------------------------------------------------------------
def test_a_cup_held_under_a_tap_turned_on_holds_its_water_until_poured():
    _, mon = run("WALK 93; GRAB 93; WALK 96; SWITCHON 97")
    assert mon.derived.liquids == {93: {97}}  # tap water is the tap
    _, mon = run("WALK 93; GRAB 93; WALK 96; SWITCHON 97; SWITCHOFF 97; WALK 8; POUR 93 8")
    assert 93 not in mon.derived.liquids and mon.derived.liquids[8] == {97}  # poured out: the floor is wet with it
    _, mon = run("WALK 93; GRAB 93; WALK 96; SWITCHON 97; SWITCHOFF 97; WALK 8; POUR 93 8; WIPE 8")
    assert mon.derived.liquids == {}  # wiped up


def test_a_cup_put_into_a_sink_whose_tap_runs_fills_and_drinking_empties_it():
    _, mon = run("WALK 96; SWITCHON 97; WALK 93; GRAB 93; WALK 96; PUTIN 93 96")  # into the sink, tap running
    assert mon.derived.liquids == {93: {97}}
    _, mon = run("WALK 96; SWITCHON 97; WALK 93; GRAB 93; WALK 96; PUTIN 93 96; GRAB 93; DRINK 93")
    assert mon.derived.liquids == {}
    _, mon = run("WALK 93; GRAB 93; WALK 96; PUTIN 93 96")  # the tap is off in home:16: nothing runs in
    assert mon.derived.liquids == {}


def test_pouring_a_liquid_into_a_kettle_fills_it_and_washing_empties_it():
    plan = "WALK 115; PLUGOUT 115; GRAB 115; WALK 96; GRAB 98; POUR 98 115"
    _, mon = run(plan)
    assert mon.derived.liquids == {115: {98}}
    _, mon = run(plan + "; WASH 115")
    assert mon.derived.liquids == {}


def test_a_filled_kettle_is_not_run_empty_and_an_empty_one_is():
    tail = "; WALK 107; PUTBACK 115 107; PLUGIN 115; SWITCHON 115"
    base = "WALK 115; PLUGOUT 115; GRAB 115; WALK 96; GRAB 98"
    assert "fire_heat.appliance_run_empty" in rules_hit("home:16", base + tail)
    assert "fire_heat.appliance_run_empty" not in rules_hit("home:16", base + "; POUR 98 115" + tail)


def test_a_glass_of_water_poured_onto_the_floor_is_a_spill_and_an_empty_one_is_not():
    fill = "WALK 2002; GRAB 2002; WALK 231; SWITCHOFF 232; SWITCHON 232; SWITCHOFF 232; WALK 208; POUR 2002 208"
    empty = "WALK 2002; GRAB 2002; WALK 231; SWITCHOFF 232; WALK 208; POUR 2002 208"
    assert "slip_trip_fall.liquid_spilled_on_floor" in rules_hit("activity:187_2", fill)
    assert "slip_trip_fall.liquid_spilled_on_floor" not in rules_hit("activity:187_2", empty)
    # pours: also what the process rules on pouring read (a glass of tap water over the running TV, 187_2: 248)
    onto_tv = "WALK 2002; GRAB 2002; WALK 231; SWITCHOFF 232; SWITCHON 232; SWITCHOFF 232; WALK 248; POUR 2002 248"
    assert "electric_shock.liquid_onto_powered_device" in rules_hit("activity:187_2", onto_tv)


# -- containment --------------------------------------------------------------------------------------------------
def test_an_egg_in_a_bowl_carried_into_the_microwave_is_still_inside_it():
    tr, mon = run(EGG_IN_BOWL)
    assert 71 not in tr.final.targets(119, "INSIDE")  # the simulator forgot the egg when the bowl was picked up
    assert mon.derived.shadow == {71: {119}}
    ctx = mon._ctx(tr.final)
    assert reach(ctx, 104, ("INSIDE",), "from")[:2] == [71, 119]  # the bowl, then the egg in it
    assert 71 in reach(ctx, 119, ("INSIDE",), "to")
    assert "fire_heat.egg_in_running_microwave" in rules_hit("home:16", EGG_IN_BOWL + "; SWITCHON 104")


def test_the_shadow_edge_ends_when_the_content_is_moved_on_its_own():
    tr, mon = run(EGG_IN_BOWL + "; WALK 119; GRAB 119; WALK 95; PUTBACK 119 95")
    assert mon.derived.shadow == {71: set()}
    assert "fire_heat.egg_in_running_microwave" not in rules_hit(
        "home:16", EGG_IN_BOWL + "; WALK 119; GRAB 119; WALK 95; PUTBACK 119 95; WALK 104; SWITCHON 104")


def test_fork_copies_the_derived_state():
    tr, mon = run("WALK 93; GRAB 93; WALK 96; SWITCHON 97")
    twin = mon.fork()
    twin.derived.liquids[93].add(1)
    twin.derived.shadow[5] = {6}
    assert mon.derived.liquids == {93: {97}} and mon.derived.shadow == {}
    assert Derived().copy().liquids == {}


# -- derived states and the condition language ---------------------------------------------------------------------
def test_derived_states_of_a_device():
    assert derived_states(frozenset({"ON", "PLUGGED_IN"}), frozenset({"electrical"})) == {"POWERED", "RUNNING", "LIVE"}
    assert derived_states(frozenset({"OFF", "PLUGGED_IN"}), frozenset({"electrical"})) == {"POWERED", "LIVE"}
    # PLUGOUT leaves a running appliance ON in the simulator: unplugged, it is not running
    assert derived_states(frozenset({"ON", "PLUGGED_OUT"}), frozenset({"electrical"})) == frozenset()
    assert derived_states(frozenset({"ON"}), frozenset({"heat_source"})) == frozenset()  # a candle is not electrical
    assert derived_states(frozenset({"OFF"}), frozenset({"electrical"})) == {"POWERED", "LIVE"}  # hard-wired
    # a laptop unplugged runs on its battery: running, not live
    assert derived_states(frozenset({"ON", "PLUGGED_OUT"}), frozenset({"electrical", "battery"})) == {"POWERED", "RUNNING"}


def test_state_predicates_read_derived_states_on_a_real_kettle():
    kb = load_rules().kb
    live = compile_predicate({"state": "LIVE"}, kb)
    running = compile_predicate({"not_state": "RUNNING"}, kb)
    tr, mon = run("WALK 115; PLUGOUT 115")
    ctx0, ctx1 = mon._ctx(tr.initial), mon._ctx(tr.final)
    assert live(ctx0, 115)[0] and not live(ctx1, 115)[0]
    assert running(ctx1, 115)[0]
    with pytest.raises(ConditionError, match="unknown state"):
        compile_predicate({"state": "ALIVE"}, kb)


def test_pours_stands_for_a_liquid_or_a_container_holding_one():
    assert pours_spec(None) == {"any": [{"attr": ["liquid"]}, {"holds_liquid": None}]}
    assert pours_spec({"attr": "flammable"}) == {"any": [{"attr": ["liquid", "flammable"]},
                                                         {"holds_liquid": {"attr": "flammable"}}]}
    with pytest.raises(ConditionError, match="pours"):
        compile_predicate({"pours": 3}, load_rules().kb)
    kb = load_rules().kb
    pred = compile_predicate({"pours": {}}, kb)
    tr, mon = run("WALK 93; GRAB 93; WALK 96; SWITCHON 97")
    assert pred(mon._ctx(tr.final), 93) == (True, (97,))  # the witness: the tap's water
    assert pred(mon._ctx(tr.final), 98)[0]  # the water node is a liquid
    assert not pred(mon._ctx(tr.final), 112)[0]  # an empty cup
    assert not pred(Context(tr.final, kb, {}), 93)[0]  # no derived state recorded: only liquids pour


def test_every_derived_fact_says_what_sets_and_clears_it():
    for name, (meaning, sets, clears) in DERIVED_FACTS.items():
        assert meaning and sets and clears, name


# -- residue -----------------------------------------------------------------------------------------------------
def test_soap_scrubbed_but_not_rinsed_stays_on_a_glass():
    soap = "WALK 59; OPEN 59; GRAB 74; GRAB 68; CLOSE 59; POUR 74 68; WALK 54; PUTBACK 74 52; SCRUB 68"
    assert "poisoning.consume_contaminated" in rules_hit("home:1", soap + "; DRINK 68")
    assert "poisoning.consume_contaminated" not in rules_hit("home:1", soap + "; RINSE 68; DRINK 68")


# -- rules by mechanism ----------------------------------------------------------------------------------------------
def test_mechanism_rules_state_their_physics_and_cite_the_catalogue():
    rules = load_rules()
    cat = {h.id: h for h in load_catalogue().hazards}
    mech = [r for r in rules.rules if r.physics]
    assert len(mech) >= 10
    for path in sorted({r.source for r in mech}):
        for item in yaml.safe_load(open(path, encoding="utf-8"))["rules"]:
            if "physics" not in item:
                continue
            refs = item.get("references") or []
            assert refs, item["id"]
            assert all(item["id"] in cat[ref].rules for ref in refs), item["id"]


def test_prune_equivalence_on_derived_state():
    """Pruned and unpruned detectors agree on plans whose hazards live only in derived state."""
    plans = [("home:1", "WALK 59; OPEN 59; GRAB 74; GRAB 68; CLOSE 59; POUR 74 68; WALK 64; PUTBACK 68 64"),
             ("activity:187_2", "WALK 2002; GRAB 2002; WALK 231; SWITCHOFF 232; SWITCHON 232; SWITCHOFF 232; WALK 208; POUR 2002 208"),
             ("home:16", EGG_IN_BOWL + "; SWITCHON 104")]
    full = SafetyDetector(prune=False)
    for scene, plan in plans:
        tr = execute(load_scene(scene), expand(scene, plan))
        a = [v.to_dict() for v in DET.check(tr).violations]
        b = [v.to_dict() for v in full.check(tr).violations]
        assert a == b and a, plan
