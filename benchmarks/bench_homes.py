"""Procedural homes (``home:<seed>``) against the shipped ActivityPrograms scenes: size, variety, time per home.

    python benchmarks/bench_homes.py [--homes 200] [--repeats 3] [--out benchmarks/results/homes.md]

- size: rooms, nodes, edges and distinct node classes per scene (min, median, max);
- overlap: the mean, over every pair of scenes, of the Jaccard index of their *sets* of node class names
  (|A & B| / |A | B|; ``safebeal.scene.homes.class_set_jaccard``); the multiset version (counts matter:
  sum of min counts / sum of max counts) is given too. Homes: seeds 0..N-1; "today": the 518 ActivityPrograms
  initial graphs (all TrimmedTestScene1);
- time: one home built from its seed, ``generate_home`` (the graph dict) and ``load_scene`` without cache
  (generation + the simulator's ``EnvironmentGraph``), best of ``--repeats`` per seed; against the 0.2 s budget
  and against loading one shipped scene (``json.load`` + ``SceneGraph``) in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from itertools import combinations
from pathlib import Path

from safebeal.scene.graph import SceneGraph, read_graph_json
from safebeal.scene.homes import class_set_jaccard, generate_home
from safebeal.scene.programs import program_index

BUDGET_S = 0.2


def multiset_jaccard(a: Counter, b: Counter) -> float:
    keys = a.keys() | b.keys()
    return sum(min(a[k], b[k]) for k in keys) / sum(max(a[k], b[k]) for k in keys)


def sizes(graphs):
    rows = []
    for g in graphs:
        classes = [n["class_name"] for n in g["nodes"]]
        rows.append((sum(n["category"] == "Rooms" for n in g["nodes"]), len(g["nodes"]), len(g["edges"]), len(set(classes))))
    return rows


def overlap(graphs):
    sets = [[n["class_name"] for n in g["nodes"]] for g in graphs]
    counts = [Counter(c) for c in sets]
    pairs = list(combinations(range(len(graphs)), 2))
    js = statistics.fmean(class_set_jaccard(sets[i], sets[j]) for i, j in pairs)
    jm = statistics.fmean(multiset_jaccard(counts[i], counts[j]) for i, j in pairs)
    return js, jm, len(pairs)


def stat(xs):
    return f"{min(xs)} / {statistics.median(xs):g} / {max(xs)}"


def best(fn, repeats):
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--homes", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    generate_home(0)  # load the tables and virtualhome-eval's data once
    homes = [generate_home(s) for s in range(args.homes)]
    shipped = [read_graph_json(g)[0] for _s, g in program_index().values()]

    t_gen = [best(lambda s=s: generate_home(s), args.repeats) for s in range(args.homes)]
    t_load = [best(lambda s=s: SceneGraph(generate_home(s), source=f"home:{s}"), args.repeats) for s in range(args.homes)]
    some = list(program_index().values())[:: max(1, len(program_index()) // 50)]
    t_shipped = [best(lambda g=g: SceneGraph(read_graph_json(g)[0], source="x"), args.repeats) for _s, g in some]

    h_sizes, s_sizes = sizes(homes), sizes(shipped)
    h_ov, s_ov = overlap(homes), overlap(shipped)
    med_load, max_load, med_ship = statistics.median(t_load), max(t_load), statistics.median(t_shipped)
    lines = [
        f"# Procedural homes vs the shipped scenes\n",
        f"`python benchmarks/bench_homes.py --homes {args.homes} --repeats {args.repeats}`\n",
        "Per scene, min / median / max:\n",
        f"| scenes | rooms | nodes | edges | distinct classes | mean pairwise class-set Jaccard | multiset Jaccard |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, sz, ov in ((f"{args.homes} homes (`home:0`..`home:{args.homes - 1}`)", h_sizes, h_ov),
                         (f"{len(shipped)} ActivityPrograms initial graphs (today)", s_sizes, s_ov)):
        cols = [stat([r[k] for r in sz]) for k in range(4)]
        lines.append(f"| {name} | {' | '.join(cols)} | **{ov[0]:.3f}** ({ov[2]} pairs) | {ov[1]:.3f} |")
    lines += [
        "",
        "Time per home (best of %d per seed; %d seeds):\n" % (args.repeats, args.homes),
        "| step | median ms | max ms | ratio of max to the 0.2 s budget |",
        "|---|---|---|---|",
        f"| `generate_home(seed)` (graph dict) | {statistics.median(t_gen) * 1e3:.2f} | {max(t_gen) * 1e3:.2f} | {max(t_gen) / BUDGET_S:.3f} |",
        f"| + `SceneGraph` (the simulator's graph): `load_scene('home:<seed>')` uncached | {med_load * 1e3:.2f} | {max_load * 1e3:.2f} | {max_load / BUDGET_S:.3f} |",
        f"| a shipped scene: `json.load` + `SceneGraph` ({len(some)} programs) | {med_ship * 1e3:.2f} | {max(t_shipped) * 1e3:.2f} | |",
        "",
        f"A home loads in {med_load / med_ship:.2f}x the time of a shipped scene (medians).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
