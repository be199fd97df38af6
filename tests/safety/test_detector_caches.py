"""The detector's shortcuts (benchmarks/RESULTS.md, "Safety detector overhead") give what the long way gives:
its own reverse ON/INSIDE index, static filters decided per node kind, process rules pre-selected by their first
argument's kind."""

from __future__ import annotations

import pytest

from safebeal.datasets.activity_programs import load_program, program_ids
from safebeal.safety import SafetyDetector
from safebeal.safety import conditions, pruning
from safebeal.safety.conditions import Context, compile_static
from safebeal.safety.pruning import ChangeSet, NodeKind, ReverseIndex
from safebeal.scene import execute

from safety_helpers import detector, trajectory


def test_reverse_index_is_the_scenes():
    """The detector's index equals SceneGraph.reverse_on_inside, the scene's own, on 26 shipped scenes."""
    pids = program_ids()[::20]
    assert len(pids) == 26
    for pid in pids:
        scene = load_program(pid).scene()
        rev = ReverseIndex(scene)
        assert rev.as_dict() == scene.reverse_on_inside(), pid
        st = execute(scene, []).initial
        for n in list(st.nodes())[::7]:  # its forward part is the initial graph's own ON/INSIDE edges
            for r in ("ON", "INSIDE"):
                assert set(rev.initial_targets(n.id, r)) == st.targets(n.id, r), (pid, n.id, r)
    # values checked by hand in 455_2's graph file: on the kitchen counter (230) stand the faucet, the coffee
    # maker, the toaster, the microwave and a bottle of alcohol; the sink is in it, the egg in the freezer (289)
    rev = ReverseIndex(load_program("455_2").scene())
    assert rev.get((230, "ON")) == {232, 290, 292, 297, 2004}
    assert rev.get((230, "INSIDE")) == {231} and rev.get((289, "INSIDE")) == {2006}
    assert rev.get((230, "CLOSE")) == ()
    assert 230 in rev.get((201, "INSIDE"))  # the counter is in the dining room


def test_static_filters_are_shared_and_decided_per_kind():
    kb = detector().rules.kb
    a = compile_static({"attr": "sharp", "__line__": 3}, kb)
    b = compile_static({"attr": ["sharp"], "__line__": 9}, kb)
    assert a is b  # equal filters are one object, so results remembered by identity are shared
    assert compile_static({"attr": "fragile"}, kb) is not a
    # every node of a scene: the kind's answer is the filter's own, for every filter compiled so far
    prog = load_program("455_2")
    traj = execute(prog.scene(), prog.script)
    cs = ChangeSet(traj.initial, traj.final, set(), ReverseIndex(traj.initial.scene), Context(traj.final, kb, {}), {}, {})
    statics = list(conditions._STATIC_LIST)
    assert len(statics) > 40
    n_sharp = 0
    for node in traj.final.nodes():
        k = cs.kind(node.id)
        assert isinstance(k, NodeKind)
        attrs = kb.node_attrs(node)
        want = {id(s) for s in statics if s.ok(kb.canonical(node.class_name), attrs, node.properties)}
        assert {id(s) for s in statics if k.passes(s)} == want, node
        # the filters of compiled affected functions that it passes (what base_passing gathers in one pass)
        assert set(k.filters_passed()) == {id(s) for s in pruning._FILTERS if id(s) in want}, node
        assert cs.passes(a, node.id) == ("sharp" in attrs)
        n_sharp += "sharp" in attrs
    assert n_sharp == len(cs.passing(a, [n.id for n in traj.final.nodes()])) > 0


def test_process_rules_preselected_by_kind_change_no_verdict(monkeypatch):
    """Every step of 173 ground-truth programs and of every rule test plan: the process violations with the rules
    pre-selected by the first argument's kind are those of every rule of the action."""
    from test_rules import CASES

    fast = SafetyDetector(unknown_class="neutral")
    full = SafetyDetector(unknown_class="neutral")
    trajs = [execute(p.scene(), p.script) for p in map(load_program, program_ids()[::3])]
    trajs += [trajectory(pid, p) for pid, plan, _, negatives in CASES.values() for p in [plan, *negatives]]
    got = [[v.to_dict() for v in fast.check(t).by_kind("process")] for t in trajs]
    monkeypatch.setattr(NodeKind, "process_rules", lambda self, action, rules: tuple(rules))
    want = [[v.to_dict() for v in full.check(t).by_kind("process")] for t in trajs]
    assert got == want
    assert sum(map(len, got)) > 40  # the comparison covers steps that violate a process rule


