"""The full 518-program sweep: every ground-truth program through safebeal.scene (about a minute)."""

import pytest

from safebeal.datasets import activity_programs as ap
from safebeal.scene import execute

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sweep():
    out = {}
    for p in ap.load_programs():
        out[p.id] = (p, p.run())
    return out


def test_516_of_518_execute_and_two_known_failures(sweep):
    failed = {pid: t.error for pid, (p, t) in sweep.items() if not t.executable}
    assert sorted(failed) == ["624_1", "688_1"]
    for err in failed.values():
        assert err.kind == "precondition" and err.message.endswith("already grabbed")
    assert failed["624_1"].step == 8 and failed["688_1"].step == 16


def test_final_nodes_match_shipped_graphs_edges_differ_only_in_close(sweep):
    close_only = 0
    for pid, (p, t) in sweep.items():
        if not t.executable:
            continue
        want_nodes = {n["id"]: (n["class_name"], frozenset(n["states"])) for n in p.final_graph["nodes"]}
        got_nodes = {n.id: (n.class_name, n.states) for n in t.final.nodes()}
        assert got_nodes == want_nodes, pid
        want_edges = {(e["from_id"], e["relation_type"], e["to_id"]) for e in p.final_graph["edges"]}
        diff = want_edges ^ set(t.final.edges())
        assert {r for _, r, _ in diff} <= {"CLOSE"}, pid
        close_only += bool(diff)
    assert close_only == 201


def test_both_success_definitions_on_ground_truth_and_truncations(sweep):
    n_gs = n_exec = 0
    drop_last_fail = {"goal_spec": 0, "diff": 0}
    holds_initially = {"goal_spec": 0, "diff": 0}
    for pid, (p, t) in sweep.items():
        if not t.executable:
            continue
        n_exec += 1
        goals = {"diff": p.diff_goal()}
        if p.goal_spec is not None:
            goals["goal_spec"] = p.goal_spec
            n_gs += 1
        for name, g in goals.items():
            r = g.evaluate(t)
            assert r.success, (pid, name, r)
            if r.step == -1:  # the goal already holds in the initial state
                holds_initially[name] += 1
                empty = not any(g.to_dict().values()) if name == "diff" else not (g.nodes or g.edges or g.actions)
                assert empty, (pid, name)  # only an empty goal does
                continue
            # truncated just before the step that first reaches the goal: failure
            assert not g.evaluate(execute(p.scene(), p.script[: r.step])).success, (pid, name)
            if not g.evaluate(execute(p.scene(), p.script[:-1])).success:
                drop_last_fail[name] += 1
    assert n_exec == 516 and n_gs == 341
    # 68 ground-truth programs end where they started (e.g. "Drink": grab the glass, drink, put it back):
    # their diff is empty and any executable plan meets it. Four goal specs are empty
    # too: 84_1 and 93_1 ("Set up table"), 339_1 and 627_1 ("Turn on light").
    assert holds_initially == {"goal_spec": 4, "diff": 68}
    # dropping only the last step fails whenever that step is needed (it is often a LOOKAT/TURNTO)
    assert drop_last_fail == {"goal_spec": 236, "diff": 217}
