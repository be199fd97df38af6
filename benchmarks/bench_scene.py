"""Time executing all 518 ground-truth ActivityPrograms programs: safebeal.scene vs a plain loop over the
virtualhome-eval simulator, on the same programs in the same run.

    python benchmarks/bench_scene.py [--repeats 3]

- plain:   json.load + EnvironmentGraph + read_script_from_list_string + ScriptExecutor.execute(w_graph_list=False)
- adapter (cold): safebeal load (no cache) + parse + step-by-step run with every step's state kept
- adapter (cached): the same with the scene graph cache warm (repeated runs on the same scene)
- plain (repeat): the plain loop a second time (OS file cache warm), for the cached comparison
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time

from safebeal.datasets import activity_programs as ap
from safebeal.resources import name_equivalence
from safebeal.scene import SceneGraph, execute, parse_script
from safebeal.scene.graph import read_graph_json


_DOTTED = re.compile(r"\(\d+\.(\d+)\)")


def plain_loop(progs):
    from virtualhome_eval.simulation.evolving_graph.environment import EnvironmentGraph
    from virtualhome_eval.simulation.evolving_graph.execution import ScriptExecutor
    from virtualhome_eval.simulation.evolving_graph.scripts import read_script_from_list_string

    eq = name_equivalence()
    ok = 0
    for p in progs:
        with open(p.graph_path) as f:
            graph = EnvironmentGraph(json.load(f)["init_graph"])
        # the simulator's parser wants (1001), the dataset writes (1.1001)
        script = read_script_from_list_string(_DOTTED.sub(r"(\1)", p.script_text).splitlines())
        success, _state, _ = ScriptExecutor(graph, eq).execute(script, w_graph_list=False)
        ok += bool(success)
    return ok


def adapter_cold(progs):
    ok = 0
    for p in progs:
        init, _final, _ = read_graph_json(p.graph_path)
        scene = SceneGraph(init, source=p.id)
        ok += execute(scene, parse_script(p.script_text)).executable
    return ok


def adapter_cached(progs, scenes):
    ok = 0
    for p in progs:
        ok += execute(scenes[p.id], parse_script(p.script_text)).executable
    return ok


def main() -> None:
    ap_ = argparse.ArgumentParser()
    ap_.add_argument("--repeats", type=int, default=3)
    args = ap_.parse_args()
    progs = ap.load_programs()
    scenes = {p.id: p.scene() for p in progs}  # warm cache for the cached variant
    times = {"plain": [], "adapter_cold": [], "adapter_cached": []}
    counts = {}
    for _ in range(args.repeats):
        for name, fn in (("plain", lambda: plain_loop(progs)), ("adapter_cold", lambda: adapter_cold(progs)),
                         ("adapter_cached", lambda: adapter_cached(progs, scenes))):
            t = time.perf_counter()
            counts[name] = fn()
            times[name].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"programs: {len(progs)}; executable: {counts}")
    print("| variant | median s (of %d) | per program ms | ratio vs plain |" % args.repeats)
    print("|---|---|---|---|")
    for k in ("plain", "adapter_cold", "adapter_cached"):
        print(f"| {k} | {med[k]:.2f} | {1000 * med[k] / len(progs):.1f} | {med[k] / med['plain']:.2f} |")


if __name__ == "__main__":
    main()
