"""Time `safebeal bench` against virtualhome-eval's own action-sequence evaluator, in the same run.

    python benchmarks/bench_runner.py [--model gpt-4o-2024-05-13] [--skip-reference] [--all]
    python benchmarks/bench_runner.py --compare RUN_A RUN_B   # same results? (timing fields left out)
    python benchmarks/bench_runner.py --interleaved 1          # ours, reference, ours: wall, CPU, load average
    python benchmarks/bench_runner.py --before OLD/src         # an older package and this one, alternating

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
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def reference(model: str) -> float:
    return reference_timed(model)[0]


def reference_timed(model: str) -> tuple:
    """``(wall s, CPU s)`` of the reference evaluator on ``model``'s recorded outputs, in this process, its
    imports left out (it runs in one process: its CPU time is this process's)."""
    from safebeal.resources import vh_recorded_outputs
    from virtualhome_eval.agent_eval import agent_evaluation

    logging.disable(logging.CRITICAL)
    with tempfile.TemporaryDirectory() as tmp:
        resp = Path(tmp) / "resp" / "action_sequence"
        resp.mkdir(parents=True)
        os.symlink(vh_recorded_outputs() / f"{model}_outputs.json", resp / f"{model}_outputs.json")
        cwd = os.getcwd()
        os.chdir(tmp)  # it writes a logs/ folder into the working directory
        try:
            t0, c0 = time.perf_counter(), time.process_time()
            agent_evaluation(mode="evaluate_results", eval_type="action_sequence",
                             llm_response_path=str(Path(tmp) / "resp"), output_dir=str(Path(tmp) / "out"))
            return time.perf_counter() - t0, time.process_time() - c0
        finally:
            os.chdir(cwd)


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


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _ours_env(cache_home: str) -> dict:
    """A user's environment: the scene cache under ``cache_home`` and bytecode cached (as an installed package
    has it; this machine sets PYTHONDONTWRITEBYTECODE, which would recompile every edited module per run)."""
    env = {**os.environ, "XDG_CACHE_HOME": cache_home}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def ours_timed(planners, workers: int, cache_home: str, out: Path) -> tuple:
    """``(wall s, CPU s of every process)`` of one fresh ``python -m safebeal.cli bench`` process (its evaluation
    workers included) writing ``out``."""
    cmd = [sys.executable, "-m", "safebeal.cli", "bench", "--dataset", "virtualhome", "--out", str(out),
           "--workers", str(workers), "--overwrite"]
    for p in planners:
        cmd += ["--planner", p]
    c0, t0 = _children_cpu(), time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=_ours_env(cache_home))
    return time.perf_counter() - t0, _children_cpu() - c0


def reference_subprocess(model: str) -> tuple:
    """:func:`reference_timed` in a fresh process (so that neither side profits from the other's memory)."""
    code = ("import json, sys; sys.path.insert(0, %r); import bench_runner as b; "
            "print(json.dumps(b.reference_timed(%r)))" % (str(Path(__file__).parent), model))
    r = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return tuple(json.loads(r.stdout.strip().splitlines()[-1]))


def interleaved(model: str, rounds: int = 1, default_job: int = 2) -> list:
    """Ours and the reference in turn, under the same load: ours (1 model; 2 workers, then 1), the reference,
    ours again, ``rounds`` times; then the 15-model default job ``default_job`` times. Ours with the scene cache
    warm (filled by a first run that is not counted). Rows: (run, wall s, CPU s, load average before, after)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cache_home = str(Path(tmp) / "cache")
        one = [f"replay:{model}"]
        ours_timed(["replay:*"], 2, cache_home, Path(tmp) / "warm")  # fills the scene cache and the bytecode

        def ours_row(label: str, planners, w: int) -> None:
            la = os.getloadavg()[0]
            wall, cpu = ours_timed(planners, w, cache_home, Path(tmp) / "run")
            rows.append((label, wall, cpu, la, os.getloadavg()[0]))

        for r in range(rounds):
            for w in (2, 1):
                ours_row(f"safebeal bench, 1 model, {w} worker(s) (before the reference)", one, w)
            la = os.getloadavg()[0]
            wall, cpu = reference_subprocess(model)
            rows.append(("virtualhome-eval evaluator, 1 model", wall, cpu, la, os.getloadavg()[0]))
            for w in (2, 1):
                ours_row(f"safebeal bench, 1 model, {w} worker(s) (after the reference)", one, w)
        for _ in range(default_job):
            ours_row("safebeal bench, the default job: 15 models, 2 workers", ["replay:*"], 2)
    return rows


def before_after(before_src: str, rounds: int = 2) -> list:
    """The same runs with the package from ``before_src`` (e.g. an exported older ``src``) and from this
    environment, alternating: the 1-model run and the default job, ``rounds`` times each. Rows as
    :func:`interleaved`'s."""
    rows = []
    here = os.environ.get("PYTHONPATH", "")
    sides = (("before", before_src), ("after", here))
    with tempfile.TemporaryDirectory() as tmp:
        cache_home = str(Path(tmp) / "cache")
        try:
            for _, src in sides:  # warm-up (not counted): each side's scene cache and bytecode
                os.environ["PYTHONPATH"] = src
                ours_timed(["replay:*"], 2, cache_home, Path(tmp) / "warm")
            for label, planners in (("1 model", ["replay:gpt-4o-2024-05-13"]), ("the default job", ["replay:*"])):
                for _ in range(rounds):
                    for side, src in sides:
                        os.environ["PYTHONPATH"] = src
                        la = os.getloadavg()[0]
                        wall, cpu = ours_timed(planners, 2, cache_home, Path(tmp) / "run")
                        rows.append((f"{side}: safebeal bench, {label}, 2 workers", wall, cpu, la, os.getloadavg()[0]))
        finally:
            os.environ["PYTHONPATH"] = here
    return rows


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
    ap.add_argument("--interleaved", type=int, default=0, metavar="ROUNDS",
                    help="ours, the reference, ours (ROUNDS times), then the default job twice: wall and CPU time "
                         "of all processes, and the load average")
    ap.add_argument("--before", metavar="SRC",
                    help="alternate runs of the package in SRC (e.g. `git archive <commit> src | tar -x -C DIR`, then "
                         "DIR/src) with this environment's: 1 model and the default job, twice each")
    args = ap.parse_args()
    if args.before:
        print("| run | wall s | CPU s | load before / after |\n|---|---|---|---|")
        for name, wall, cpu, la, lb in before_after(args.before):
            print(f"| {name} | {wall:.2f} | {cpu:.2f} | {la:.1f} / {lb:.1f} |")
        return
    if args.interleaved:
        rows = interleaved(args.model, args.interleaved)
        ref = [r for r in rows if r[0].startswith("virtualhome-eval")]
        ref_wall, ref_cpu = sum(r[1] for r in ref) / len(ref), sum(r[2] for r in ref) / len(ref)
        print("| run | wall s | CPU s | load before / after | reference / ours, wall | reference / ours, CPU |")
        print("|---|---|---|---|---|---|")
        for name, wall, cpu, la, lb in rows:
            ratios = f"{ref_wall / wall:.1f}x | {ref_cpu / cpu:.1f}x" if "1 model" in name else "- | -"
            print(f"| {name} | {wall:.2f} | {cpu:.2f} | {la:.1f} / {lb:.1f} | {ratios} |")
        return
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