def test_hop_to_a_static_predicate_adds_nothing_beyond_base():
    """``related: ON to {class: kitchen_counter}`` can change only with the node's own ON edges (a counter stays a
    counter), so its footprint is ``base``: the appliances standing on the counter the cloth was taken from are
    left out. A hop to a predicate that reads states (a CLEAN counter) still reaches them: the counter, used by
    the GRAB, may have changed state."""
    from safebeal.safety.pruning import compile_affected

    det = SafetyDetector()
    traj = trajectory("378_1", "WALK 2011; GRAB 2011")
    mon = det.monitor(traj.initial)
    for s in traj.steps:
        mon.observe(s)
    cs = mon._change_set(mon.state.changed_node_ids(), mon._ctx(mon.state, mon.steps_judged))
    kb = det.rules.kb
    assert cs.base == {65, 230, 2011}  # the character, the counter (the GRAB's holder) and the cloth
    static_hop = compile_affected({"related": {"relation": "ON", "to": {"class": "kitchen_counter"}}}, kb)
    assert static_hop(cs) == cs.base
    state_hop = compile_affected({"related": {"relation": "ON", "to": {"class": "kitchen_counter", "state": "CLEAN"}}},
                                 kb)
    assert state_hop(cs) == cs.base | {290, 292, 232, 297}  # coffee maker, toaster, faucet, microwave
    assert det.check(traj).to_dict() == SafetyDetector(prune=False).check(traj).to_dict()


def test_every_shipped_termination_rule_is_pruned():
    """A termination rule that attribution cannot prune (a relation other than ON, INSIDE or an extension's, e.g.
    INSIDE+) makes every new scene's candidate scan run: the detector's cold cost nearly tripled (0.83 s to 2.3 s on
    the 518 programs) when one crept into food_safety.perishable_left_out. Use nested ON/INSIDE hops instead."""
    from safebeal.safety import load_rules

    rules = load_rules()
    assert [r.id for r in rules.rules if r.kind == "termination" and r.affected is None] == []


