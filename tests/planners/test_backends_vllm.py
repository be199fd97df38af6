"""The vllm backend's lifecycle with a fake ``vllm`` module: lazy engines, one at a time, released between
planners; an over-long prompt fails its own sample only; settings reach SamplingParams (issue 18)."""

from __future__ import annotations

import gc
import json
import sys
import types
import weakref

import pytest

from safebeal.planners.backends import BACKENDS, VLLMBackend

MAX_MODEL_LEN = 50_000  # characters stand in for tokens in the fake engine


class _Completion:
    def __init__(self, text, finish="stop"):
        self.text, self.token_ids, self.finish_reason = text, list(range(len(text.split()))), finish


class _Output:
    def __init__(self, prompt_len, text):
        self.prompt_token_ids = list(range(prompt_len))
        self.outputs = [_Completion(text)]


def make_fake_vllm():
    mod = types.ModuleType("vllm")
    mod.live = weakref.WeakSet()
    mod.built = []  # (model, live engines when it was built)
    mod.calls = []  # (model, number of prompts, sampling kwargs)

    class SamplingParams:
        def __init__(self, **kw):
            self.kw = kw

    class LLM:
        def __init__(self, model, **kw):
            gc.collect()
            mod.built.append((model, len(mod.live)))
            mod.live.add(self)
            self.model, self.kw = model, kw

        def chat(self, prompts, params, use_tqdm=False):
            mod.calls.append((self.model, len(prompts), dict(params.kw)))
            out = []
            for p in prompts:
                n = sum(len(m["content"]) for m in p)
                if n > MAX_MODEL_LEN:
                    raise ValueError(f"The decoder prompt (length {n}) is longer than the maximum model length "
                                     f"of {MAX_MODEL_LEN}.")
                out.append(_Output(n, "[WALK] <kitchen> (11)"))
            return out

    mod.SamplingParams, mod.LLM = SamplingParams, LLM
    return mod


@pytest.fixture
def fake_vllm(monkeypatch):
    mod = make_fake_vllm()
    monkeypatch.setitem(sys.modules, "vllm", mod)
    return mod


def user(text):
    return [{"role": "user", "content": text}]


def test_engine_is_built_on_first_use_and_released_on_close(fake_vllm):
    b = BACKENDS.create("vllm:model=org/a,max_tokens=16,temperature=0.5")
    assert isinstance(b, VLLMBackend) and not b.loaded and fake_vllm.built == []
    [g] = b.generate([user("make tea")])
    assert g.ok and g.finish_reason == "stop" and g.usage == {"prompt_tokens": 8, "completion_tokens": 3, "total_tokens": 11}
    assert fake_vllm.built == [("org/a", 0)] and b.loaded
    assert fake_vllm.calls[-1][2] == {"temperature": 0.5, "max_tokens": 16, "top_p": 1.0, "seed": 0}
    b.generate([user("again")])
    assert len(fake_vllm.built) == 1  # the engine is kept while the backend is in use
    b.close()
    gc.collect()
    assert not b.loaded and len(fake_vllm.live) == 0
    b.generate([user("after release")])  # rebuilt on demand
    assert [m for m, _ in fake_vllm.built] == ["org/a", "org/a"]


def test_an_over_long_prompt_fails_only_its_own_sample(fake_vllm):
    b = BACKENDS.create("vllm:model=org/a")
    out = b.generate([user("short"), user("x" * (MAX_MODEL_LEN + 1)), user("also short")])
    assert [g.ok for g in out] == [True, False, True]
    assert "longer than the maximum model length" in out[1].error and out[1].text is None
    assert [n for _, n, _ in fake_vllm.calls] == [3, 1, 1, 1]  # the batch, then one at a time


def test_a_multi_model_run_holds_one_engine_at_a_time(fake_vllm, tmp_path):
    from safebeal.bench.runner import RunConfig, run_bench

    cfg = RunConfig(planners=["zero-shot:backend=vllm:model=org/a", "few-shot:backend=vllm:model=org/b",
                              "llm-planner:backend=vllm:model=org/c"],
                    dataset="activity-test", out=str(tmp_path / "run"), workers=1, limit=2, cache=False)
    summary = run_bench(cfg)
    assert len(summary) == 3
    # each engine was built when its planner started, with no other engine alive
    assert fake_vllm.built == [("org/a", 0), ("org/b", 0), ("org/c", 0)]
    gc.collect()
    assert len(fake_vllm.live) == 0
    rows = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and all(r["finish_reason"] == "stop" and r["usage"]["prompt_tokens"] > 0 for r in rows)


def test_vllm_extra_does_not_pin_torch():
    """[vllm] and [hf] must be installable together: no torch pin in any extra that conflicts with vLLM's."""
    import tomllib
    from pathlib import Path

    data = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    extras = data["project"]["optional-dependencies"]
    assert "hf" in extras and any(d.startswith("transformers") for d in extras["hf"])
    for name, deps in extras.items():
        for d in deps:
            assert not (d.startswith("torch") and "==" in d), (name, d)


def test_vllm_backend_passes_check_backend(fake_vllm):
    from safebeal.testing import check_backend

    gens = check_backend("vllm:model=org/a,max_tokens=16")
    assert [g.text for g in gens] == ["[WALK] <kitchen> (11)", "[WALK] <kitchen> (11)"]
