"""``bench --limit N --sample first|random|stratified --seed S``, ``--category``, ``--task``/``--tasks-file``,
``--epochs K``: which tasks a run takes, the epoch field, resume by epoch, per-task variance, config.json."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from safebeal.bench.rundir import RunDir
from safebeal.bench.runner import RunConfig, run_bench
from safebeal.bench.sampling import select_tasks, stratified_order, summarize_epochs
from safebeal.cli import app
from safebeal.datasets.base import DATASETS
from safebeal.errors import SafebealError


def _t(tid, cat, fam):
    return SimpleNamespace(id=tid, categories=[cat], meta={"cluster": fam})


MADE_UP = [_t("a1", "A", "a-x"), _t("a2", "A", "a-x"), _t("a3", "A", "a-y"), _t("b1", "B", "b-x"),
           _t("b2", "B", "b-x"), _t("c1", "C", "c-x")]


def test_stratified_covers_categories_then_clusters_made_up():
    order = [t.id for t in stratified_order(MADE_UP, seed=0)]
    assert sorted(order) == sorted(t.id for t in MADE_UP)
    # round-robin over categories A, B, C: the first three are one of each
    assert sorted(i[0] for i in order[:3]) == ["a", "b", "c"]
    # within A, round-robin over its clusters: A's first two picks are one of a-x and a3 (a-y)
    a_picks = [i for i in order if i[0] == "a"]
    assert "a3" in a_picks[:2]
    four = select_tasks(MADE_UP, 4, "stratified", 0)
    assert [t.id[0] for t in four].count("a") == 2 and {t.id[0] for t in four} == {"a", "b", "c"}
    assert [t.id for t in four] == [t.id for t in MADE_UP if t in four]  # the dataset's order
    assert select_tasks(MADE_UP, 4, "stratified", 5) == select_tasks(MADE_UP, 4, "stratified", 5)


def test_first_is_the_old_limit_and_filters():
    assert [t.id for t in select_tasks(MADE_UP, 2)] == ["a1", "a2"]
    assert [t.id for t in select_tasks(MADE_UP, 0)] == [t.id for t in MADE_UP]
    assert [t.id for t in select_tasks(MADE_UP, categories=["B", "C"])] == ["b1", "b2", "c1"]
    assert [t.id for t in select_tasks(MADE_UP, task_ids=["c1", "a2"])] == ["a2", "c1"]
    with pytest.raises(SafebealError, match="unknown task id.*zz, yy"):
        select_tasks(MADE_UP, task_ids=["a1", "zz", "yy"])
    with pytest.raises(SafebealError, match="--category D: no such category"):
        select_tasks(MADE_UP, categories=["D"])
    with pytest.raises(SafebealError, match="--sample 'best'"):
        select_tasks(MADE_UP, 2, "best")
    r = select_tasks(MADE_UP, 3, "random", 1)
    assert len(r) == 3 and r == select_tasks(MADE_UP, 3, "random", 1)


def test_limit_10_on_saferisks_test_spans_categories_and_families():
    tasks = DATASETS.create("saferisks-test").tasks()
    first = select_tasks(tasks, 10)
    assert len({t.meta["family"] for t in first}) == 1  # what --limit did: 10 variants of one family
    strat = select_tasks(tasks, 10, "stratified", 0)
    assert len({t.categories[0] for t in strat}) == 8
    assert len({t.meta["family"] for t in strat}) == 10


def _ep(task, epoch, safe, success=True):
    return {"planner": "p", "dataset": "d", "task_id": task, "epoch": epoch, "raw_output": "x", "safe": safe,
            "executable": True, "success": success, "cluster": None}


def test_summarize_epochs_per_task_variance_by_hand():
    # task t1: safe, unsafe, safe (mean 2/3, sample variance ((1/3)^2*2 + (2/3)^2)/2 = 1/3); t2: safe x3 (0)
    eps = [_ep("t1", 0, True), _ep("t1", 1, False), _ep("t1", 2, True)] + [_ep("t2", e, True) for e in range(3)]
    s = summarize_epochs(eps)
    assert s["n"] == 6
    assert s["safe_rate"] == pytest.approx(5 / 6)
    assert s["epochs"]["k"] == 3 and s["epochs"]["tasks"] == 2
    assert s["epochs"]["per_task_variance"]["safe_rate"] == pytest.approx((1 / 3 + 0) / 2, abs=1e-6)
    assert s["epochs"]["per_task_variance"]["success_rate"] == 0.0
    assert s["epochs"]["tasks_disagreeing"] == {"safe_success_rate": 1, "safe_rate": 1, "success_rate": 0}
    assert s["intervals"]["safe_rate"]["method"] == "cluster_bootstrap"  # repeats of a task are not independent
    assert s["intervals"]["safe_rate"]["clusters"] == 2


def test_epochs_each_repeat_a_sample_and_resume_by_epoch(tmp_path):
    from safebeal.planners.backends import MockBackend
    from safebeal.planners.planners import ZeroShotPlanner

    tasks = DATASETS.create("activity-test").tasks()[:2]
    calls = {}

    def respond(prompt):  # a task's first generation is its reference plan, every later one a refusal
        text = prompt[-1]["content"]
        t = next(t for t in tasks if t.instruction in text)
        calls[t.id] = calls.get(t.id, 0) + 1
        return t.reference if calls[t.id] == 1 else "I am sorry, I cannot help with that."

    def planners():
        return [ZeroShotPlanner(backend=MockBackend(responses=respond))]

    cfg = RunConfig(planners=["zero-shot"], dataset="activity-test", out=str(tmp_path / "run"), workers=1,
                    tasks=[t.id for t in tasks], epochs=3, cache=False)
    summary = next(iter(run_bench(cfg, planners=planners()).values()))
    eps = RunDir(tmp_path / "run").load()
    assert sorted((e.task_id, e.epoch) for e in eps) == sorted((t.id, k) for t in tasks for k in range(3))
    assert all((e.raw_output == next(t.reference for t in tasks if t.id == e.task_id)) == (e.epoch == 0) for e in eps)
    assert summary["n"] == 6 and summary["no_plan_rate"] == pytest.approx(4 / 6)
    # the reference plan succeeds (1) then two refusals (0, 0): sample variance 1/3 on each task
    assert summary["epochs"]["per_task_variance"]["success_rate"] == pytest.approx(1 / 3, abs=1e-6)
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert {k: config[k] for k in ("sample", "seed", "categories", "tasks", "epochs")} == {
        "sample": "first", "seed": None, "categories": [], "tasks": [t.id for t in tasks], "epochs": 3}
    # drop epoch 2 of one task: a resume regenerates exactly that sample
    lines = (tmp_path / "run" / "samples.jsonl").read_text().splitlines()
    keep = [l for l in lines if not (json.loads(l)["task_id"] == tasks[0].id and json.loads(l)["epoch"] == 2)]
    (tmp_path / "run" / "samples.jsonl").write_text("\n".join(keep) + "\n")
    calls.clear()
    cfg.resume = True
    run_bench(cfg, planners=planners())
    assert calls == {tasks[0].id: 1}
    assert len(RunDir(tmp_path / "run").load()) == 6


def test_cli_sampling_flags_recorded_and_unknown_ids_exit_2(tmp_path):
    (tmp_path / "ids.txt").write_text("# two tasks\n3_1\n\nzz_unknown\n")
    r = CliRunner().invoke(app, ["bench", "-p", "search", "--tasks-file", str(tmp_path / "ids.txt"),
                                 "--out", str(tmp_path / "a"), "--no-png"])
    assert r.exit_code == 2 and "zz_unknown" in r.output and "3_1" not in r.output.split("zz_unknown")[0][-20:]
    r = CliRunner().invoke(app, ["bench", "-p", "search", "--dataset", "saferisks-test", "--limit", "3", "--sample",
                                 "stratified", "--seed", "4", "--category", "fire_heat", "--category", "poisoning",
                                 "--out", str(tmp_path / "b"), "--no-png", "--json"])
    assert r.exit_code == 0, r.output
    config = json.loads((tmp_path / "b" / "config.json").read_text())
    assert (config["sample"], config["seed"], config["categories"], config["epochs"], config["n_tasks"]) == (
        "stratified", 4, ["fire_heat", "poisoning"], 1, 3)
    cats = {json.loads(l)["task_id"].split(".")[0] for l in (tmp_path / "b" / "samples.jsonl").read_text().splitlines()}
    assert cats == {"fire_heat", "poisoning"}


def test_resume_with_other_sampling_is_refused_naming_both(tmp_path):
    base = dict(planners=["search"], dataset="virtualhome", out=str(tmp_path / "run"), workers=1, limit=2,
                sample="random", seed=7)
    run_bench(RunConfig(**base))
    with pytest.raises(SafebealError, match=r"cannot resume: sample was 'random', now 'first'"):
        run_bench(RunConfig(**{**base, "sample": "first", "resume": True}))
    with pytest.raises(SafebealError, match=r"cannot resume: seed was 7, now 8"):
        run_bench(RunConfig(**{**base, "seed": 8, "resume": True}))
    with pytest.raises(SafebealError, match=r"cannot resume: epochs was 1, now 2"):
        run_bench(RunConfig(**{**base, "epochs": 2, "resume": True}))
    run_bench(RunConfig(**{**base, "resume": True}))  # the same settings: resumes (nothing left to do)
    assert len(RunDir(tmp_path / "run").load()) == 2


def test_rescore_keeps_the_runs_sample_and_every_epoch(tmp_path):
    from safebeal.bench.runner import rescore

    cfg = RunConfig(planners=["replay:gpt-4o"], dataset="virtualhome", out=str(tmp_path / "run"), workers=1, limit=3,
                    sample="random", seed=2, epochs=2)
    first = run_bench(cfg)
    again = rescore(tmp_path / "run", tmp_path / "again", workers=1)
    eps = RunDir(tmp_path / "again").load()
    assert sorted((e.task_id, e.epoch) for e in eps) == sorted((e.task_id, e.epoch) for e in RunDir(tmp_path / "run").load())
    assert len(eps) == 6 and again == first


def test_cli_resume_takes_the_recorded_sampling_and_refuses_a_contradicting_flag(tmp_path):
    """`bench --resume --out RUN` alone continues the same sampled tasks (config.json decides); a typed --sample or
    --epochs that disagrees exits 2 naming both values."""
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["bench", "-p", "replay:gpt-4o", "--limit", "4", "--sample", "random", "--seed", "3",
                                 "--out", str(out), "--no-png"])
    assert r.exit_code == 0, r.output
    samples = out / "samples.jsonl"
    lines = samples.read_text().splitlines()
    ids = sorted(json.loads(l)["task_id"] for l in lines)
    samples.write_text("\n".join(lines[:1]) + "\n")  # as if killed after the first sample
    r = CliRunner().invoke(app, ["bench", "--resume", "--out", str(out), "--no-png"])
    assert r.exit_code == 0, r.output
    assert sorted(json.loads(l)["task_id"] for l in samples.read_text().splitlines()) == ids
    for flag, value in (("--sample", "first"), ("--epochs", "2")):
        r = CliRunner().invoke(app, ["bench", "--resume", "--out", str(out), flag, value, "--no-png"])
        assert r.exit_code == 2 and flag in r.output, (flag, r.output)
