"""Confidence and re-planning end to end against a real OpenAI-compatible server: ``transformers serve`` running a
tiny random Llama built here, on CPU (the ``openai_server`` fixture in ``tests/conftest.py``). A recording proxy
shows what the server received: the confidence request in the system message, and each re-prompt in the same
conversation. Slow; skipped when the serving extras are missing or the server does not come up."""

from __future__ import annotations

import json

import pytest

for mod in ("torch", "transformers", "tokenizers", "openai", "fastapi", "uvicorn"):
    pytest.importorskip(mod)

pytestmark = [pytest.mark.slow, pytest.mark.train]


def test_confidence_and_replan_reach_a_real_server(openai_server, tmp_path):
    from safebeal.bench.runner import RunConfig, run_bench
    from safebeal.planners.planners import LLMPlanner

    model, proxy = openai_server
    proxy.bodies.clear()
    llm = proxy.spec
    planner = LLMPlanner(backend=llm, replan=2, confidence=True, max_new_tokens=8, temperature=0.0)
    out = tmp_path / "run"
    summary = run_bench(RunConfig(planners=[planner.spec], dataset="virtualhome", limit=1, out=str(out), workers=1,
                                  cache=False), planners=[planner])
    [ep] = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    rec = ep["extras"]["llm-planner"]
    # whatever the random model wrote, every round is recorded and every re-prompt is one request to the server
    assert len(proxy.bodies) == 1 + rec["n_rounds"] and rec["max_rounds"] == 2
    assert [r["round"] for r in rec["rounds"]] == list(range(rec["n_rounds"] + 1))
    assert all(r["error"] is None and isinstance(r["output"], str) for r in rec["rounds"])
    first = proxy.bodies[0]
    assert first["model"] == model and first["messages"][0]["role"] == "system"
    assert first["messages"][0]["content"].endswith("[ACTION] <object_name> (object_id) # confidence: 0.9")
    for k, body in enumerate(proxy.bodies[1:]):  # round k+1 answers round k's feedback, after its output
        assert body["messages"][-2] == {"role": "assistant", "content": rec["rounds"][k]["output"]}
        assert body["messages"][-1] == {"role": "user", "content": rec["rounds"][k]["feedback"]}
    # the contract: with confidence=true the sample has step_confidence, one value or null per step
    assert isinstance(ep["step_confidence"], list) and len(ep["step_confidence"]) == len(ep["script"])
    assert ep["raw_output"] == rec["final_output"]
    assert next(iter(summary.values()))["replan"]["plans"] == 1
