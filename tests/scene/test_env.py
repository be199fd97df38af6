import json

import pytest

from safebeal.scene import EpisodeOver, SceneEnv, SceneLoadError, clear_cache, execute, load_scene, parse_script


OPEN_FRIDGE = "[WALK] <freezer> (289)\n[OPEN] <freezer> (289)\n"  # the pot is in the fridge


@pytest.fixture(scope="module")
def scene(prog392):
    return prog392.scene()


def test_step_by_step_states_before_and_after(scene):
    env = SceneEnv(scene)
    s0 = env.reset()
    assert s0.has_state(289, "CLOSED") and not s0.has_state(289, "OPEN")
    r1 = env.step("[WALK] <freezer> (289)")
    r2 = env.step("[OPEN] <freezer> (289)")
    assert r1.ok and r2.ok and r2.index == 1
    assert r2.before.has_state(289, "CLOSED") and r2.after.has_state(289, "OPEN")
    # earlier views are not modified by later steps
    assert s0.has_state(289, "CLOSED") and r1.after.has_state(289, "CLOSED")
    assert env.state is r2.after and env.info["t"] == 2


def test_graph_is_shared_and_never_modified(scene):
    before = json.dumps(scene.data, sort_keys=True)
    t1 = execute(scene, OPEN_FRIDGE + "[WALK] <pot> (1001)\n[GRAB] <pot> (1001)")
    t2 = execute(scene, "[WALK] <pot> (1001)")
    assert t1.final.held() == {1001} and t2.final.held() == set()
    assert json.dumps(scene.data, sort_keys=True) == before
    assert SceneEnv(scene).reset().held() == set()


def test_relations_helpers(scene):
    t = execute(scene, OPEN_FRIDGE + "[WALK] <pot> (1001)\n[GRAB] <pot> (1001)\n[WALK] <oven> (295)\n[PUTBACK] <pot> (1001) <oven> (295)")
    assert t.executable
    assert 1001 in t.final.objects_on(295) and 1001 not in t.initial.objects_on(295)
    assert t.final.has_edge(1001, "ON", 295)
    assert t.final.room_of(295) == t.final.room_of(1001)
    assert scene.node(295).class_name == "oven" and "HAS_SWITCH" in scene.node(295).properties
    assert (1001, "ON", 295) in set(t.final.edges())


@pytest.mark.parametrize(
    "plan,kind,step",
    [
        ("[WALK] <oven> (295)\n[FLY] <oven> (295)", "unknown_action", 1),
        ("[WALK] <oven> (295) <pot> (1001)", "argument_count", 0),
        ("[WALK] <oven> (295)\n[PUTBACK] <pot> (1001)", "argument_count", 1),
        ("[WALK] <oven> (99999)", "unknown_object", 0),
        ("[FIND] <oven> (99999)", "unknown_object", 0),
        ("[GRAB] <knife> (295)", "name_mismatch", 0),
        ("[WALK] <oven> (295)\n[GRAB] <oven> (295)\n[WALK] <pot> (1001)", "precondition", 1),
    ],
)
def test_typed_errors_stop_execution(scene, plan, kind, step):
    t = execute(scene, plan)
    assert not t.executable
    assert t.error.kind == kind and t.error.step == step
    assert len(t.steps) == step + 1  # nothing after the failing step ran
    dicts = t.step_dicts()
    assert len(dicts) == len(t.script)
    assert all(d["error"]["kind"] == "not_run" for d in dicts[step + 1 :])


def test_precondition_error_keeps_simulator_message(scene):
    t = execute(scene, "[WALK] <oven> (295)\n[GRAB] <oven> (295)")
    assert t.error.message == "<oven> (295) is not grabbable"
    assert t.error.sim_error_type == "affordance"


def test_name_equivalence_accepted(scene):
    t = execute(scene, "[WALK] <fridge> (289)\n[OPEN] <fridge> (289)\n[WALK] <stove> (295)")
    assert t.executable, t.error


def test_step_after_failure_raises(scene):
    env = SceneEnv(scene)
    env.reset()
    assert not env.step("[GRAB] <oven> (295)").ok
    with pytest.raises(EpisodeOver):
        env.step("[WALK] <oven> (295)")


def test_load_scene_file_formats_and_errors(tmp_path, prog392):
    init = prog392.init_graph
    a = tmp_path / "plain.json"
    a.write_text(json.dumps(init))
    b = tmp_path / "wrapped.json"
    b.write_text(json.dumps({"init_graph": init, "goal": {"goal": [{"id": 295, "state": "ON"}], "actions": []}}))
    sa, sb = load_scene(a), load_scene(b)
    assert len(sa.data["nodes"]) == len(init["nodes"]) and sb.goal["goal"][0]["id"] == 295
    assert load_scene(a) is sa  # cached
    clear_cache()
    assert load_scene(a) is not sa
    bad = tmp_path / "bad.json"
    bad.write_text('{"nodes": [1,\n')
    with pytest.raises(SceneLoadError, match=r"bad.json:2:\d+: corrupt JSON"):
        load_scene(bad)
    with pytest.raises(SceneLoadError, match="not found"):
        load_scene(tmp_path / "missing.json")
    (tmp_path / "nokeys.json").write_text('{"x": 1}')
    with pytest.raises(SceneLoadError, match="'nodes' and 'edges'"):
        load_scene(tmp_path / "nokeys.json")
    (tmp_path / "badnode.json").write_text('{"nodes": [{"id": 1}], "edges": []}')
    with pytest.raises(SceneLoadError, match="node #0 lacks"):
        load_scene(tmp_path / "badnode.json")


def test_fork_is_an_independent_continuation(scene):
    env = SceneEnv(scene)
    env.reset()
    first = env.step("[WALK] <dining_room> (201)")
    assert first.ok
    fork = env.fork()
    a = env.step("[WALK] <bathroom> (1)")
    b = fork.step("[WALK] <bedroom> (67)")
    assert a.ok and b.ok
    char = scene.character_id
    assert env.state.room_of(char) == 1 and fork.state.room_of(char) == 67
    assert a.before is b.before  # both continued from the same shared state


def test_reset_from_an_earlier_state_continues_like_a_full_run(scene):
    full = SceneEnv(scene).run(["[WALK] <dining_room> (201)", "[WALK] <bathroom> (1)"])
    env = SceneEnv(scene)
    start = env.reset(state=full.states[1], t=1)
    assert start is full.states[1]
    r = env.step("[WALK] <bathroom> (1)")
    assert r.ok and r.index == 1
    assert env.state.room_of(scene.character_id) == full.final.room_of(scene.character_id) == 1
    other = SceneEnv(load_scene("activity:628_2"))
    with pytest.raises(ValueError, match="another scene"):
        other.reset(state=full.states[1])