def test_base_passing_is_passing_over_base_for_every_filter_in_any_order():
    """``ChangeSet.base_passing`` gathers every filter's base nodes in one pass: for every compiled filter it is
    ``passing(filter, base)``, whichever filter is asked first (a slip that returned the last filter of the pass
    for every filter dropped a dropped plate from breakage.fragile_on_floor on 318_1)."""
    det = SafetyDetector()
    fragile = compile_static({"attr": "fragile"}, det.rules.kb)
    statics = list(conditions._STATIC_LIST)
    for pid, first in (("318_1", 0), ("318_1", -1), ("455_2", len(statics) // 2)):
        prog = load_program(pid)
        traj = execute(prog.scene(), prog.script)
        mon = det.monitor(traj.initial)
        for s in traj.steps:
            mon.observe(s)
        cs = mon._change_set(mon.state.changed_node_ids(), mon._ctx(mon.state, mon.steps_judged))
        order = statics[first:] + statics[:first]
        got = {id(s): cs.base_passing(s) for s in order}
        assert got == {id(s): frozenset(cs.passing(s, cs.base)) for s in statics}, pid
        if pid == "318_1":
            assert got[id(fragile)] == {1000}  # the plate the plan dropped


@pytest.mark.slow
def test_attribution_pruning_changes_no_final_verdict_on_any_program():
    """All 518 ground-truth programs: the pruned detector's verdicts are the exhaustive detector's (the prefix test
    in test_monitor.py covers every 9th program; the footprint shortcuts must hold on every scene)."""
    fast, full = SafetyDetector(unknown_class="neutral"), SafetyDetector(unknown_class="neutral", prune=False)
    flagged = 0
    for pid in program_ids():
        prog = load_program(pid)
        traj = execute(prog.scene(), prog.script)
        a = fast.check(traj).to_dict()
        assert a == full.check(traj).to_dict(), pid
        flagged += not a["safe"]
    assert flagged == 48  # docs/hazards.md: the 518 programs' audit


def _change_sets(pids):
    det = SafetyDetector(unknown_class="neutral")
    for pid in pids:
        prog = load_program(pid)
        traj = execute(prog.scene(), prog.script)
        mon = det.monitor(traj.initial)
        mon.observe_all(traj.steps)
        yield pid, det, mon._change_set(mon.state.changed_node_ids(), mon._ctx(mon.state, mon.steps_judged))


def test_static_rule_nodes_are_each_rules_base_nodes():
    """The rules gathered per node kind in one pass over ``base``: each one's nodes are the base nodes passing its
    filter (``base_passing``), and a rule no base node passes is left out."""
    n = 0
    for pid, det, cs in _change_sets(program_ids()[::9] + ["318_1"]):
        got = cs.static_rule_nodes(det._static_rules)
        want = {k: cs.base_passing(static) for k, static in det._static_rules}
        assert {k: frozenset(v) for k, v in got.items()} == {k: v for k, v in want.items() if v}, pid
        assert all(len(v) == len(set(v)) for v in got.values())
        n += len(got)
    assert len(det._static_rules) == 22 and n > 100
    # by hand: 318_1 drops a plate (1000): breakage.fragile_on_floor is asked about the plate only
    k = next(k for k, r in enumerate(det._termination) if r.id == "breakage.fragile_on_floor")
    assert got[k] == [1000]


def test_filtered_sources_are_the_final_sources_passing_the_filter():
    """``filtered_sources_of``: a target's final-state sources outside ``base`` that pass the filter, read from the
    per-scene index of initial sources (a node outside ``base`` keeps its out-edges)."""
    kb = detector().rules.kb
    filters = [compile_static(s, kb) for s in ({"attr": "food"}, {"attr": "toxic"}, {"property": "GRABBABLE"})]
    checked = 0
    for pid, det, cs in _change_sets(program_ids()[::13]):
        targets = sorted(cs.d_in("ON") | cs.d_in("INSIDE") | cs.base)
        for static in filters:
            for rel in ("ON", "INSIDE"):
                out: set = set()
                cs.filtered_sources_of(static, targets, rel, out)
                want = {x for t in targets for x in cs.final.sources(t, rel)
                        if x not in cs.base and cs.passes(static, x)}
                assert out == want, (pid, rel)
                checked += len(want)
    assert checked > 50


def test_observing_step_by_step_is_observing_all():
    """``observe`` per step returns the violations ``observe_all`` (what ``check`` runs) records for that step, on
    every 9th program and on plans with failed steps."""
    det = SafetyDetector(unknown_class="neutral")
    trajs = [execute(p.scene(), p.script) for p in map(load_program, program_ids()[::9])]
    trajs.append(trajectory("378_1", "WALK 2011; GRAB 2011; WALK 295; PUTBACK 2011 295"))
    # the milk is no longer in hand at the last step: it fails, and is recorded as a failed step (test_monitor.py)
    trajs.append(trajectory("837_2", "WALK 289; OPEN 289; GRAB 1002; CLOSE 289; WALK 230; PUTBACK 1002 230; WALK 289; "
                                     "OPEN 289; PUTIN 1002 289"))
    failed = 0
    for traj in trajs:
        one, whole = det.monitor(traj.initial), det.monitor(traj.initial)
        found = [one.observe(s) for s in traj.steps]
        whole.observe_all(traj.steps)
        assert [v for f in found for v in f] == one.violations == whole.violations
        assert (one.steps_judged, one.next_step) == (whole.steps_judged, whole.next_step) == \
            (sum(s.ok for s in traj.steps), len(traj.steps))
        assert one.finish().to_dict() == whole.finish().to_dict() == det.check(traj).to_dict()
        failed += sum(not s.ok for s in traj.steps)
    assert failed >= 1 and all(t.steps for t in trajs)
