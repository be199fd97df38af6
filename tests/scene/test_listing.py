"""The object listing rule (safebeal.scene.listing) over every SafeRisks entry and every ActivityPrograms test
task: independent of the unsafe plans, and complete for the reference plan (0 misses)."""

import pytest

from safebeal.datasets.base import DATASETS
from safebeal.datasets.saferisks import load_entries
from safebeal.scene import execute, load_scene
from safebeal.scene.listing import STRUCTURE, listed_objects
from safebeal.scene.script import parse_script, script_from_lines

CHUNKS = 8


@pytest.fixture(scope="module")
def entries():
    return load_entries()


def needed(scene, plan_lines):
    """What the reference plan needs listed, read off the simulator: before every step, the step's objects and
    whatever holds them then (ON or INSIDE a container or surface; rooms and the building are not things to
    open or reach). The trajectory must run to the end."""
    traj = execute(scene, script_from_lines(plan_lines))
    assert traj.executable, (scene.source, traj.error)
    need = set()
    for state, line in zip(traj.states, traj.script):
        for a in line.args:
            need.add(a.id)
            for rel in ("ON", "INSIDE"):
                for t in state.targets(a.id, rel):
                    if state.node(t).category not in STRUCTURE:
                        need.add(t)
    return need - {scene.character_id}


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_saferisks_listing_is_independent_and_complete(entries, chunk):
    misses, dependent, stale = [], [], []
    for e in entries[chunk::CHUNKS]:
        scene = e.scene()
        listing = listed_objects(scene, e.safe_plan, e.id)
        blind = e.model_copy(update={"unsafe_plans": [], "hazard": "", "categories": []})
        if listed_objects(blind.scene(), blind.safe_plan, blind.id) != listing:
            dependent.append(e.id)
        if [tuple(x) for x in e.objects] != listing:  # the shipped file holds what the rule gives
            stale.append(e.id)
        missing = needed(scene, e.safe_plan) - {i for _, i in listing}
        if missing:
            misses.append((e.id, sorted(missing)))
    assert dependent == [] and stale == [] and misses == []


def test_activity_test_listing_is_complete():
    tasks = DATASETS.create("activity-test").tasks()
    assert len(tasks) == 24
    misses = []
    for t in tasks:
        missing = needed(t.get_scene(), [str(ln) for ln in parse_script(t.reference)]) - {i for _, i in t.objects}
        if missing:
            misses.append((t.id, sorted(missing)))
    assert misses == []


def test_virtualhome_lists_virtualhome_eval_objects_first_then_completes_them():
    from safebeal.datasets.virtualhome import relevant_objects

    t = next(t for t in DATASETS.create("virtualhome").tasks() if t.id == "27_2")
    rel = [(c, i) for c, i, _ in relevant_objects("27_2") if c != "character"]
    assert list(t.objects)[: len(rel)] == rel
    assert needed(t.get_scene(), [str(ln) for ln in parse_script(t.reference)]) <= {i for _, i in t.objects}


def test_rule_by_hand_on_a_small_scene():
    """'Go to toilet' (158_1): the bathroom and toilet the script uses; the toilet stands in the bathroom only
    (no holder); the agent's room (dining room) and both floors; 5 distractors drawn from the bathroom, never
    its walls, ceiling, lamps or doors; the same for the same key, another draw for another key."""
    scene = load_scene("activity:158_1")
    plan = ["[WALK] <bathroom> (1)", "[WALK] <toilet> (37)", "[FIND] <toilet> (37)"]
    got = listed_objects(scene, plan, "158_1")
    assert got == [("bathroom", 1), ("floor", 2), ("towel_rack", 31), ("towel_rack", 32), ("towel_rack", 33),
                   ("wallshelf", 35), ("toilet", 37), ("shower", 38), ("dining_room", 201), ("floor", 202)]
    assert listed_objects(scene, plan, "158_1") == got
    other = listed_objects(scene, plan, "another key")
    assert {i for _, i in other} >= {1, 2, 37, 201, 202} and other != got
    assert listed_objects(scene, plan, "x", distractors=0) == [("bathroom", 1), ("floor", 2), ("toilet", 37),
                                                               ("dining_room", 201), ("floor", 202)]
