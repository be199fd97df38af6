"""The step-by-step agent harness's overhead per turn (issue 33), against the plain simulator step, in one run.

    OMP_NUM_THREADS=1 python benchmarks/bench_agent.py [--tasks 100] [--rounds 3]

On the first ``--tasks`` SafeRisks test tasks, every task's reference plan is run one turn per step, and each
variant is timed over all of them, interleaved round by round (the median of the rounds is reported):

- ``plain step``: ``SceneEnv.step`` of the already-parsed line (the simulator adapter alone);
- ``step + detector``: the same, with the safety detector's online monitor judging each step (``Monitor.observe``)
  and the final state (``Monitor.finish``, once per episode);
- ``step + detector + observation``: also the observation of the new state rendered as the prompt shows it
  (``observe_state(...).render()``);
- ``agent loop (act, scripted mock)``: the whole ``act`` planner with a mock backend that answers each turn with
  the reference plan's next step (``[DONE]`` after it), so the model costs nothing: building each turn's prompt
  (observation, history, vocabulary), reading the answer, resolving it, stepping, recording the turn. It does not
  run the detector: the benchmark's evaluation judges the finished plan, as for open-loop plans.

Scenes are built once, before the timings, for every variant.

Per-turn figures divide by the number of turns (steps, plus the ``[DONE]`` turn for the agent loop).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    from safebeal.bench.evaluate import detector_for
    from safebeal.datasets.base import DATASETS
    from safebeal.planners.agent import ActPlanner, follow_references
    from safebeal.planners.backends.mock import MockBackend
    from safebeal.planners.observation import observe_state
    from safebeal.scene import SceneEnv, parse_script

    tasks = DATASETS.create("saferisks-test").tasks()[: args.tasks]
    scripts = {t.id: parse_script(t.reference) for t in tasks}
    scenes = {t.id: t.get_scene() for t in tasks}  # loaded once, outside the timings
    det = detector_for()
    steps = sum(len(s) for s in scripts.values())
    follow = follow_references(tasks)

    def plain():
        for t in tasks:
            env = SceneEnv(scenes[t.id])
            env.reset()
            for line in scripts[t.id]:
                env.step(line)

    def with_detector(observe: bool):
        def run():
            for t in tasks:
                env = SceneEnv(scenes[t.id])
                mon = det.monitor(env.reset(), t.intended)
                for line in scripts[t.id]:
                    r = env.step(line)
                    mon.observe(r)
                    if observe:
                        observe_state(r.after, t.objects).render()
                mon.finish()
        return run

    from dataclasses import replace

    # the agent's tasks carry their already-built scenes too (a SafeRisks scene is otherwise built per episode)
    loaded = [replace(t, scene=(lambda s=scenes[t.id]: s)) for t in tasks]

    def loop():
        outs = list(ActPlanner(backend=MockBackend(follow), parallel=1).plan_iter(loaded))
        assert all(o.agent["stop"] == "done" for o in outs), [o.agent for o in outs if o.agent["stop"] != "done"][:2]
        return sum(o.agent["n_turns"] for o in outs)

    variants = [("plain step (SceneEnv.step)", plain, steps), ("step + detector", with_detector(False), steps),
                ("step + detector + observation", with_detector(True), steps),
                ("agent loop (act, scripted mock), per turn", loop, steps + len(tasks))]
    loop()  # warm: imports, templates, the detector's per-scene caches
    with_detector(True)()
    times = {name: [] for name, _, _ in variants}
    for _ in range(args.rounds):
        for name, fn, _ in variants:
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    base = statistics.median(times[variants[0][0]]) / steps
    print(f"{len(tasks)} SafeRisks test tasks, {steps} steps ({steps + len(tasks)} agent turns), "
          f"median of {args.rounds} rounds\n")
    print("| variant | median s | per turn ms | ratio vs plain step |")
    print("|---|---|---|---|")
    for name, _, n in variants:
        med = statistics.median(times[name])
        print(f"| {name} | {med:.3f} | {1000 * med / n:.2f} | {med / n / base:.2f} |")


if __name__ == "__main__":
    main()
