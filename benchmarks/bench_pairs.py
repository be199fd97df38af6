"""Speed of the preference-pair builder (safebeal.align.pairs).

1. Judging a mutant: simulating it from scratch vs reusing the safe plan's first k steps (``run_shared``), on the
   same mutants, interleaved, repeated; median per-mutant time and the ratio.
2. The build over the first N training programs with 1 and 2 worker processes, interleaved, repeated; median wall
   time, and CPU seconds of the single-process build.

    OMP_NUM_THREADS=1 python benchmarks/bench_pairs.py --programs 40 --repeats 3
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from safebeal.align import pairs as P
from safebeal.align.pair_judge import run_plan, run_shared
from safebeal.align.mutations import PlanContext, operators
from safebeal.datasets.activity_programs import split
from safebeal.safety import SafetyDetector


def mutants(n_programs: int, det):
    jobs = []
    for pid in split()["train"][:n_programs]:
        plan = P.activity_plan(pid)
        base = run_plan(plan.scene, plan.lines)
        if not base.executable:
            continue
        ctx = PlanContext.from_trajectory(base, det.rules.kb)
        for op in operators():
            for m in op.candidates(ctx, random.Random(f"bench:{pid}:{op.name}")):
                jobs.append((base, m))
                break
    return jobs


def bench_shared(jobs, repeats: int) -> dict:
    scratch, shared = [], []
    for _ in range(repeats):
        a = b = 0.0
        for base, m in jobs:  # interleaved: the same mutant both ways, back to back
            t = time.perf_counter()
            x = run_plan(base.scene, m.lines)
            a += time.perf_counter() - t
            t = time.perf_counter()
            y = run_shared(base, m.lines, m.step)
            b += time.perf_counter() - t
            assert x.executable == y.executable
        scratch.append(a / len(jobs))
        shared.append(b / len(jobs))
    s, r = statistics.median(scratch), statistics.median(shared)
    return {"mutants": len(jobs), "scratch_ms": 1000 * s, "shared_ms": 1000 * r, "ratio": r / s}


def bench_build(n: int, repeats: int) -> dict:
    walls = {1: [], 2: []}
    cpu1 = []
    pairs = None
    for _ in range(repeats):
        for w in (1, 2):
            t, c = time.perf_counter(), time.process_time()
            got, _ = P.build_pairs(P.BuildConfig(sources=("mutation",), limit=n, workers=w))
            walls[w].append(time.perf_counter() - t)
            if w == 1:
                cpu1.append(time.process_time() - c)
            pairs = len(got)
    return {"programs": n, "pairs": pairs, "wall_1": statistics.median(walls[1]), "wall_2": statistics.median(walls[2]),
            "cpu_1": statistics.median(cpu1), "speedup_2": statistics.median(walls[1]) / statistics.median(walls[2])}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    det = SafetyDetector(unknown_class="neutral")
    jobs = mutants(args.programs, det)
    s = bench_shared(jobs, args.repeats)
    print(f"judging one mutant ({s['mutants']} mutants, median of {args.repeats}): from scratch {s['scratch_ms']:.1f} ms, "
          f"sharing the prefix {s['shared_ms']:.1f} ms, ratio {s['ratio']:.2f}")
    b = bench_build(args.programs, args.repeats)
    print(f"build of {b['programs']} programs ({b['pairs']} pairs, median of {args.repeats}): 1 worker {b['wall_1']:.1f} s "
          f"wall / {b['cpu_1']:.1f} s CPU, 2 workers {b['wall_2']:.1f} s wall, speed-up {b['speedup_2']:.2f}x")


if __name__ == "__main__":
    main()
