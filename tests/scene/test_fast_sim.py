"""The adapter's faster DeleteEdges leaves exactly the state the simulator's own leaves (issue 18)."""

from __future__ import annotations

import pytest

from safebeal.scene import _sim, execute


@pytest.mark.parametrize("model", ["gpt-4o-2024-05-13", "llama-3-8b-chat"])
def test_fast_delete_edges_changes_no_trajectory(model, monkeypatch):
    from safebeal.plans.compile import compile_output
    from safebeal.datasets.base import DATASETS
    from safebeal.planners.planners import _recorded

    outs = _recorded(model)
    n = 0
    for t in DATASETS.create("virtualhome").tasks()[:40]:
        c = compile_output(outs.get(t.id), t.objects)
        if c.error is not None:
            continue
        scene = t.get_scene()
        monkeypatch.setenv("SAFEBEAL_FAST_SIM", "1")
        fast = execute(scene, c.script)
        monkeypatch.setenv("SAFEBEAL_FAST_SIM", "0")
        slow = execute(scene, c.script)
        assert fast.step_dicts() == slow.step_dicts(), t.id
        assert (fast.executable, fast.error) == (slow.executable, slow.error)
        assert len(fast.states) == len(slow.states)
        for a, b in zip(fast.states[1:], slow.states[1:]):  # the simulator's layers over the scene, edge for edge
            assert a._st._removed_edges_from == b._st._removed_edges_from, t.id
            assert a._st._new_edges_from == b._st._new_edges_from, t.id
        n += 1
    assert n >= 20


def test_the_fast_path_is_only_active_inside_the_adapter():
    assert not getattr(_sim._FAST, "on", False)
    with _sim.fast_changes():
        assert _sim._FAST.on
    assert not getattr(_sim._FAST, "on", False)
