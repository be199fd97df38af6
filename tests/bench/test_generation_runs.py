"""Paid runs against a counting local OpenAI-compatible server: the per-sample record, the exit status when
generations fail, --retry-failed, the response cache on resume, generation settings and their precedence,
reasoning-model requests, and streaming that survives an interrupt (issue 18)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from openai_fake import PLAN, FakeServer, backend, completion, error, server_factory  # noqa: F401 (a fixture)
from safebeal.bench.rundir import RunDir
from safebeal.cli import app

pytest.importorskip("openai")
cli = CliRunner()
RECORD_KEYS = ("prompt", "usage", "latency_s", "attempts", "finish_reason", "cache_hit")


def bench(tmp_path, *args, out="run"):
    return cli.invoke(app, ["bench", "--dataset", "activity-test", "--out", str(tmp_path / out), "--workers", "1",
                            "--cache-dir", str(tmp_path / "cache"), *args])


def rows(tmp_path, out="run"):
    return [json.loads(line) for line in (tmp_path / out / "samples.jsonl").read_text().splitlines()]


def test_contract_nothing_listens_exit_nonzero_with_every_sample_recorded(tmp_path):
    """The issue's contract, as written (port 9, default retries): non-zero, three samples with generation_error."""
    out = tmp_path / "D"
    r = cli.invoke(app, ["bench", "--planner", "zero-shot", "--backend",
                         "openai:model=x,base_url=http://127.0.0.1:9/v1,api_key_env=none,max_retries=0",
                         "--dataset", "virtualhome", "--limit", "3", "--out", str(out)])
    assert r.exit_code == 1, r.output
    assert "3 of 3 generations failed" in r.output and "APIConnectionError" in r.output
    recs = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(recs) == 3 and {x["task_id"] for x in recs} == {"3_1", "6_1", "7_1"}
    for x in recs:
        assert all(k in x for k in RECORD_KEYS)
        assert x["generation_error"].startswith("APIConnectionError") and x["raw_output"] is None
        assert x["attempts"] == 1 and x["cache_hit"] is False and x["usage"] is None and x["finish_reason"] is None
        assert x["prompt"][0]["role"] == "system"


@pytest.mark.slow
def test_contract_command_verbatim(tmp_path):
    r = cli.invoke(app, ["bench", "--planner", "zero-shot", "--backend",
                         "openai:model=x,base_url=http://127.0.0.1:9/v1,api_key_env=none", "--dataset", "virtualhome",
                         "--limit", "3", "--out", str(tmp_path / "D")])
    assert r.exit_code != 0
    recs = [json.loads(line) for line in (tmp_path / "D" / "samples.jsonl").read_text().splitlines()]
    assert len(recs) == 3 and all(x["generation_error"] and x["attempts"] == 6 for x in recs)


def test_record_fields_and_cache_hit_on_resume_without_a_second_request(tmp_path, server_factory):
    server = server_factory()
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server), "--limit", "3")
    assert r.exit_code == 0, r.output
    first = rows(tmp_path)
    assert len(first) == 3 and len(server.requests) == 3
    for x in first:
        assert x["raw_output"] == PLAN and x["generation_error"] is None
        assert x["usage"] == {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}
        assert x["finish_reason"] == "stop" and x["attempts"] == 1 and x["cache_hit"] is False
        assert x["latency_s"] >= 0 and x["gen_settings"] == {"temperature": 0.0, "max_tokens": 512}
    # the same run again, from scratch: every response comes from the cache, nothing is sent
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server), "--limit", "3", "--overwrite")
    assert r.exit_code == 0, r.output
    assert len(server.requests) == 3
    again = rows(tmp_path)
    assert all(x["cache_hit"] is True and x["attempts"] == 0 and x["raw_output"] == PLAN for x in again)
    assert {x["task_id"]: x["usage"] for x in again} == {x["task_id"]: x["usage"] for x in first}
    # a resume continues the recorded run (--limit 5 contradicts its 3: exit 2, nothing sent); a run of more tasks
    # pays only for the new ones; --no-cache pays again
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server), "--limit", "5", "--resume")
    assert r.exit_code == 2 and "--limit 5 contradicts the run's recorded 3" in r.output and len(server.requests) == 3
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server), "--limit", "5", out="more")
    assert r.exit_code == 0 and len(server.requests) == 5
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server), "--limit", "2", "--no-cache", out="nc")
    assert r.exit_code == 0 and len(server.requests) == 7
    assert all(x["cache_hit"] is False for x in rows(tmp_path, "nc"))
    # another setting is another request
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server), "--limit", "1", "--temperature", "0.5",
              out="t")
    assert r.exit_code == 0 and len(server.requests) == 8 and server.requests[-1]["temperature"] == 0.5


