"""Replay runs stream their samples (issue 34, item 11): the default job (the 15 recorded models, on the first 40
tasks) is killed with SIGKILL as soon as samples.jsonl holds samples; the file then holds complete records, fewer than
the job's, and ``--resume`` completes it with nothing repeated and nothing lost. Before, a replay job wrote
samples.jsonl only once every evaluation had finished: a kill lost everything."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from kill_helpers import kill_once_written, resume, written

LIMIT = 40
TOTAL = 15 * LIMIT  # the default job: replay:* is the 15 recorded models


def _bench(out: Path, *extra: str) -> list:
    return [sys.executable, "-c", "from safebeal.cli import run; run()", "bench", "--limit", str(LIMIT), "--workers", "2",
            "--no-png", "--out", str(out), *extra]


def test_killed_replay_run_keeps_its_samples_and_resumes(tmp_path):
    out = tmp_path / "run"
    samples = out / "samples.jsonl"
    seen, recs = kill_once_written(_bench(out), samples)
    # the first samples came while the run went on: streamed, not written once at the end
    assert 0 < seen < TOTAL, seen
    assert recs and len(recs) < TOTAL  # every complete line is a whole record (a cut one may follow: re-done on resume)
    keys = [(r["planner"], r["task_id"]) for r in recs]
    assert len(set(keys)) == len(keys)

    r = resume(_bench(out, "--resume"), timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    final = [json.loads(line) for line in samples.read_text().splitlines()]
    final_keys = [(x["planner"], x["task_id"]) for x in final]
    assert len(final) == TOTAL and len(set(final_keys)) == TOTAL  # every (planner, task) once
    assert final[: len(recs)] == recs  # what was written before the kill is kept as it was
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary) == 15 and all(m["n"] == LIMIT for m in summary.values())


def test_replay_samples_are_written_while_the_run_goes_on(tmp_path, monkeypatch):
    """In process, deterministic: the samples of a replay job (two worker processes; one evaluates inline, as each job is submitted) reach the file in several fsynced batches as their
    evaluations finish, the first long before the last (before: one batch, once all had finished)."""
    from safebeal.bench import runner
    from safebeal.bench.runner import RunConfig, run_bench

    # a short write interval: on a fast machine all 300 evaluations can finish within two 0.5 s intervals
    monkeypatch.setattr(runner, "RECORDED_WRITE_EVERY_S", 0.02)
    out = tmp_path / "run"
    batches = []

    def progress(done: int, total: int) -> None:
        if done:
            batches.append((done, written(out / "samples.jsonl"), time.monotonic()))

    run_bench(RunConfig(dataset="virtualhome", out=str(out), limit=20, workers=2, png=False), progress=progress)
    total = 15 * 20
    assert batches[-1][:2] == (total, total)
    assert len(batches) >= 2, batches  # written every RECORDED_WRITE_EVERY_S, not once at the end
    first_done, first_on_disk, _ = batches[0]
    assert first_on_disk == first_done < total  # counted only once on disk
