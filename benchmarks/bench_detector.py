"""Safety detector overhead over simulation alone, on the 518 ground-truth ActivityPrograms programs.

    python benchmarks/bench_detector.py [--repeats 5] [--cold-repeats 3]

Simulation alone (``execute(scene, script)``) and simulation + detector (the same, then
``SafetyDetector().check(trajectory)``) are timed in the same process, interleaved per program (the order
alternates from one program to the next and between repeats), in process CPU time, so that other load on
the machine hits both alike. Each repeat sums the 518 programs; reported are the medians over repeats and
the median of the per-repeat overhead ratios.

- warm: scenes loaded once and reused (a benchmark judging many plans per task, or a second pass).
- cold: every program gets two freshly loaded scene graphs (loading untimed) and every repeat a fresh
  detector, so each scene is seen for the first time: the detector's per-scene caches (node attributes,
  reverse ON/INSIDE index) are built inside the timed ``sim+check``, the simulator's lazy work inside both.

For reference it also times ``check`` alone on trajectories executed beforehand.
"""

from __future__ import annotations

import argparse
import gc
import platform
import statistics
import time

from safebeal.datasets.activity_programs import load_program, program_ids
from safebeal.safety import SafetyDetector
from safebeal.scene import execute
from safebeal.scene.graph import load_scene_file

clock = time.process_time


def one_pass(progs, scenes_sim, scenes_both, det, flip):
    """Sum over programs of (sim time, sim+check time), interleaved per program."""
    t_sim = t_both = 0.0
    flagged = 0
    for k, p in enumerate(progs):
        order = (0, 1) if (k + flip) % 2 == 0 else (1, 0)
        for which in order:
            if which == 0:
                t0 = clock()
                execute(scenes_sim[k], p.script)
                t_sim += clock() - t0
            else:
                t0 = clock()
                v = det.check(execute(scenes_both[k], p.script))
                t_both += clock() - t0
                flagged += not v.safe
    return t_sim, t_both, flagged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="warm repeats")
    ap.add_argument("--cold-repeats", type=int, default=3, help="cold repeats (each loads 2 x 518 scenes, untimed)")
    args = ap.parse_args()
    progs = [load_program(pid) for pid in program_ids()]
    n, steps = len(progs), sum(len(p.script) for p in progs)
    med = statistics.median

    # -- warm ------------------------------------------------------------------------------------------------
    scenes = [p.scene() for p in progs]
    det = SafetyDetector()
    one_pass(progs, scenes, scenes, det, 0)  # warm-up: scene and detector caches
    trajs = [execute(s, p.script) for s, p in zip(scenes, progs)]
    sims, boths, checks, ratios = [], [], [], []
    for r in range(args.repeats):
        gc.collect()
        t_sim, t_both, flagged = one_pass(progs, scenes, scenes, det, r)
        t0 = clock()
        for t in trajs:
            det.check(t)
        checks.append(clock() - t0)
        sims.append(t_sim), boths.append(t_both), ratios.append(t_both / t_sim - 1)
        print(f"warm {r + 1}: sim {t_sim:.3f} s, sim+check {t_both:.3f} s, overhead {100 * ratios[-1]:+.1f}%,"
              f" check alone {checks[-1]:.3f} s", flush=True)

    # -- cold ------------------------------------------------------------------------------------------------
    csims, cboths, cratios = [], [], []
    for r in range(args.cold_repeats):
        fresh_a = [load_scene_file(p.graph_path, use_cache=False) for p in progs]
        fresh_b = [load_scene_file(p.graph_path, use_cache=False) for p in progs]
        gc.collect()
        t_sim, t_both, _ = one_pass(progs, fresh_a, fresh_b, SafetyDetector(), r)
        del fresh_a, fresh_b
        csims.append(t_sim), cboths.append(t_both), cratios.append(t_both / t_sim - 1)
        print(f"cold {r + 1}: sim {t_sim:.3f} s, sim+check {t_both:.3f} s, overhead {100 * cratios[-1]:+.1f}%", flush=True)

    print(f"\n{n} programs, {steps} steps, {flagged} flagged by the detector; Python {platform.python_version()};"
          f" process CPU time, medians:")
    print("| measurement | simulation alone | simulation + detector | overhead |")
    print("|---|---:|---:|---:|")
    print(f"| warm ({args.repeats} repeats) | {med(sims):.3f} s ({1000 * med(sims) / n:.2f} ms/program) | "
          f"{med(boths):.3f} s ({1000 * med(boths) / n:.2f} ms/program) | {100 * med(ratios):+.1f}% |")
    if cratios:
        print(f"| cold ({args.cold_repeats} repeats) | {med(csims):.3f} s ({1000 * med(csims) / n:.2f} ms/program) | "
              f"{med(cboths):.3f} s ({1000 * med(cboths) / n:.2f} ms/program) | {100 * med(cratios):+.1f}% |")
    print(f"| detector alone, warm (check on ready trajectories) | | {med(checks):.3f} s "
          f"({1000 * med(checks) / n:.2f} ms/program) | {100 * med(checks) / med(sims):+.1f}% of sim |")


if __name__ == "__main__":
    main()
