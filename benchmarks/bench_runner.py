"""Time `safebeal bench` against virtualhome-eval's own action-sequence evaluator, in the same run.

    python benchmarks/bench_runner.py [--model gpt-4o-2024-05-13] [--skip-reference] [--all]

- reference: ``virtualhome_eval.agent_eval.agent_evaluation(mode="evaluate_results", eval_type="action_sequence")``
  on one model's recorded outputs (342 tasks; parse, simulate, goal check; no safety).
- ours (1 model): ``run_bench`` with ``replay:<model>`` on ``virtualhome`` (parse, simulate, safety detector, goal
  check, run directory and report), with 1 and with 2 worker processes.
- ours (all 15 models, the default ``safebeal bench`` job) with ``--all``.

Each timing is wall-clock of a fresh call in this process (the scene graphs of the first run are not shared
with worker processes of the later ones: every ``run_bench`` starts its own workers).
"""

from __future__ import annotations

import argparse
import logging
import os
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


def ours(planners, workers: int) -> tuple:
    from safebeal.bench.runner import RunConfig, run_bench

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        summary = run_bench(RunConfig(planners=planners, dataset="virtualhome", out=str(Path(tmp) / "run"), workers=workers))
        return time.perf_counter() - t0, summary


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt-4o-2024-05-13")
    ap.add_argument("--skip-reference", action="store_true")
    ap.add_argument("--all", action="store_true", help="also time the default job: all 15 models")
    args = ap.parse_args()
    rows = []
    if not args.skip_reference:
        rows.append(("virtualhome-eval evaluator, 1 model", reference(args.model)))
    for w in (1, 2):
        t, s = ours([f"replay:{args.model}"], w)
        rows.append((f"safebeal bench, 1 model, {w} worker(s)", t))
    if args.all:
        t, s = ours(["replay:*"], 2)
        rows.append((f"safebeal bench, all {len(s)} models, 2 workers (default job)", t))
    base = rows[0][1]
    print(f"| run | seconds | ratio vs first row |\n|---|---|---|")
    for name, t in rows:
        print(f"| {name} | {t:.1f} | {t / base:.3f} |")


if __name__ == "__main__":
    main()
