"""Time `safebeal bench` against virtualhome-eval's own action-sequence evaluator, in the same run.

    python benchmarks/bench_runner.py [--model gpt-4o-2024-05-13] [--skip-reference] [--all]
    python benchmarks/bench_runner.py --compare RUN_A RUN_B   # same results? (timing fields left out)

- reference: ``virtualhome_eval.agent_eval.agent_evaluation(mode="evaluate_results", eval_type="action_sequence")``
  on one model's recorded outputs (342 tasks; parse, simulate, goal check; no safety).
- ours (1 model): ``run_bench`` with ``replay:<model>`` on ``virtualhome`` (parse, simulate, safety detector, goal
  check, run directory and report), with 1 and with 2 worker processes.
- ours (all 15 models, the default ``safebeal bench`` job) with ``--all``.

Each of ours is wall-clock of a fresh ``python -m safebeal.cli bench`` process, start-up included, so no run
profits from scenes another run loaded in memory. The on-disk scene cache (``safebeal.scene.cache``) is measured
both ways: ``cold`` (an empty cache directory: the run parses every scene and fills the cache) and ``warm`` (the
cache filled by an earlier run, the steady state of every run after the first).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def reference(model: str) -> float:
    from safebeal.resources import vh_recorded_outputs
    from virtualhome_eval.agent_eval import agent_evaluation

    logging.disable(logging.CRITICAL)
    with tempfile.TemporaryDirectory() as tmp:
        resp = Path(tmp) / "resp" / "action_sequence"
        resp.mkdir(parents=True)
        os.symlink(vh_recorded_outputs() / f"{model}_outputs.json", resp / f"{model}_outputs.json")
        t0 = time.perf_counter()
        agent_evaluation(mode="evaluate_results", eval_type="action_sequence", llm_response_path=str(Path(tmp) / "resp"),
                         output_dir=str(Path(tmp) / "out"))
        return time.perf_counter() - t0


def ours(planners, workers: int, cache_home: str) -> tuple:
    """``safebeal bench`` as a user runs it: a fresh process, its scene cache under ``cache_home``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        cmd = [sys.executable, "-m", "safebeal.cli", "bench", "--dataset", "virtualhome", "--out", str(out),
               "--workers", str(workers)]
        for p in planners:
            cmd += ["--planner", p]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "XDG_CACHE_HOME": cache_home})
        seconds = time.perf_counter() - t0
        return seconds, json.loads((out / "summary.json").read_text())


TIMING_FIELDS = ("seconds", "latency_s")


def _without_timing(value):
    if isinstance(value, dict):
        return {k: _without_timing(v) for k, v in value.items() if k not in TIMING_FIELDS}
    if isinstance(value, list):
        return [_without_timing(v) for v in value]
    return value


def compare_runs(a: Path, b: Path) -> list:
    """What differs between two run directories' summary.json and samples.jsonl, timing fields (``seconds``,
    ``latency_s``) left out and samples keyed by (planner, task): an empty list when the results are identical."""
    diffs = []
    sa, sb = (_without_timing(json.loads((Path(d) / "summary.json").read_text())) for d in (a, b))
    if sa != sb:
        diffs.append("summary.json differs: " + ", ".join(k for k in sorted(set(sa) | set(sb)) if sa.get(k) != sb.get(k)))
    rows = []
    for d in (a, b):
        recs = [json.loads(line) for line in (Path(d) / "samples.jsonl").read_text().splitlines() if line.strip()]
        rows.append({(r["planner"], r["task_id"]): _without_timing(r) for r in recs})
    if len(rows[0]) != len(rows[1]) or set(rows[0]) != set(rows[1]):
        diffs.append(f"samples.jsonl: {len(rows[0])} vs {len(rows[1])} samples, different (planner, task) keys")
    for key in sorted(set(rows[0]) & set(rows[1])):
        if rows[0][key] != rows[1][key]:
            fields = sorted(k for k in set(rows[0][key]) | set(rows[1][key]) if rows[0][key].get(k) != rows[1][key].get(k))
            diffs.append(f"samples.jsonl {key}: {fields}")
    return diffs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt-4o-2024-05-13")
    ap.add_argument("--skip-reference", action="store_true")
    ap.add_argument("--all", action="store_true", help="also time the default job: all 15 models")
    ap.add_argument("--compare", nargs=2, metavar=("RUN_A", "RUN_B"),
                    help="only compare two run directories' results (timing fields left out)")
    args = ap.parse_args()
    if args.compare:
        diffs = compare_runs(*map(Path, args.compare))
        n = sum(1 for line in (Path(args.compare[0]) / "samples.jsonl").read_text().splitlines() if line.strip())
        print("\n".join(diffs[:20]) if diffs else f"identical: summary.json and {n} samples (timing fields left out)")
        sys.exit(1 if diffs else 0)
    rows = []
    if not args.skip_reference:
        rows.append(("virtualhome-eval evaluator, 1 model", reference(args.model)))
    with tempfile.TemporaryDirectory() as cache_home:
        t, s = ours([f"replay:{args.model}"], 2, cache_home)
        rows.append(("safebeal bench, 1 model, 2 workers, scene cache cold (first run)", t))
        for w in (1, 2):
            t, s = ours([f"replay:{args.model}"], w, cache_home)
            rows.append((f"safebeal bench, 1 model, {w} worker(s), scene cache warm", t))
        if args.all:
            t, s = ours(["replay:*"], 2, cache_home)
            rows.append((f"safebeal bench, all {len(s)} models, 2 workers, scene cache warm (default job)", t))
    base = rows[0][1]
    print(f"| run | seconds | ratio vs first row | speed-up vs first row |\n|---|---|---|---|")
    for name, t in rows:
        print(f"| {name} | {t:.1f} | {t / base:.3f} | {base / t:.1f}x |")


if __name__ == "__main__":
    main()
