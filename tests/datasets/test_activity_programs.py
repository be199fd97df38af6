import pytest

from safebeal.datasets import activity_programs as ap
from safebeal.datasets.goals import DiffGoal, GoalSpec
from safebeal.errors import SafebealError
from safebeal.scene import execute


def test_counts_and_join():
    ids = ap.program_ids()
    assert len(ids) == 518
    specs = ap.goal_specs()
    assert len(specs) == 342 and set(specs) <= set(ids)
    assert len({ap.load_program(i).title for i in ids}) == 26
    p = ap.load_program("628_2")
    assert p.title == "Drink" and p.description.startswith("I go to the kitchen")
    assert str(p.script[0]) == "[WALK] <dining_room> (201)" and len(p.script) == 13
    assert p.goal_spec is None and p.final_graph is not None  # 628_2 is not among the 342
    assert ap.load_program("27_2").goal_spec.nodes[0] == (1001, "CLOSED")


def test_unknown_program():
    with pytest.raises(SafebealError, match="unknown ActivityPrograms id"):
        ap.load_program("nope")


def test_split_is_materialised_and_follows_protocol():
    s = ap.split()
    assert not set(s["train_tasks"]) & set(s["test_tasks"])
    assert len(s["train_tasks"]) + len(s["test_tasks"]) == 26 and len(s["test_tasks"]) == round(26 / 4)
    assert not set(s["train"]) & set(s["test"])
    by_task = {}
    for pid in s["test"]:
        by_task.setdefault(ap.load_program(pid).title, []).append(pid)
    assert set(by_task) == set(s["test_tasks"]) and all(len(v) <= 4 for v in by_task.values())
    assert all(ap.load_program(pid).title in s["train_tasks"] for pid in s["train"])
    assert "624_1" not in s["train"] + s["test"] and "688_1" not in s["train"] + s["test"]


@pytest.mark.slow
def test_split_regenerates_identically():
    assert ap.make_split() == ap.split()


def test_goal_spec_checks_every_edge_goal():
    """virtualhome-eval's evaluator breaks out of its edge loop after the first match; we check them all."""
    specs = ap.goal_specs()
    multi = [pid for pid, g in specs.items() if sum("from_id" in x for x in g["vh_goal"]["goal"]) >= 2]
    assert len(multi) == 37
    p = ap.load_program("417_1")  # Wash clothes: five clothes/soap ON the washing machine
    g = p.goal_spec
    assert len(g.edges) == 5
    full = p.run()
    assert g.evaluate(full).success and g.counts(full.final) == (3, 5)
    # stop after the first item is put on the machine: one edge goal met, four not -> failure
    lines = [str(x) for x in p.script]
    first_put = next(i for i, ln in enumerate(lines) if ln.startswith("[PUTBACK]") or ln.startswith("[PUTIN]"))
    partial = execute(p.scene(), "\n".join(lines[: first_put + 1]))
    n_nodes, n_edges = g.counts(partial.final)
    assert partial.executable and n_edges == 1
    assert not g.evaluate(partial).success


def test_goal_at_some_step_cook_some_food(prog392):
    """Cook some food: the goal needs the stove ON. Switching it off afterwards keeps success (and is safe)."""
    from safebeal.check import DEFAULT_PLAN
    from safebeal.resources import PACKAGE_DATA

    safe = (PACKAGE_DATA / "examples" / "cook_some_food_safe.txt").read_text()
    unsafe = DEFAULT_PLAN.read_text()
    for text in (safe, unsafe):
        t = execute(prog392.scene(), text)
        assert t.executable
        for goal in (prog392.goal_spec, prog392.diff_goal()):
            r = goal.evaluate(t)
            assert r.success and r.step == 11  # reached by [SWITCHON] <oven>, the 12th step
    t = execute(prog392.scene(), safe)
    assert not t.final.has_state(295, "ON") and t.final.has_state(289, "CLOSED")
    assert not prog392.goal_spec.holds(t.final)  # end-state-only judging would call it a failure


def test_action_goals_ordered():
    from safebeal.datasets.goals import _actions_satisfied

    assert _actions_satisfied(["LOOKAT|WATCH", "DRINK"], ["WALK", "WATCH", "DRINK"]) == (2, [])
    assert _actions_satisfied(["DRINK", "LOOKAT|WATCH"], ["WATCH", "DRINK"]) == (1, ["LOOKAT|WATCH"])
    assert _actions_satisfied(["LOOKAT"], ["LOOKAT_SHORT"]) == (1, [])
    assert _actions_satisfied(["GRAB"], []) == (0, ["GRAB"])


def test_non_executable_plan_is_not_success(prog392):
    t = execute(prog392.scene(), "\n".join(str(x) for x in prog392.script) + "\n[GRAB] <oven> (295)")
    assert not t.executable
    r = prog392.goal_spec.evaluate(t)
    assert not r.success and r.detail["not_executable"]
    assert prog392.goal_spec.evaluate(t, require_executable=False).success


def test_goal_spec_round_trip():
    g = ap.load_program("417_1").goal_spec
    assert GoalSpec.from_vh_goal(g.to_vh_goal()) == g
