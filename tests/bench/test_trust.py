"""Runs a team can trust (issue 34, part A): resume continues the recorded run, no silent mock, loud no-plan
classes, the server's error text kept, short labels, no credentials recorded, misspelled planner keys."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from openai_fake import PLAN, FakeServer, backend, completion, error, server_factory  # noqa: F401 (a fixture)
from safebeal.cli import app

cli = CliRunner()


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
    # the report's table and the CLI leaderboard show why the plans are missing
    import re

    from safebeal.bench.commands import leaderboard_table

    doc = (tmp_path / "run" / "report.html").read_text()
    head = re.search(r'<table id="leaderboard"><tr>(.*?)</tr>', doc).group(1)
    cols = re.findall(r"<th>(.*?)</th>", head)
    assert cols[-5:] == ["Gen. failed", "Unparseable", "Truncated", "Refused", "top violated category"]
    row = re.search(r'<table id="leaderboard">.*?</tr>\s*<tr>(.*?)</tr>', doc, re.S).group(1)
    cells = re.findall(r"<td>(.*?)</td>", row)
    assert [c.split(" <small>")[0] for c in cells[-5:-1]] == ["0.0", "0.0", "100.0", "0.0"]
    table = leaderboard_table(summary)
    got = {c.header: list(c.cells) for c in table.columns}
    assert (got["gen. failed"], got["unparsed"], got["trunc."], got["refused"]) == (["0"], ["0"], ["3"], ["0"])


def test_a_run_with_some_plans_is_not_flagged(tmp_path, server_factory):
    server = server_factory(lambda n, body: (200, completion(PLAN if n == 0 else "no idea", "stop"), 0))
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server), "--limit", "3")
    assert r.exit_code == 0, r.output
    assert "no sample holds a plan" not in r.output
    (m,) = json.loads((tmp_path / "run" / "summary.json").read_text()).values()
    assert m["plan_outcomes"]["plan"] == 1 and m["plan_outcomes"]["unparseable"] == 2


# -- 1: --resume continues exactly the recorded run -------------------------------------------------------------
def _quick_search(monkeypatch, stop_after=None):
    """The search planner with its A* replaced by a one-line plan (the test is about the run, not the search), and
    optionally a planted kill: the run is interrupted after ``stop_after`` plans."""
    import safebeal.planners.search as search

    monkeypatch.setattr(search, "search_plan", lambda scene, goal, *a: ["[WALK] <kitchen> (11)"])
    if stop_after is None:
        return
    orig = search.SearchPlanner.plan_iter

    def plan_iter(self, tasks, stop=None):
        for i, out in enumerate(orig(self, tasks, stop)):
            if i == stop_after:
                raise KeyboardInterrupt
            yield out

    monkeypatch.setattr(search.SearchPlanner, "plan_iter", plan_iter)


@pytest.mark.parametrize("limit, kill_after, n", [
    (12, 5, 12),  # the scenario on 12 tasks
    pytest.param(0, 100, 342, marks=pytest.mark.slow),  # the scenario as written (about 3 minutes)
])
def test_killed_search_run_resumed_ends_with_exactly_the_recorded_search_samples(tmp_path, monkeypatch, limit,
                                                                                 kill_after, n):
    """The issue's scenario: `bench --planner search --dataset virtualhome --out runs/k` stopped part-way, then the
    command it prints, `bench --resume --out runs/k`: 342 search samples and nothing else (was: the 15 replay
    planners added, search left at 263 of 342, exit 0)."""
    out = str(tmp_path / "k")
    with monkeypatch.context() as m:
        _quick_search(m, stop_after=kill_after)
        r = cli.invoke(app, ["bench", "--planner", "search", "--dataset", "virtualhome", "--out", out, "--no-png",
                             *(["--limit", str(limit)] if limit else [])])
    assert r.exit_code == 130, r.output
    assert f"continue with --resume --out {out}" in r.output
    before = rows(tmp_path, "k")
    assert 0 < len(before) <= kill_after and {x["planner"] for x in before} == {"search"}
    _quick_search(monkeypatch)
    r = cli.invoke(app, ["bench", "--resume", "--out", out, "--no-png"])
    assert r.exit_code == 0, r.output
    after = rows(tmp_path, "k")
    assert len(after) == n and {x["planner"] for x in after} == {"search"}
    assert len({x["task_id"] for x in after}) == n
    summary = json.loads((tmp_path / "k" / "summary.json").read_text())
    assert list(summary) == ["search"] and summary["search"]["n"] == n
    config = json.loads((tmp_path / "k" / "config.json").read_text())
    assert config["planners"] == ["search"] and config["n_tasks"] == n


def test_resume_flags_that_contradict_the_record_exit_2_naming_both(tmp_path):
    out = str(tmp_path / "r")
    r = cli.invoke(app, ["bench", "--planner", "replay:gpt-4o", "--limit", "3", "--out", out, "--no-png"])
    assert r.exit_code == 0, r.output
    for flags, needle in [
        (["--dataset", "activity-test"], "--dataset 'activity-test' contradicts the run's recorded 'virtualhome'"),
        (["--limit", "5"], "--limit 5 contradicts the run's recorded 3"),
        (["--planner", "replay:llama-3-8b"], "--planner 'replay:llama-3-8b' contradicts the run's recorded "
                                             "['replay:gpt-4o']"),
        (["--strict"], "--strict True contradicts the run's recorded False"),
        (["--temperature", "0.5"], "--temperature 0.5 contradicts the run's recorded None"),
        (["--overwrite"], "--resume and --overwrite contradict each other"),
    ]:
        r = cli.invoke(app, ["bench", "--resume", "--out", out, *flags])
        assert r.exit_code == 2, (flags, r.output)
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], (flags, r.output)
    # flags that agree with the record are accepted; the samples stay those of the recorded run
    r = cli.invoke(app, ["bench", "--resume", "--out", out, "--limit", "3", "--dataset", "virtualhome",
                         "--planner", "replay:gpt-4o", "--no-png"])
    assert r.exit_code == 0, r.output
    assert len(rows(tmp_path, "r")) == 3
    r = cli.invoke(app, ["bench", "--resume", "--no-png"])
    assert r.exit_code == 2 and "--resume needs --out" in r.output
    # --retry-failed reads the same record: a contradicting flag is refused the same way, a subset of planners is not
    r = cli.invoke(app, ["bench", "--retry-failed", "--out", out, "--dataset", "activity-test"])
    assert r.exit_code == 2 and "--dataset 'activity-test' contradicts the run's recorded 'virtualhome'" in r.output
    r = cli.invoke(app, ["bench", "--retry-failed", "--out", out, "--planner", "replay:gpt-4o-2024-05-13", "--no-png"])
    assert r.exit_code == 0, r.output


def test_a_resumed_run_that_stays_incomplete_says_which_and_exits_1(tmp_path, monkeypatch):
    out = str(tmp_path / "k")
    r = cli.invoke(app, ["bench", "--planner", "replay:gpt-4o", "--limit", "4", "--out", out, "--no-png"])
    assert r.exit_code == 0, r.output
    lines = (tmp_path / "k" / "samples.jsonl").read_text().splitlines()
    (tmp_path / "k" / "samples.jsonl").write_text("\n".join(lines[:1]) + "\n")
    import safebeal.planners.planners as planners

    monkeypatch.setattr(planners.ReplayPlanner, "plan", lambda self, tasks: [])  # a planner that skips its tasks
    r = cli.invoke(app, ["bench", "--resume", "--out", out, "--no-png"])
    assert r.exit_code == 1, r.output
    assert "replay:gpt-4o-2024-05-13: 3 of 4 tasks not done" in r.output


# -- 4: the server's error text is kept ---------------------------------------------------------------------------
@pytest.mark.parametrize("payload, said", [
    (error("The model `nope` does not exist or you do not have access to it.", "invalid_request_error"),
     "The model `nope` does not exist or you do not have access to it."),
    ({"detail": "Model nope not found; key sk-abcdefghijklmnop was sent"}, "Model nope not found; key *** was sent"),
    ({"error": "model 'nope' not found"}, "model 'nope' not found"),
])
def test_the_servers_error_message_is_in_the_sample(tmp_path, server_factory, payload, said):
    server = server_factory(lambda n, body: (400, payload, 0))
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", backend(server), "--limit", "1")
    assert r.exit_code == 1, r.output
    (rec,) = rows(tmp_path)
    assert rec["generation_error"].startswith("BadRequestError (HTTP 400): Error code: 400")
    assert said in rec["generation_error"] and "sk-abcdefghijklmnop" not in rec["generation_error"]
    assert said in r.output  # the first errors are printed


# -- 6: credentials in a base URL are never recorded -----------------------------------------------------------------
@pytest.mark.parametrize("where", ["env", "spec"])
def test_url_userinfo_is_stripped_from_everything_recorded(tmp_path, server_factory, monkeypatch, where):
    server = server_factory()
    url = server.url.replace("http://", "http://alice:s3cr3t-pw@")
    if where == "env":
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        spec = "openai:model=m,api_key_env=none,max_retries=0,concurrency=2"
    else:
        spec = f"openai:model=m,base_url={url},api_key_env=none,max_retries=0,concurrency=2"
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", spec, "--limit", "2", "--png")
    assert r.exit_code == 0, r.output
    assert len(server.requests) == 2  # the server was reached (with the credentials)
    run = tmp_path / "run"
    for name in ("config.json", "samples.jsonl", "summary.json", "report.html"):
        text = (run / name).read_text()
        assert "s3cr3t-pw" not in text and "alice" not in text, name
    assert "s3cr3t-pw" not in r.output and "alice" not in r.output
    config = json.loads((run / "config.json").read_text())
    (pc,) = config["planner_configs"].values()
    assert pc["backend"]["base_url"] == server.url
    # the resume takes the recorded run; given with its credentials again, the backend matches the record
    r = cli.invoke(app, ["bench", "--resume", "--out", str(run), "--backend", spec, "--no-png",
                         "--cache-dir", str(tmp_path / "cache")])
    assert r.exit_code == 0, r.output
    assert len(rows(tmp_path)) == 2


def test_redact_strips_userinfo_of_any_url():
    from safebeal.planners.backends.retry import redact, strip_userinfo

    assert strip_userinfo("openai:model=m,base_url=http://u:p4ss@h:8/v1,x=1") == "openai:model=m,base_url=http://h:8/v1,x=1"
    assert redact("APIConnectionError: cannot reach https://tok@api.example/v1") == \
        "APIConnectionError: cannot reach https://api.example/v1"
    assert strip_userinfo("mail bob@example.com") == "mail bob@example.com"


# -- 2: no silent mock ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["zero-shot", "few-shot:safety_prompt=true", "llm-planner", "clmasp", "react",
                                  "act:safety_prompt=true"])
def test_a_generating_planner_without_a_backend_is_an_error_listing_the_backends(tmp_path, spec):
    r = bench(tmp_path, "--planner", spec, "--limit", "1")
    assert r.exit_code == 2, r.output
    (line,) = r.output.strip().splitlines()
    assert line.startswith(f"error: planner '{spec.split(':')[0]}' generates its plans and has no backend")
    assert "backends: hf, mock, openai, transcript, vllm" in line
    assert not (tmp_path / "run" / "samples.jsonl").exists()


def test_the_mock_named_is_labelled_mock_and_its_echo_is_loud(tmp_path):
    r = bench(tmp_path, "--planner", "zero-shot", "--backend", "mock", "--limit", "2")
    assert r.exit_code == 1, r.output  # the mock echoes the prompt: no plan in any sample
    recs = rows(tmp_path)
    assert {x["planner"] for x in recs} == {"zero-shot/mock"}
    assert "zero-shot/mock: no sample holds a plan (unparseable 2)" in r.output


# -- 7: misspelled planner keys; check on an empty plan ---------------------------------------------------------------
def test_a_misspelled_planner_key_is_the_planners_error_with_the_valid_keys(tmp_path):
    r = bench(tmp_path, "--planner", "few-shot:temprature=0.5", "--backend", "mock", "--limit", "1")
    assert r.exit_code == 2, r.output
    (line,) = r.output.strip().splitlines()
    assert line.startswith("error: planner 'few-shot': unknown key 'temprature'; valid keys: backend, safety_prompt")
    assert "temperature" in line and "(and the mock backend's: responses, outputs" in line


@pytest.mark.parametrize("text", ["", "\n   \n"])
def test_check_on_an_empty_plan_is_one_line_exit_2(tmp_path, text):
    plan = tmp_path / "plan.txt"
    plan.write_text(text)
    r = cli.invoke(app, ["check", "--scene", "home:1", "--plan", str(plan)])
    assert r.exit_code == 2, r.output
    assert r.output.strip() == (f"error: {plan}: the plan is empty (no action line such as '[WALK] <kitchen> (11)'): "
                                "nothing to check")
    assert "safe: yes" not in r.output


# -- 5: labels --------------------------------------------------------------------------------------------------------
def test_short_default_labels_label_option_and_the_full_spec_in_config(tmp_path, server_factory):
    server = server_factory()
    spec = backend(server)
    r = bench(tmp_path, "--planner", "zero-shot", "--planner", "few-shot:safety_prompt=true",
              "--planner", "few-shot:label=fs warm,temperature=0.7", "--planner", "replay:model=gpt-4o,label=gpt4o-replay",
              "--backend", spec, "--limit", "1")
    assert r.exit_code == 0, r.output
    labels = ["zero-shot/m", "few-shot/m:safety_prompt=true", "fs warm", "gpt4o-replay"]
    assert sorted({x["planner"] for x in rows(tmp_path)}) == sorted(labels)
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["planners"] == labels
    assert config["planner_specs"] == {"zero-shot/m": f"zero-shot:backend={spec}",
                                       "few-shot/m:safety_prompt=true": f"few-shot:safety_prompt=true,backend={spec}",
                                       "fs warm": f"few-shot:temperature=0.7,backend={spec}",
                                       "gpt4o-replay": "replay:gpt-4o-2024-05-13"}
    assert list(json.loads((tmp_path / "run" / "summary.json").read_text())) == labels
    # two planners that would share a label: one line naming it and label=
    r = bench(tmp_path, "--planner", "few-shot", "--planner", "few-shot:concurrency=1", "--backend", spec, out="dup")
    assert r.exit_code == 2 and "two planners have the same name: ['few-shot/m']" in r.output
    assert "label=" in r.output


def test_replay_labels_are_unchanged():
    from safebeal.bench.runner import build_planners

    assert [p.run_label for p in build_planners(["replay:gpt-4o", "replay:llama-3-8b"])] == \
        ["replay:gpt-4o-2024-05-13", "replay:llama-3-8b-chat"]
