"""The multi-agent LLM generator end to end against a real OpenAI-compatible server: ``transformers serve`` with a
tiny random Llama built in the test, on CPU (the ``openai_server`` fixture in ``tests/conftest.py``).

A random model writes no valid candidate, so every proposal is rejected, with its reason; what this pins is the
real path: each role agent's chat request reaches the server with its persona and the hazard seeds, the server's
answers come back through the openai backend, and round 2's requests carry round 1's verdicts."""

from __future__ import annotations

import pytest

for mod in ("torch", "transformers", "tokenizers", "openai", "fastapi", "uvicorn"):
    pytest.importorskip(mod)

pytestmark = [pytest.mark.slow, pytest.mark.train]


def test_multiagent_generator_against_a_real_server(openai_server):
    from safebeal.generation.multiagent import MultiAgentGenerator

    model, proxy = openai_server
    proxy.bodies.clear()
    backend = proxy.spec
    gen = MultiAgentGenerator(backend, rounds=2, per_agent=2, agents=["firefighter", "parent"], seed=1,
                              gen_kwargs={"temperature": 0.0, "max_tokens": 16})
    res = gen.run()
    # 2 agents x 2 rounds, every request answered by the server
    assert len(proxy.bodies) == 4
    assert all(b["model"] == model and b["max_tokens"] == 16 for b in proxy.bodies)
    systems = [b["messages"][0]["content"] for b in proxy.bodies]
    assert sum("You are a firefighter" in s for s in systems) == 2 and sum("You are the parent" in s for s in systems) == 2
    assert all("fire_heat.heat_source_left_on" in s for s in systems)  # the rule vocabulary the agents must use
    firsts = [b["messages"][1]["content"] for b in proxy.bodies[:2]]
    assert all("Nobody has proposed anything yet." in u for u in firsts)
    # nothing a random model writes parses as a candidate: rejected as such, never admitted, never a backend error
    assert res.entries == []
    assert {r.kind for r in res.rejections} == {"parse"}
    assert res.summary()["admitted"] == 0 and res.summary()["rejected"] == {"parse": 4}
    # round 2 sees round 1's verdicts: both agents' unparsable answers, rejected with the reason
    for b in proxy.bodies[2:]:
        user = b["messages"][1]["content"]
        assert "Round 2 of" in user
        assert "- round 1, firefighter: <unparsable> -> REJECTED (parse:" in user
        assert "- round 1, parent: <unparsable> -> REJECTED (parse:" in user
