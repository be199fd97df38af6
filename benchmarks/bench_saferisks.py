"""SafeRisks speed: the whole build + validate, and the two optimisations it relies on.

    python benchmarks/bench_saferisks.py                  # everything, writes benchmarks/results/saferisks.md
    python benchmarks/bench_saferisks.py --skip-full      # only the ratios (a minute)

1. Build (``build(seed=0, workers=2)``) and validate (``validate(entries, workers=2)``) of the whole set:
   wall-clock seconds and CPU seconds (this process plus its worker processes). The target is <= 300 s wall
   on 2 cores. The CPU time does not depend on other load on the machine; wall time does.
2. Rouge-L: ``safebeal.plans.rouge.rouge_l`` vs ``rouge.Rouge().get_scores`` (1.0.1) on the same pairs,
   interleaved, repeated; and the all-pairs check of the shipped instructions (Dice bound + exact LCS) vs the
   time the package would need for every pair.
3. Plans sharing a prefix: ``run_plans`` (safe and unsafe plans share the simulation of their common first
   lines) vs ``execute`` of each plan alone, same entries, interleaved, repeated.
Ratios are medians over the repeats.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

RESULTS = Path(__file__).resolve().parent / "results" / "saferisks.md"


def cpu_seconds() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


def bench_full(workers: int):
    from safebeal.datasets.saferisks import load_entries
    from safebeal.generation.build import build, validate

    out = Path(tempfile.mkdtemp()) / "saferisks.jsonl.gz"
    c0, t0 = cpu_seconds(), time.perf_counter()
    rep = build(seed=0, out=out, workers=workers)
    b_wall, b_cpu = time.perf_counter() - t0, cpu_seconds() - c0
    entries = load_entries(out)
    c0, t0 = cpu_seconds(), time.perf_counter()
    v = validate(entries, workers=workers)
    v_wall, v_cpu = time.perf_counter() - t0, cpu_seconds() - c0
    from safebeal.datasets.saferisks import DATA_FILE

    same = out.read_bytes() == DATA_FILE.read_bytes()
    return {"entries": len(rep.entries), "valid": v["valid"], "build_wall": b_wall, "build_cpu": b_cpu,
            "validate_wall": v_wall, "validate_cpu": v_cpu, "identical_to_shipped": same}


def bench_rouge(repeats: int, n_pairs: int):
    import random

    from rouge import Rouge

    from safebeal.datasets.saferisks import load_entries
    from safebeal.plans.rouge import pairs_at_or_above, rouge_l

    texts = [e.instruction for e in load_entries()]
    rng = random.Random(0)
    pairs = [(rng.choice(texts), rng.choice(texts)) for _ in range(n_pairs)]
    R = Rouge(metrics=["rouge-l"])
    ratios, t_pkg = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        a = [R.get_scores(h, r)[0]["rouge-l"]["f"] for h, r in pairs]
        tp = time.perf_counter() - t
        t = time.perf_counter()
        b = [rouge_l(h, r) for h, r in pairs]
        to = time.perf_counter() - t
        assert a == b
        ratios.append(tp / to)
        t_pkg.append(tp / len(pairs))
    t = time.perf_counter()
    close = pairs_at_or_above(texts, 0.7)
    t_all = time.perf_counter() - t
    n_all = len(texts) * (len(texts) - 1) // 2
    return {"pairs": n_pairs, "speedup": statistics.median(ratios), "pkg_per_pair_us": statistics.median(t_pkg) * 1e6,
            "n_texts": len(texts), "n_all_pairs": n_all, "all_pairs_s": t_all,
            "pkg_all_pairs_estimate_s": statistics.median(t_pkg) * n_all * 2, "close_pairs": len(close)}


def bench_prefix(repeats: int, n_entries: int):
    from safebeal.datasets.saferisks import load_entries
    from safebeal.generation.plans import run_plans
    from safebeal.scene import execute

    es = load_entries()
    es = es[:: max(1, len(es) // n_entries)][:n_entries]
    scenes = [e.scene() for e in es]
    ratios = []
    for _ in range(repeats):
        t_alone = t_shared = 0.0
        for e, sc in zip(es, scenes):
            plans = [e.safe_plan] + [u.plan for u in e.unsafe_plans]
            t = time.perf_counter()
            for p in plans:
                execute(sc, p)
            t_alone += time.perf_counter() - t
            t = time.perf_counter()
            run_plans(sc, plans)
            t_shared += time.perf_counter() - t
        ratios.append(t_alone / t_shared)
    lines = sum(len(e.safe_plan) + sum(len(u.plan) for u in e.unsafe_plans) for e in es)
    return {"entries": len(es), "lines": lines, "speedup": statistics.median(ratios)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-full", action="store_true", help="skip the whole build + validate")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows = []
    r = bench_rouge(args.repeats, 2000)
    rows.append(f"| Rouge-L F1, {r['pairs']} instruction pairs | rouge 1.0.1: {r['pkg_per_pair_us']:.0f} us/pair | "
                f"**{r['speedup']:.1f}x** faster, identical values |")
    rows.append(f"| every pair of the {r['n_texts']} shipped instructions ({r['n_all_pairs']:,} pairs, both orders) | "
                f"rouge 1.0.1 estimate: {r['pkg_all_pairs_estimate_s']:.0f} s | **{r['all_pairs_s']:.1f} s** "
                f"(Dice bound + exact LCS); {r['close_pairs']} pairs >= 0.7 |")
    p = bench_prefix(args.repeats, 150)
    rows.append(f"| safe + unsafe plans of {p['entries']} entries ({p['lines']} lines) | each plan run alone | "
                f"**{p['speedup']:.2f}x** faster with shared prefixes, identical trajectories |")
    full = None
    if not args.skip_full:
        full = bench_full(args.workers)
        total = full["build_wall"] + full["validate_wall"]
        rows.append(f"| build ({full['entries']} entries) | target build + validate <= 300 s on 2 cores | "
                    f"{full['build_wall']:.0f} s wall, {full['build_cpu']:.0f} CPU-s |")
        rows.append(f"| validate ({full['valid']}/{full['entries']} valid) | | {full['validate_wall']:.0f} s wall, "
                    f"{full['validate_cpu']:.0f} CPU-s |")
        rows.append(f"| **build + validate** | 300 s | **{total:.0f} s wall**; "
                    f"{full['build_cpu'] + full['validate_cpu']:.0f} CPU-s = "
                    f"{(full['build_cpu'] + full['validate_cpu']) / args.workers:.0f} s on {args.workers} free cores; "
                    f"rebuilt file byte-identical to the shipped one: {full['identical_to_shipped']} |")
    text = "\n".join([
        "# SafeRisks benchmark",
        "",
        f"Command: `python benchmarks/bench_saferisks.py{' --skip-full' if args.skip_full else ''}` "
        f"(workers={args.workers}, repeats={args.repeats}; ratios are medians, both sides measured in the same run, "
        f"interleaved).",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average at start {load:.1f} (the machine is shared: wall times vary with other load, CPU seconds do not).",
        "",
        "| what | baseline | result |",
        "|---|---|---|",
        *rows,
        "",
    ])
    print(text)
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