def test_replay_records_null_generation_fields(tmp_path):
    r = cli.invoke(app, ["bench", "--planner", "replay:gpt-4o", "--limit", "2", "--out", str(tmp_path / "r"),
                         "--workers", "1"])
    assert r.exit_code == 0, r.output
    for x in rows(tmp_path, "r"):
        assert all(k in x and x[k] is None for k in RECORD_KEYS)


def _fail_on(marker_tasks):
    def script(n, body):
        text = body["messages"][-1]["content"]
        if any(m in text for m in marker_tasks):
            return 500, error("boom"), 0
        return 200, completion(PLAN), 0
    return script


def test_fail_on_error_rate_and_retry_failed_regenerates_only_failures(tmp_path, server_factory):
    from safebeal.datasets.base import DATASETS

    tasks = DATASETS.create("activity-test").tasks()[:4]
    bad = [f"Task: {tasks[0].instruction}\n", f"Task: {tasks[2].instruction}\n"]
    server = server_factory(_fail_on(bad))
    spec = backend(server)
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", spec, "--limit", "4")
    assert r.exit_code == 1
    assert "2 of 4 generations failed" in r.output and "HTTP 500" in r.output and "--retry-failed" in r.output
    assert sum(x["generation_error"] is not None for x in rows(tmp_path)) == 2
    # the table's failed-generation column
    from safebeal.bench.commands import leaderboard_table

    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    table = leaderboard_table(summary)
    col = [c.header for c in table.columns].index("gen. failed")
    assert list(table.columns[col].cells) == ["2"]
    # a tolerated rate: 2/4 = 0.5 is not more than 0.5
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", spec, "--limit", "4", "--fail-on-error", "0.5", out="ok")
    assert r.exit_code == 0, r.output
    # the server recovers: --retry-failed sends exactly the two failed prompts again
    server.script = lambda n, body: (200, completion(PLAN), 0)
    before = len(server.requests)
    r = cli.invoke(app, ["bench", "--retry-failed", "--out", str(tmp_path / "run"), "--workers", "1",
                         "--cache-dir", str(tmp_path / "cache")])
    assert r.exit_code == 0, r.output
    retried = server.requests[before:]
    assert len(retried) == 2 and sorted(server.task_ids(retried)) == sorted(b.strip() for b in bad)
    final = rows(tmp_path)
    assert len(final) == 4 and all(x["generation_error"] is None for x in final)
    assert len(RunDir(tmp_path / "run").load()) == 4


