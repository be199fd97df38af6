"""Step-by-step agents against a real OpenAI-compatible server (``transformers serve`` with a tiny random Llama
built here, the ``openai_server`` fixture), on saferisks-test and on the explicit-hazard set: the run is killed
(SIGKILL) once it has written a sample, and ``--resume`` completes it with every task once and what was written
before the kill kept as it was. Slow; skipped without the serving extras."""

from __future__ import annotations

import json
import sys

import pytest
from kill_helpers import kill_once_written, resume

for mod in ("torch", "transformers", "tokenizers", "openai", "fastapi", "uvicorn"):
    pytest.importorskip(mod)

pytestmark = [pytest.mark.slow, pytest.mark.train]


@pytest.mark.parametrize("dataset,limit,n", [("saferisks-test", 4, 4), ("saferisks-explicit:split=test", 4, 4)])
def test_killed_agent_run_on_a_real_server_resumes(openai_server, tmp_path, dataset, limit, n):
    _, proxy = openai_server
    out = tmp_path / "run"

    def bench(*extra):
        return [sys.executable, "-c", "from safebeal.cli import run; run()", "bench", "--planner",
                "react:max_steps=2,max_failures=2,max_new_tokens=8,parallel=1", "--backend", proxy.spec,
                "--dataset", dataset, "--limit", str(limit), "--workers", "1", "--no-cache", "--no-png",
                "--out", str(out), *extra]

    samples = out / "samples.jsonl"
    _, kept = kill_once_written(bench(), samples, timeout=300)
    assert 0 < len(kept) < n
    r = resume(bench("--resume"))
    assert r.returncode in (0, 1), r.stderr[-2000:]  # 1: no sample holds a plan (a random model), as may happen
    final = [json.loads(x) for x in samples.read_text().splitlines()]
    assert len(final) == len({x["task_id"] for x in final}) == n
    assert final[: len(kept)] == kept
    for x in final:
        assert x["turns"] and all({"action", "result", "violations"} <= set(t) for t in x["turns"])
        assert x["agent"]["stop"] in ("done", "refused", "step_limit", "failure_limit")
    summary = json.loads((out / "summary.json").read_text())
    [label] = summary
    if dataset.startswith("saferisks-explicit"):
        assert {x["request"]["kind"] for x in final} == {"hazardous", "twin"}
        assert summary[label]["rejection_rate"] is not None and summary[label]["over_refusal_rate"] is not None
