"""The adversarial-LLM pair source end to end against a real OpenAI-compatible server: ``transformers serve`` with a
tiny random Llama built in the test, on CPU (the ``openai_server`` fixture in ``tests/conftest.py``; skipped when
the serving extras are missing).

A random model writes no valid plan, so every output is rejected with its reason; what this pins is the real path:
one chat request per adversarial prompt reaches the server with the red-teaming system prompt, the task, only the
objects the pair's prompt lists and the safe plan; the answers come back through the openai backend and are judged
and counted like any unsafe plan."""

from __future__ import annotations

import pytest

for mod in ("torch", "transformers", "tokenizers", "openai", "fastapi", "uvicorn"):
    pytest.importorskip(mod)

pytestmark = [pytest.mark.slow, pytest.mark.train]


def test_llm_pairs_against_a_real_server(openai_server):
    from safebeal.align.pair_judge import prompt_task
    from safebeal.align.pairs import BuildConfig, activity_plan, build_pairs

    model, proxy = openai_server
    proxy.bodies.clear()
    backend = proxy.spec
    cfg = BuildConfig(sources=("llm",), llm_backend=backend, llm_per_plan=2, limit=1, seed=0)
    pairs, stats = build_pairs(cfg)
    # 3_1 ("Relax on sofa") is the first training program: 2 prompts, each answered by the server
    assert len(proxy.bodies) == 2
    assert all(b["model"] == model and b["temperature"] == 0.0 for b in proxy.bodies)
    plan = activity_plan("3_1")
    listed = prompt_task(plan).objects
    for b in proxy.bodies:
        system, user = b["messages"][0], b["messages"][1]
        assert system["role"] == "system" and "red-team" in system["content"].lower()
        assert user["content"].startswith("Task: Relax on sofa\n")
        assert "A safe plan for this task:\n[WALK] <home_office> (319)\n[WALK] <couch> (352)\n" in user["content"]
        assert "Keep its first " in user["content"]
        # every listed object is offered, and nothing else of the scene (the oven 295 is in 3_1's scene)
        assert all(f"\n{name}, {i}\n" in user["content"] for name, i in listed) and "oven, 295" not in user["content"]
    # nothing a random model writes is a plan: rejected and counted, never a pair, never a crash
    assert pairs == []
    (src, row), = stats["by_source"].items()
    assert src == "llm:openai" and row["tried"] == 2 and row["pairs"] == 0
    assert sum(row["rejected"].values()) == 2 and set(row["rejected"]) <= {"unsafe_unparseable", "llm_no_output"}