def test_settings_precedence_is_recorded_once_and_sent(tmp_path, server_factory, monkeypatch):
    """backend defaults < bench flags < backend spec < planner spec."""
    server = server_factory()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)  # the base URL from the environment is recorded
    spec = "openai:model=m,api_key_env=none,max_retries=0,temperature=0.7,max_tokens=32"
    r = bench(tmp_path, "--planner", "zero-shot", "--planner", "few-shot:top_p=0.5,temperature=0.9", "--backend", spec,
              "--limit", "1", "--temperature", "0.2", "--max-tokens", "64", "--seed", "7", "--stop", "END")
    assert r.exit_code == 0, r.output
    bodies = sorted(server.requests, key=lambda b: len(b["messages"][-1]["content"]))  # few-shot's prompt is longer
    zero, few = bodies
    assert (zero["temperature"], zero["max_tokens"], zero["seed"], zero["stop"], "top_p" in zero) == (0.7, 32, 7, ["END"], False)
    assert (few["temperature"], few["max_tokens"], few["seed"], few["top_p"]) == (0.9, 32, 7, 0.5)
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    gens = {label.split("/")[0]: c["generation"] for label, c in config["planner_configs"].items()}
    assert gens == {"zero-shot": {"temperature": 0.7, "max_tokens": 32, "seed": 7, "stop": ["END"]},
                    "few-shot": {"temperature": 0.9, "max_tokens": 32, "seed": 7, "stop": ["END"], "top_p": 0.5}}
    for c in config["planner_configs"].values():  # recorded once: no settings in the backend's own config
        assert not {"temperature", "max_tokens", "seed"} & set(c["backend"])
        assert (c["backend"]["base_url"], c["backend"]["base_url_source"]) == (server.url, "OPENAI_BASE_URL")
    assert config["run_config"]["gen"] == {"temperature": 0.2, "max_tokens": 64, "seed": 7, "stop": ["END"]}
    # flags apply where no spec says otherwise
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", "openai:model=m,api_key_env=none,max_retries=0",
              "--limit", "1", "--temperature", "0.2", "--max-tokens", "64", out="flags")
    assert r.exit_code == 0 and (server.requests[-1]["temperature"], server.requests[-1]["max_tokens"]) == (0.2, 64)


def test_bad_settings_fail_before_any_request(tmp_path, server_factory):
    server = server_factory()
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server), "--top-p", "2")
    assert r.exit_code == 2 and "top_p must be in (0, 1]" in r.output
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server), "--reasoning-effort", "high", out="x")
    assert r.exit_code == 2 and "reasoning=true" in r.output
    assert server.requests == []


def test_reasoning_models_get_max_completion_tokens_and_no_temperature(tmp_path, server_factory):
    server = server_factory()
    spec = f"openai:model=o3-mini,base_url={server.url},api_key_env=none,max_retries=0"
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", spec, "--limit", "1", "--reasoning-effort", "low",
              "--max-tokens", "100", "--temperature", "0")
    assert r.exit_code == 0, r.output
    body = server.requests[0]
    assert body["max_completion_tokens"] == 100 and body["reasoning_effort"] == "low"
    assert not {"max_tokens", "temperature", "top_p"} & set(body)
    cfg = json.loads((tmp_path / "run" / "config.json").read_text())
    (planner_cfg,) = cfg["planner_configs"].values()
    assert planner_cfg["generation"] == {"max_completion_tokens": 100, "reasoning_effort": "low"}
    assert planner_cfg["backend"]["reasoning"] is True
    # a model the name rule does not know, declared a reasoning model
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server, ",model=my-thinker,reasoning=true"),
              "--limit", "1", out="r2")
    assert r.exit_code == 0 and server.requests[-1]["max_completion_tokens"] == 512


# -- streaming and interrupts ---------------------------------------------------------------------------------
def _bench_process(tmp_path, url: str, limit: int) -> subprocess.Popen:
    import safebeal

    env = {**os.environ, "PYTHONPATH": str(Path(safebeal.__file__).parents[1]), "OMP_NUM_THREADS": "1"}
    spec = f"openai:model=m,base_url={url},api_key_env=none,max_retries=0,concurrency=2,timeout=120"
    cmd = [sys.executable, "-c", "from safebeal.cli import app; app()", "bench", "--planner", "zero-shot",
           "--backend", spec, "--dataset", "activity-test", "--limit", str(limit), "--out", str(tmp_path / "run"),
           "--workers", "2", "--cache-dir", str(tmp_path / "cache")]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=_default_sigint)


