"""Safety detector overhead over simulation, on the 518 ground-truth ActivityPrograms programs.

    python benchmarks/bench_detector.py [--repeats 3] [--cold-repeats 3] [--no-old]

"Simulation" is what an episode costs ``safebeal bench`` without the detector: the scene loading and stepping
its runner does (``bench/evaluate.py``: ``task.get_scene()``, then ``execute(scene, script)``). "Simulation +
detector" adds ``check`` with the detector the runner uses (``evaluate.detector_for()``: default rules,
attributed, ``unknown_class="neutral"``). Both are timed in the same process, interleaved per program (the order
alternates from one program to the next and between repeats), in process CPU time. Each repeat sums the 518
programs; reported are the medians over repeats and the median of the per-repeat overhead ratios.

- warm: scenes loaded once and reused, the detector's per-scene caches filled: the runner's second and later
  distinct scripts of a task (it loads a task's scene once per job and evaluates every planner's output on it).
- cold: every program loads its scene as a runner worker does the first time it meets a task (unpickled from
  the scene cache, ``safebeal.scene.cache.cached_pickle``, the same call ``activity_scene`` makes; inside the
  timed block on both sides) and each repeat uses a fresh detector, so the detector's per-scene work (its
  reverse ON/INSIDE index, node kinds and attributes) is all inside the timed ``sim + check``. The loading and
  stepping parts are timed separately too, so the overhead over stepping alone is printed beside it. Loading
  is the same work in both arms; its time (garbage collections included) is averaged over the two, so that a
  gen2 collection landing in one arm's loading does not swing the ratio (each arm's own is printed per repeat).
  The warm phase's scenes are let go first, so that the collections the loading triggers scan a heap of a
  runner worker's size, not one holding all 518 scenes.
- cold, previous definition (skipped with ``--no-old``): as this benchmark measured before: two freshly parsed
  JSON scenes per program (loading untimed), ``SafetyDetector()`` (``unknown_class="error"``), simulation is
  stepping only.

For reference it also times ``check`` alone on trajectories executed beforehand.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import time

from safebeal.bench.evaluate import detector_for
from safebeal.datasets.activity_programs import load_program, program_ids
from safebeal.safety import SafetyDetector
from safebeal.scene import execute
from safebeal.scene.cache import cached_pickle
from safebeal.scene.graph import load_scene_file
from safebeal.scene.programs import _read

clock = time.process_time


def load_like_runner(pid: str):
    """A new SceneGraph of the program, loaded as a runner worker loads a task's scene it has not seen: the
    scene-cache entry unpickled (``scene.programs.activity_scene`` without its per-process memo)."""
    return cached_pickle(f"activity-{pid}", lambda: _read(pid)[0])


def one_pass(progs, scenes_sim, scenes_both, det, flip):
    """Sum over programs of (sim time, sim+check time), interleaved per program (scenes given, untimed)."""
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


def cold_pass(progs, det, flip):
    """Every program's scene loaded as the runner loads it, on both sides, inside the timed block. Returns the
    sums (sim load, sim stepping, both load, both stepping, both check)."""
    s_load = s_step = b_load = b_step = b_check = 0.0
    for k, p in enumerate(progs):
        order = (0, 1) if (k + flip) % 2 == 0 else (1, 0)
        for which in order:
            t0 = clock()
            scene = load_like_runner(p.id)
            t1 = clock()
            traj = execute(scene, p.script)
            t2 = clock()
            if which == 0:
                s_load += t1 - t0
                s_step += t2 - t1
            else:
                det.check(traj)
                t3 = clock()
                b_load += t1 - t0
                b_step += t2 - t1
                b_check += t3 - t2
            del scene, traj
    return s_load, s_step, b_load, b_step, b_check


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="warm repeats")
    ap.add_argument("--cold-repeats", type=int, default=3, help="cold repeats")
    ap.add_argument("--no-old", action="store_true", help="skip the previous definition's cold measurement "
                    "(it parses 2 x 518 JSON scenes per repeat, untimed)")
    args = ap.parse_args()
    load0, t_start = os.getloadavg(), time.monotonic()
    progs = [load_program(pid) for pid in program_ids()]
    n, steps = len(progs), sum(len(p.script) for p in progs)
    med = statistics.median
    for p in progs:
        load_like_runner(p.id)  # the scene cache filled (as after a first run), untimed

    # -- warm ------------------------------------------------------------------------------------------------
    scenes = [p.scene() for p in progs]
    det = detector_for()
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
    # the warm phase's 518 scenes let go: a gen2 collection scans every live object, and with them in memory the one
    # or two that the cold phase's loading triggers per repeat cost about 0.5 s each, landing in whichever arm
    # happens to trigger them (a runner worker holds only the scenes of the tasks it has evaluated so far)
    del trajs, scenes
    for p in progs:
        p.release()
    gc.collect()

    # -- cold ------------------------------------------------------------------------------------------------
    cold = {"sim": [], "both": [], "ratio": [], "step_ratio": [], "load": [], "step": [], "check": []}
    old = {"sim": [], "both": [], "ratio": []}
    for r in range(args.cold_repeats):
        runs = ["new"] + ([] if args.no_old else ["old"])
        for what in (runs if r % 2 == 0 else runs[::-1]):
            gc.collect()
            if what == "new":
                # a fresh detector of the runner's configuration (detector_for keeps one per process)
                fresh_det = SafetyDetector(unknown_class="neutral")
                s_load, s_step, b_load, b_step, b_check = cold_pass(progs, fresh_det, r)
                # loading is the same work in both arms (the detector takes no part in it); its time, garbage
                # collections included, is shared equally, so that the gen2 collections a pass triggers (25-40 ms
                # each, landing in whichever arm allocates at that moment) do not swing the ratio
                load = (s_load + b_load) / 2
                t_sim, t_both = load + s_step, load + b_step + b_check
                cold["sim"].append(t_sim), cold["both"].append(t_both), cold["ratio"].append(t_both / t_sim - 1)
                cold["step_ratio"].append((b_step + b_check) / s_step - 1)
                cold["load"].append(load), cold["step"].append((s_step + b_step) / 2)
                cold["check"].append(b_check)
                print(f"cold {r + 1}: loading {s_load:.3f} s (sim arm) and {b_load:.3f} s (sim+check arm); sim (load"
                      f" {load:.3f} + stepping {s_step:.3f}) {t_sim:.3f} s, sim+check (load {load:.3f} + stepping"
                      f" {b_step:.3f} + check {b_check:.3f}) {t_both:.3f} s, overhead"
                      f" {100 * cold['ratio'][-1]:+.1f}%; over stepping alone {100 * cold['step_ratio'][-1]:+.1f}%",
                      flush=True)
            else:
                fresh_a = [load_scene_file(p.graph_path, use_cache=False) for p in progs]
                fresh_b = [load_scene_file(p.graph_path, use_cache=False) for p in progs]
                gc.collect()
                t_sim, t_both, _ = one_pass(progs, fresh_a, fresh_b, SafetyDetector(), r)
                del fresh_a, fresh_b
                old["sim"].append(t_sim), old["both"].append(t_both), old["ratio"].append(t_both / t_sim - 1)
                print(f"cold, previous definition {r + 1}: sim {t_sim:.3f} s, sim+check {t_both:.3f} s, overhead"
                      f" {100 * old['ratio'][-1]:+.1f}%", flush=True)

    load1 = os.getloadavg()
    ms = lambda s: f"{1000 * s / n:.2f} ms/program"  # noqa: E731
    print(f"\n{n} programs, {steps} steps, {flagged} flagged by the detector; Python {platform.python_version()};"
          f" load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end; {time.monotonic() - t_start:.0f} s;"
          f" process CPU time, medians:")
    print("| measurement | simulation | simulation + detector | overhead |")
    print("|---|---:|---:|---:|")
    print(f"| warm: scene reused ({args.repeats} repeats) | {med(sims):.3f} s ({ms(med(sims))}) | "
          f"{med(boths):.3f} s ({ms(med(boths))}) | **{100 * med(ratios):+.1f}%** |")
    if cold["ratio"]:
        print(f"| cold: scene loaded as the runner loads it, then stepped ({args.cold_repeats} repeats) | "
              f"{med(cold['sim']):.3f} s ({ms(med(cold['sim']))}) | {med(cold['both']):.3f} s ({ms(med(cold['both']))})"
              f" | **{100 * med(cold['ratio']):+.1f}%** |")
        print(f"| cold, the same run over stepping alone (loading left out of both sides) | {med(cold['step']):.3f} s"
              f" ({ms(med(cold['step']))}) | + check {med(cold['check']):.3f} s ({ms(med(cold['check']))}) | "
              f"**{100 * med(cold['step_ratio']):+.1f}%** |")
    if old["ratio"]:
        print(f"| cold, previous definition: JSON-parsed scenes, loading untimed, `SafetyDetector()` "
              f"({args.cold_repeats} repeats) | {med(old['sim']):.3f} s ({ms(med(old['sim']))}) | {med(old['both']):.3f} s "
              f"({ms(med(old['both']))}) | **{100 * med(old['ratio']):+.1f}%** |")
    print(f"| detector alone, warm (check on ready trajectories) | | {med(checks):.3f} s "
          f"({ms(med(checks))}) | {100 * med(checks) / med(sims):+.1f}% of warm stepping |")
    if cold["load"]:
        print(f"\ncold parts (medians): loading {ms(med(cold['load']))}, stepping {ms(med(cold['step']))}, "
              f"check {ms(med(cold['check']))}")
    print("per-repeat overheads: warm " + ", ".join(f"{100 * x:+.1f}" for x in ratios) + "%"
          + ("; cold " + ", ".join(f"{100 * x:+.1f}" for x in cold["ratio"]) + "%" if cold["ratio"] else "")
          + ("; cold over stepping " + ", ".join(f"{100 * x:+.1f}" for x in cold["step_ratio"]) + "%" if cold["ratio"] else "")
          + ("; cold, previous definition " + ", ".join(f"{100 * x:+.1f}" for x in old["ratio"]) + "%" if old["ratio"] else ""))


if __name__ == "__main__":
    main()
