"""Runs a team can trust (issue 34, part A): resume continues the recorded run, no silent mock, loud no-plan
classes, the server's error text kept, short labels, no credentials recorded, misspelled planner keys."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from openai_fake import PLAN, FakeServer, completion, error
from safebeal.cli import app

cli = CliRunner()


@pytest.fixture
def server_factory(monkeypatch):
    pytest.importorskip("openai")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    servers = []

    def make(script=None):
        s = FakeServer(script)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


def backend(server, extra: str = "") -> str:
    return f"openai:model=m,base_url={server.url},api_key_env=none,max_retries=0,concurrency=2" + extra


def bench(tmp_path, *args, out="run"):
    return cli.invoke(app, ["bench", "--dataset", "activity-test", "--out", str(tmp_path / out), "--workers", "1",
                            "--no-png", "--cache-dir", str(tmp_path / "cache"), *args])


def rows(tmp_path, out="run"):
    return [json.loads(line) for line in (tmp_path / out / "samples.jsonl").read_text().splitlines()]


# -- 3: loud no-plan classes ----------------------------------------------------------------------------------
def test_every_output_truncated_is_loud_and_counted(tmp_path, server_factory):
    """10 of 10 outputs stopped at max_tokens, none parsed: exit 1, the planner, the counts and a reason."""
    server = server_factory(lambda n, body: (200, completion("Let me think step by step about the", "length"), 0))
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server), "--limit", "3")
    assert r.exit_code == 1, r.output
    assert "no sample holds a plan (truncated 3)" in r.output
    assert "stopped at max_tokens (finish_reason=length, 5 tokens)" in r.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    (m,) = summary.values()
    assert m["plan_outcomes"] == {"plan": 0, "generation_failed": 0, "truncated": 3, "unparseable": 0, "refusal": 0,
                                  "empty": 0}
    assert m["truncated_rate"] == 1.0 and m["unparseable_rate"] == 0.0 and m["no_plan_rate"] == 1.0
    assert len(rows(tmp_path)) == 3


def test_a_run_with_some_plans_is_not_flagged(tmp_path, server_factory):
    server = server_factory(lambda n, body: (200, completion(PLAN if n == 0 else "no idea", "stop"), 0))
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server), "--limit", "3")
    assert r.exit_code == 0, r.output
    assert "no sample holds a plan" not in r.output
    (m,) = json.loads((tmp_path / "run" / "summary.json").read_text()).values()
    assert m["plan_outcomes"]["plan"] == 1 and m["plan_outcomes"]["unparseable"] == 2
