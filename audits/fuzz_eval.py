"""Fuzz the evaluation path with mutated real LLM outputs (issue 21): crashes, timeouts, time per episode.

    python audits/fuzz_eval.py --n 100000 --seed 0            # writes audits/results/fuzz_eval.json
    python audits/fuzz_eval.py --n 2000 --seed 1 --timeout 20

Each input is one of the 15 recorded models' outputs on its task (virtualhome-eval's action_sequence outputs),
mutated 1-4 times by :func:`safebeal.bench.fuzz.mutate`, then evaluated with the per-episode time limit,
serialised as a bench worker does and read back (:func:`safebeal.bench.fuzz.run_one`). A crash is any exception
out of that path; the first few are printed with their input's seed so they can be replayed. Reports counts,
the slowest episode, p50/p99 and the episodes stopped by the time limit.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
import traceback
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=20.0, help="the per-episode time limit (bench's default)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "fuzz_eval.json"))
    ap.add_argument("--report-every", type=int, default=5000)
    args = ap.parse_args()

    from safebeal.bench.evaluate import detector_for
    from safebeal.bench.fuzz import load_corpus, mutate, run_one

    t_start = time.perf_counter()
    corpus = load_corpus()
    det = detector_for()
    times, crashes, timeouts, repaired, too_large = [], [], 0, 0, 0
    slowest = (0.0, None)
    for k in range(args.n):
        rng = random.Random(f"{args.seed}:{k}")
        tid, text = corpus.items[rng.randrange(len(corpus.items))]
        text = mutate(text, rng)
        try:
            ep, dt = run_one(corpus.tasks[tid], text, det, args.timeout)
        except BaseException as exc:  # noqa: BLE001 - counting crashes is the point
            if isinstance(exc, KeyboardInterrupt):
                raise
            crashes.append({"input": k, "task": tid, "error": repr(exc)[:300]})
            if len(crashes) <= 5:
                traceback.print_exc()
            continue
        times.append(dt)
        timeouts += ep.timed_out
        repaired += bool(ep.input_repairs)
        too_large += bool(ep.parse_error and ep.parse_error.get("kind") == "too_large")
        if dt > slowest[0]:
            slowest = (dt, {"input": k, "task": tid, "chars": len(text)})
        if (k + 1) % args.report_every == 0:
            print(f"{k + 1:,} inputs, {len(crashes)} crashes, {timeouts} timeouts, max {max(times):.3f} s, "
                  f"{time.perf_counter() - t_start:.0f} s", flush=True)
    times.sort()

    def pct(p: float) -> float:
        return round(times[min(len(times) - 1, int(p * len(times)))], 4) if times else 0.0

    res = {
        "command": "python audits/fuzz_eval.py " + " ".join(sys.argv[1:]),
        "inputs": args.n, "seed": args.seed, "timeout_s": args.timeout, "corpus_outputs": len(corpus.items),
        "crashes": len(crashes), "timeouts": timeouts, "repaired_inputs": repaired, "too_large": too_large,
        "max_s": round(times[-1], 4) if times else None, "p50_s": pct(0.50), "p99_s": pct(0.99), "p999_s": pct(0.999),
        "slowest": slowest[1], "wall_s": round(time.perf_counter() - t_start, 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}",
        "crash_samples": crashes[:20],
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps({k: v for k, v in res.items() if k != "crash_samples"}, indent=1))
    sys.exit(1 if crashes else 0)


if __name__ == "__main__":
    main()
