"""The benchmark runner end to end with scripted planners: run directory contents, hand-counted metrics, failures
recorded (never dropped), resume after a kill, re-scoring, worker-count independence, the CLI contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from safebeal.bench.rundir import RunDir, RunDirError
from safebeal.bench.runner import RunConfig, build_planners, rescore, run_bench
from safebeal.cli import app
from safebeal.datasets.base import DATASETS
from safebeal.planners.backends import MockBackend, MockFailure

N_TASKS = 6


@pytest.fixture(scope="module")
def tasks():
    return DATASETS.create("activity-test").tasks()[:N_TASKS]


def _scripted(tasks):
    """Task i gets: its ground truth (0, 1, 2), garbage (3), a truncated ground truth (4), a generation failure (5)."""
    by_key = {}
    for i, t in enumerate(tasks):
        key = f"Task: {t.instruction}\n{t.description}"
        if i < 3:
            by_key[key] = t.reference
        elif i == 3:
            by_key[key] = "I am sorry, I cannot help with that."
        elif i == 4:
            by_key[key] = "\n".join(t.reference.splitlines()[:1])
        else:
            by_key[key] = MockFailure("timeout")

    def respond(prompt):
        text = prompt[-1]["content"]
        for key, out in by_key.items():
            if key in text:
                return out
        raise AssertionError("prompt of an unknown task")

    return respond


def _planners(tasks):
    from safebeal.planners.planners import ZeroShotPlanner

    return [ZeroShotPlanner(backend=MockBackend(responses=_scripted(tasks)))]


def _cfg(tmp_path, name="run", **kw):
    base = dict(planners=["zero-shot"], dataset="activity-test", out=str(tmp_path / name), workers=1, limit=N_TASKS, chunk=2)
    base.update(kw)
    return RunConfig(**base)


def test_run_directory_and_hand_counted_metrics(tmp_path, tasks):
    summary = run_bench(_cfg(tmp_path), planners=_planners(tasks))
    run = tmp_path / "run"
    for f in ("config.json", "samples.jsonl", "summary.json", "report.html"):
        assert (run / f).exists(), f
    # the charts are inline SVG in report.html, and PNG files beside it (the run directory's contract: 3 PNGs)
    assert sorted(p.name for p in run.glob("*.png")) == ["leaderboard.png", "violations_by_category.png",
                                                        "violations_by_kind.png"]
    bare = run_bench(_cfg(tmp_path, "bare", png=False), planners=_planners(tasks))
    assert bare and not list((tmp_path / "bare").glob("*.png"))
    eps = RunDir(run).load()
    assert len(eps) == N_TASKS  # the failed generation is recorded, not dropped
    by_task = {e.task_id: e for e in eps}
    failed = by_task[tasks[5].id]
    assert failed.raw_output is None and "timeout" in failed.generation_error.lower()
    assert by_task[tasks[3].id].parse_error is not None
    (label,) = summary
    m = summary[label]
    assert m["n"] == N_TASKS
    # ground truth of 3 tasks is executable and reaches the goal; the one-line truncation is executable too
    exec_n = sum(e.executable for e in eps)
    assert exec_n == 4
    assert m["executable_rate"] == pytest.approx(exec_n / N_TASKS)
    succ = [e.task_id for e in eps if e.success]
    assert set(succ) == {t.id for t in tasks[:3]}
    assert m["success_rate"] == pytest.approx(3 / N_TASKS)
    safe_n = sum(e.safe for e in eps)
    assert m["safe_rate"] == pytest.approx(safe_n / N_TASKS)
    cfg = json.loads((run / "config.json").read_text())
    assert cfg["planners"] == [label] and cfg["dataset"] == "activity-test"
    assert len(cfg["rules_digest"]) == 16 and "versions" in cfg
    # task 3 declines ("I am sorry, I cannot help with that."), task 5's generation failed: no plan in 2 of 6
    assert m["no_plan"] == {"generation_error": 1, "empty": 0, "refusal": 1, "unparseable": 0, "truncated": 0}
    assert m["no_plan_rate"] == pytest.approx(2 / 6) and m["refusal_rate"] == pytest.approx(1 / 6)
    # the three ground-truth plans succeed; SSR counts those of them that are also safe, over all 6 tasks
    safe_gt = [t.id for t in tasks[:3] if by_task[t.id].safe]
    assert m["safe_success_rate"] == pytest.approx(len(safe_gt) / N_TASKS)
    assert m["intervals"]["safe_success_rate"]["method"] == "wilson"  # ActivityPrograms episodes have no cluster
    # every sample records the exact messages its planner sent
    planner = _planners(tasks)[0]
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert {r["task_id"]: r["prompt"] for r in rows} == {t.id: planner.messages(t) for t in tasks}
    assert rows[0]["prompt"][1]["content"].startswith("Task: ") and "Objects in the scene (name (id)" in rows[0]["prompt"][1]["content"]
    # re-scoring keeps what was sent
    assert rescore(run, tmp_path / "re", workers=1) == summary
    again = {e.task_id: e.prompt for e in RunDir(tmp_path / "re").load()}
    assert again == {r["task_id"]: r["prompt"] for r in rows}


class _Kill(Exception):
    pass


def test_resume_after_kill_loses_and_duplicates_nothing(tmp_path, tasks):
    calls = {"n": 0}

    def kill_after_first_chunk(done, total):
        calls["n"] += 1
        if done >= 2:
            raise _Kill()

    with pytest.raises(_Kill):
        run_bench(_cfg(tmp_path), planners=_planners(tasks), progress=kill_after_first_chunk)
    partial = RunDir(tmp_path / "run").load()
    assert 0 < len(partial) < N_TASKS
    # a half-written last line (the process died mid-write) is cut off and re-done
    with open(tmp_path / "run" / "samples.jsonl", "a") as f:
        f.write('{"planner": "zero-shot", "dataset": "activ')
    with pytest.raises(RunDirError, match="already holds samples"):
        run_bench(_cfg(tmp_path), planners=_planners(tasks))
    resumed = run_bench(_cfg(tmp_path, resume=True), planners=_planners(tasks))
    eps = RunDir(tmp_path / "run").load()
    keys = [e.key for e in eps]
    assert len(keys) == len(set(keys)) == N_TASKS
    fresh = run_bench(_cfg(tmp_path, name="fresh"), planners=_planners(tasks))
    assert resumed == fresh


def test_corrupted_middle_line_is_reported_with_its_number(tmp_path, tasks):
    run_bench(_cfg(tmp_path), planners=_planners(tasks))
    p = tmp_path / "run" / "samples.jsonl"
    lines = p.read_text().splitlines()
    lines[2] = "{not json"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(RunDirError, match=r"samples.jsonl:3: corrupted record"):
        run_bench(_cfg(tmp_path, resume=True), planners=_planners(tasks))


def test_workers_do_not_change_results_and_rescore(tmp_path):
    one = run_bench(RunConfig(planners=["replay:gpt-4o", "replay:llama-3-8b"], dataset="virtualhome", out=str(tmp_path / "a"),
                              workers=1, limit=12))
    two = run_bench(RunConfig(planners=["replay:gpt-4o", "replay:llama-3-8b"], dataset="virtualhome", out=str(tmp_path / "b"),
                              workers=2, limit=12, chunk=5))
    assert one == two
    strict = rescore(tmp_path / "a", tmp_path / "strict", strict=True, workers=1)
    same = rescore(tmp_path / "a", tmp_path / "same", workers=1)
    assert same == one
    for label in one:
        assert strict[label]["safe_rate"] <= one[label]["safe_rate"]
        assert sum(strict[label]["violations_by_kind"].values()) >= sum(one[label]["violations_by_kind"].values())


def test_backend_option_applies_to_generating_planners_only():
    ps = build_planners(["replay:gpt-4o", "few-shot"], backend="mock")
    assert ps[0].spec.startswith("replay:gpt-4o") and ps[1].spec == "few-shot:backend=mock"
    with pytest.raises(Exception, match="same name"):
        build_planners(["replay:gpt-4o", "replay:gpt-4o-2024-05-13"])


def test_cli_contract_summary_json(tmp_path):
    out = tmp_path / "cli"
    r = CliRunner().invoke(app, ["bench", "--planner", "replay:gpt-4o", "--planner", "replay:claude-3-haiku",
                                 "--dataset", "virtualhome", "--out", str(out), "--limit", "8", "--workers", "1"])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary) == 2
    for label, m in summary.items():
        for key in ("n", "safe_success_rate", "executable_rate", "success_rate", "safe_rate", "safe_rate_at_success",
                    "no_plan_rate", "refusal_rate", "violations_by_category", "violations_by_kind"):
            assert key in m, (label, key)
        assert m["n"] == 8
        for key in ("safe_success_rate", "executable_rate", "success_rate", "safe_rate"):
            assert 0.0 <= m[key] <= 1.0
        assert m["safe_success_rate"] <= min(m["success_rate"], m["safe_rate"])
    # a second run into the same directory must not silently mix runs
    r = CliRunner().invoke(app, ["bench", "--planner", "replay:gpt-4o", "--out", str(out), "--limit", "8"])
    assert r.exit_code == 2 and "--resume" in r.output
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 16 and all("prompt" in r and r["prompt"] is None for r in rows)  # replay sends no prompt
    r = CliRunner().invoke(app, ["report", str(out), "--json"])
    assert r.exit_code == 0 and json.loads(r.output) == summary
    assert len(list(out.glob("*.png"))) == 3  # bench draws them by default
    for p in out.glob("*.png"):
        p.unlink()
    r = CliRunner().invoke(app, ["report", str(out), "--no-png", "--json"])
    assert r.exit_code == 0 and json.loads(r.output) == summary and not list(out.glob("*.png"))
    r = CliRunner().invoke(app, ["report", str(out), "--json"])  # the charts as PNG files too
    assert r.exit_code == 0 and json.loads(r.output) == summary
    assert sorted(p.name for p in out.glob("*.png")) == ["leaderboard.png", "violations_by_category.png",
                                                        "violations_by_kind.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in out.glob("*.png"))
    r = CliRunner().invoke(app, ["report", str(out), "--markdown"])
    lines = r.output.strip().splitlines()
    assert r.exit_code == 0 and len(lines) == 4 and lines[0].startswith("| planner | n | SSR | SafeR | SuccR | SafeR@S | Executable | No plan")
    gpt = next(line for line in lines if line.startswith("| gpt-4o-2024-05-13 | 8 |"))
    m = summary["replay:gpt-4o-2024-05-13"]
    assert gpt.split(" | ")[2].startswith(f"{100 * m['safe_success_rate']:.1f} [")  # SSR: the first rate
    assert f"{100 * m['safe_rate']:.1f} [" in gpt
    r = CliRunner().invoke(app, ["bench", "--planner", "nonsense", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "unknown planner" in r.output


def test_resume_refuses_other_rules_or_dataset(tmp_path):
    """A resumed run judged by other rules (another rules digest) would mix two rule sets in one summary."""
    cfg = {"dataset": "virtualhome", "rules_digest": "aaaa", "strict": False, "planners": ["p"]}
    with RunDir(tmp_path / "run") as run:
        run.prepare(cfg, resume=False)
    for key, value in (("rules_digest", "bbbb"), ("dataset", "saferisks"), ("strict", True)):
        with RunDir(tmp_path / "run") as run, pytest.raises(RunDirError, match=f"cannot resume: {key} was"):
            run.prepare({**cfg, key: value}, resume=True)
    with RunDir(tmp_path / "run") as run:
        assert run.prepare({**cfg, "planners": ["q"]}, resume=True)["planners"] == ["p", "q"]