def _default_sigint() -> None:
    """A child of a pytest-xdist worker inherits its ignored SIGINT, and Python installs no KeyboardInterrupt
    handler for an ignored signal: give the run the default disposition a user's shell gives it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen, limit_s: float = 120) -> None:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if path.exists() and len(path.read_text().splitlines()) >= n:
            return
        if proc.poll() is not None:
            raise AssertionError(proc.stdout.read().decode())
        time.sleep(0.05)
    raise AssertionError("no samples appeared")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_streaming_survives_an_interrupt_and_resume_completes(tmp_path, server_factory, sig):
    """Three requests answer at once, the rest hang for 60 s: the three samples are on disk while the others are
    in flight (no batch barrier); Ctrl-C ends the run without waiting for them, a kill loses nothing finished;
    the resume re-sends none of the answered requests and completes the run."""
    server = server_factory(lambda n, body: (200, completion(PLAN), 0 if n < 3 else 60))
    proc = _bench_process(tmp_path, server.url, limit=6)
    samples = tmp_path / "run" / "samples.jsonl"
    _wait_for_lines(samples, 3, proc)
    time.sleep(0.3)
    assert proc.poll() is None  # still waiting for the hanging requests
    os.killpg(proc.pid, sig) if sig == signal.SIGKILL else proc.send_signal(sig)
    code = proc.wait(timeout=30)  # well before any hanging request would be answered
    assert code == (130 if sig == signal.SIGINT else -signal.SIGKILL)
    kept = RunDir(tmp_path / "run").load()
    answered = {json.dumps(b["messages"]) for b in server.completed}
    assert len(answered) == 3
    assert {json.dumps(e.prompt) for e in kept} == answered  # every finished generation is a sample on disk
    # the server answers everything now; the resume sends only the prompts never answered
    server.script = lambda n, body: (200, completion(PLAN), 0)
    before = len(server.requests)
    r = bench(tmp_path, "--planner", "zero-shot", "--backend",
              f"openai:model=m,base_url={server.url},api_key_env=none,max_retries=0,concurrency=2,timeout=120",
              "--limit", "6", "--resume")
    assert r.exit_code == 0, r.output
    resent = {json.dumps(b["messages"]) for b in server.requests[before:]}
    assert len(resent) == 3 and not resent & answered
    final = RunDir(tmp_path / "run").load()
    assert len(final) == 6 and all(e.raw_output == PLAN for e in final)


def test_requests_stay_in_flight_across_samples(tmp_path, server_factory):
    """No batch barrier: with concurrency 2, two requests are in flight while earlier samples are evaluated."""
    import threading

    state = {"inflight": 0, "max": 0}
    lock = threading.Lock()

    def script(n, body):
        with lock:
            state["inflight"] += 1
            state["max"] = max(state["max"], state["inflight"])
        time.sleep(0.05)
        with lock:
            state["inflight"] -= 1
        return 200, completion(PLAN), 0

    server = server_factory(script)
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server), "--limit", "6")
    assert r.exit_code == 0, r.output
    assert len(server.requests) == 6 and state["max"] == 2


def test_a_planner_serves_several_runs_with_the_cache(tmp_path, server_factory):
    """Was: the first run closed the response cache it had attached to the planner's backend, and the next run
    with the same planner object failed ("Cannot operate on a closed database")."""
    from safebeal.bench.runner import RunConfig, run_bench
    from safebeal.planners.planners import PLANNERS

    server = server_factory()
    planner = PLANNERS.create(f"zero-shot:backend={backend(server)}")
    for name in ("a", "b"):
        run_bench(RunConfig(planners=[planner.spec], dataset="activity-test", out=str(tmp_path / name), workers=1,
                            limit=2, cache_dir=str(tmp_path / "cache")), planners=[planner])
    assert planner.backend.cache is None  # detached when each run ended
    assert len(server.requests) == 2  # the second run was served from the cache
    assert all(x["cache_hit"] for x in rows(tmp_path, "b"))
