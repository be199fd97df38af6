"""StateView reads the simulator's layered state: its edge reads (with and without a state's edge edits, through
the scene's per-node memo of the original graph) give the simulator's own edges, and its node views are the
dataclass's own."""

from __future__ import annotations

import dataclasses
import pickle
from collections import defaultdict

import pytest

from safebeal.datasets.activity_programs import load_program, program_ids
from safebeal.scene import StateView, execute
from safebeal.scene.graph import NodeView, _node_view

RELATIONS = ("ON", "INSIDE", "CLOSE", "FACING", "HOLDS_RH", "HOLDS_LH", "SITTING", "BETWEEN")


def _edges(st: StateView) -> dict:
    """(from_id, RELATION) -> {to_id}, from the full dict (the simulator's ``to_dict``: the slow way)."""
    out = defaultdict(set)
    for e in st.to_dict()["edges"]:
        out[(e["from_id"], e["relation_type"])].add(e["to_id"])
    return out


def test_targets_are_the_simulators_edges_with_and_without_edits():
    """On every third state of 15 programs: ``targets`` equals the simulator's edges for every relation, read
    before the state's edits are built, after, and on a second view of the same state (the scene's memo of the
    original graph already filled); lower-case names read the same."""
    pids = program_ids()[::40] + ["455_2"]
    assert len(pids) == 14
    checked = 0
    for pid in pids:
        prog = load_program(pid)
        traj = execute(prog.scene(), prog.script)
        for st in [traj.initial] + [s.after for s in traj.steps][::3]:
            want = _edges(st)
            ids = sorted({f for f, _ in want})[::4] + [st.character_id()]
            plain = {(i, r): st.targets(i, r) for i in ids for r in RELATIONS}
            assert plain == {(i, r): want.get((i, r), set()) for i in ids for r in RELATIONS}, pid
            again = StateView(st.scene, st._st, st.ext)
            again.edge_edits()
            assert {(i, r): again.targets(i, r) for i in ids for r in RELATIONS} == plain, pid
            assert {(i, r): again.targets(i, r.lower()) for i in ids for r in ("ON", "INSIDE")} == \
                {(i, r): plain[(i, r)] for i in ids for r in ("ON", "INSIDE")}
            checked += len(plain)
    assert checked > 5000
    # by hand, 455_2 (rinsing the dishes into the dishwasher, 1000): the bowl (1001) is held after its GRAB (step 7)
    # and stands on the dishwasher after its PUTBACK (step 9); the egg (2006) stays in the freezer (289)
    traj = execute(load_program("455_2").scene(), load_program("455_2").script)
    char = traj.initial.character_id()
    grabbed, put = traj.steps[6].after, traj.steps[8].after
    assert grabbed.targets(char, "HOLDS_RH") == {1001} and grabbed.targets(1001, "ON") == set()
    assert put.targets(char, "HOLDS_RH") == set() and put.targets(1001, "ON") == {1000}
    put.edge_edits()
    assert put.targets(1001, "ON") == {1000} and put.targets(2006, "INSIDE") == {201, 289}


def test_edge_edits_are_the_states_changes():
    """A state's edits, per relation: the targets the simulator added to the original graph's edges (it may list
    one the graph has) and those it removed (always the graph's: ``d_in`` relies on it). The edges of the state are
    the graph's plus the added less the removed; the initial state already has some (the character's proximity)."""
    prog = load_program("455_2")
    traj = execute(prog.scene(), prog.script)
    graph = {(f, r.name): set(tos) for (f, r), tos in traj.scene.env_graph._edge_map.items()}
    put = traj.steps[8].after  # the bowl (1001) put on the dishwasher (1000)
    for st in (traj.initial, put, traj.steps[-1].after):
        now = _edges(st)
        edits = st.edge_edits()
        keys = set(graph) | set(now) | {(f, rel) for rel, pair in edits.items() for side in pair for f in side}
        for f, rel in keys:
            added, removed = (edits[rel][0].get(f, set()), edits[rel][1].get(f, set())) if rel in edits else (set(), set())
            assert removed <= graph.get((f, rel), set()), (f, rel)
            assert now.get((f, rel), set()) == (graph.get((f, rel), set()) | added) - removed, (f, rel)
        assert st.edge_edits() is edits  # built once
    assert 1000 in put.edge_edits()["ON"][0][1001]


@pytest.mark.parametrize("pid", ["455_2", "318_1"])
def test_node_views_are_the_dataclasses(pid):
    """A node view built without the frozen dataclass's ``__init__`` equals, hashes, pickles and stays frozen as one
    built with it."""
    scene = load_program(pid).scene()
    for node in list(scene.env_graph.get_nodes())[::9]:
        v = _node_view(node)
        w = NodeView(**dataclasses.asdict(v))
        assert v == w and hash(v) == hash(w) and str(v) == str(w)
        assert pickle.loads(pickle.dumps(v)) == v
        assert v.states == frozenset(s.name for s in node.states)
        assert v.properties == frozenset(p.name for p in node.properties)
        with pytest.raises(dataclasses.FrozenInstanceError):
            v.class_name = "x"  # type: ignore[misc]
