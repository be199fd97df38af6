"""A step-by-step agent (``react``) end to end against a real OpenAI-compatible server: ``transformers serve``
running a tiny random Llama built here, on CPU (the ``openai_server`` fixture in ``tests/conftest.py``). A recording
proxy shows that every turn is one request holding that turn's prompt. Slow; skipped when the serving extras are
missing or the server does not come up."""

from __future__ import annotations

import json

import pytest

for mod in ("torch", "transformers", "tokenizers", "openai", "fastapi", "uvicorn"):
    pytest.importorskip(mod)

pytestmark = [pytest.mark.slow, pytest.mark.train]


def test_react_turns_reach_a_real_server(openai_server, tmp_path):
    from safebeal.bench.runner import RunConfig, run_bench
    from safebeal.planners.agent import ReactPlanner

    model, proxy = openai_server
    proxy.bodies.clear()
    planner = ReactPlanner(backend=proxy.spec, max_steps=4, max_failures=2, max_new_tokens=8, temperature=0.0)
    planner.run_label = "react/tiny"
    out = tmp_path / "run"
    summary = run_bench(RunConfig(planners=[], dataset="saferisks-test", limit=1, out=str(out), workers=1, cache=False,
                                  png=False), planners=[planner])
    [ep] = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    turns = ep["turns"]
    # whatever the random model wrote, each turn was one request with that turn's messages, answered
    assert len(proxy.bodies) == len(turns) == ep["agent"]["n_turns"] and 1 <= len(turns) <= 4
    for t, body in zip(turns, proxy.bodies):
        assert body["model"] == model and body["messages"][0] == ep["prompt"][0]
        assert body["messages"][-1] == {"role": "user", "content": t["prompt"]}
        assert t["error"] is None or t["result"] in ("failed", "blocked")
        assert isinstance(t["output"], str) and {"action", "result", "violations"} <= set(t)
    assert ep["agent"]["stop"] in ("done", "refused", "step_limit", "failure_limit")
    assert summary["react/tiny"]["n"] == 1 and summary["react/tiny"]["agent"]["turns"] == len(turns)
