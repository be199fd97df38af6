"""CLMASP: the ASP action model against the simulator, and refinement of the 15 recorded models' plans.

    python benchmarks/bench_clmasp.py --agreement            # gt, gt without WALK/FIND, the 15 models' plans
    python benchmarks/bench_clmasp.py --agreement --sets gt  # the 518 ground-truth programs only
    python benchmarks/bench_clmasp.py --refine --out runs/clmasp [--safe] [--models gpt-4o-2024-05-13]

``--agreement``: every script runs in the simulator (step by step, to its first failure) and in the ASP model
(verification mode); the per-step verdicts (runs / cannot run) are compared on every step up to and including
the first failure either side reports. Printed: steps compared, agreement, plans whose first failure is the same
step, disagreements by action, side and reason, and ASP seconds per script.

``--refine``: ``safebeal bench`` on the 342 VirtualHome tasks with ``replay:*`` and ``clmasp:planner=replay:*``
(and ``clmasp:planner=replay:*,safe=true`` with ``--safe``) into OUT/plain, OUT/clmasp, OUT/safe; then a
Markdown table per model: executable, executable among parsed plans, success, SafeR and SSR without and with
refinement, steps inserted, and ASP seconds per task (median, 90th percentile, max).
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

SETS = ("gt", "gt-nowalk", "llm")


def _cases(name: str, models: Optional[Sequence[str]] = None):
    """(label, scene, script) for one set."""
    from safebeal.scene import Script

    if name in ("gt", "gt-nowalk"):
        from safebeal.datasets.activity_programs import load_program, program_ids

        for pid in program_ids():
            prog = load_program(pid)
            lines = list(prog.script)
            if name == "gt-nowalk":
                lines = [ln for ln in lines if ln.action not in ("WALK", "FIND")]
            yield pid, prog.scene(), Script(tuple(lines))
        return
    from safebeal.plans.compile import compile_output
    from safebeal.datasets.base import DATASETS
    from safebeal.planners.planners import _recorded, recorded_models

    tasks = DATASETS.create("virtualhome").tasks()
    for m in models or recorded_models():
        outs = _recorded(m)
        for t in tasks:
            text = outs.get(t.id)
            if text is None:
                continue
            scene = t.get_scene()
            c = compile_output(text, t.objects, known_ids=scene)
            if c.error is None and len(c.script):
                yield f"{m}/{t.id}", scene, c.script


def agreement(name: str, models: Optional[Sequence[str]] = None) -> Dict:
    from safebeal.planners.clmasp.asp import verify
    from safebeal.scene import SceneEnv

    compared = agree = plans = same = sim_failing = 0
    dis: collections.Counter = collections.Counter()
    examples: List[Tuple] = []
    seconds: List[float] = []
    t0 = time.perf_counter()
    for label, scene, script in _cases(name, models):
        env = SceneEnv(scene)
        view = env.reset()
        traj = env.run(script)
        sim = None if traj.executable else len(traj.steps) - 1
        steps = [(ln.action, tuple(ln.ids)) for ln in script]
        v = verify(view, steps)
        seconds.append(v.seconds)
        asp = v.first_failure
        upto = min(len(steps) if sim is None else sim + 1, len(steps) if asp is None else asp + 1)
        plans += 1
        sim_failing += sim is not None
        compared += upto
        if sim == asp:
            same += 1
            agree += upto
            continue
        agree += upto - 1
        k = min(x for x in (sim, asp) if x is not None)
        side = "simulator refuses, model runs" if sim == k else "model refuses, simulator runs"
        why = traj.steps[k].error.message if sim == k else ",".join(v.reasons)
        dis[(steps[k][0], side)] += 1
        if len(examples) < 40:
            examples.append((label, k, str(script[k]), side, why))
    return {"set": name, "plans": plans, "sim_failing_plans": sim_failing, "steps_compared": compared,
            "steps_agree": agree, "agreement": agree / compared if compared else None, "same_first_failure": same,
            "disagreements": {f"{a} ({s})": c for (a, s), c in dis.most_common()}, "examples": examples,
            "asp_seconds_median": statistics.median(seconds) if seconds else None,
            "wall_seconds": round(time.perf_counter() - t0, 1)}


def _bench(planners: List[str], out: Path, workers: int) -> Dict:
    from safebeal.bench.runner import RunConfig, run_bench

    t0 = time.perf_counter()
    summary = run_bench(RunConfig(planners=planners, dataset="virtualhome", out=str(out), workers=workers,
                                  overwrite=True))
    print(f"{out}: {time.perf_counter() - t0:.0f} s", flush=True)
    return summary


def _refinement_stats(run: Path) -> Dict[str, Dict]:
    per: Dict[str, Dict] = {}
    for line in (run / "samples.jsonl").read_text().splitlines():
        e = json.loads(line)
        r = (e.get("extras") or {}).get("clmasp") or {}
        d = per.setdefault(e["planner"], {"asp": [], "inserted": 0, "changed": 0, "parsed": 0, "parsed_exec": 0,
                                          "forbidden": 0})
        if r.get("refined"):
            d["asp"].append(r["asp_seconds"])
            d["inserted"] += len(r.get("inserted") or [])
            d["changed"] += bool(r.get("changed"))
            d["forbidden"] += len(r.get("forbidden") or [])
        if not e.get("parse_error"):
            d["parsed"] += 1
            d["parsed_exec"] += bool(e.get("executable"))
    return per


def refine_table(out: Path, safe: bool, models: Optional[Sequence[str]], workers: int) -> str:
    from safebeal.planners.planners import recorded_models

    models = list(models or recorded_models())
    runs = {"plain": [f"replay:{m}" for m in models],
            "clmasp": [f"clmasp:planner=replay:{m}" for m in models]}
    if safe:
        runs["safe"] = [f"clmasp:planner=replay:{m},safe=true" for m in models]
    summaries = {k: _bench(v, out / k, workers) for k, v in runs.items()}
    stats = {k: _refinement_stats(out / k) for k in runs}
    pct = lambda x: f"{100 * x:.1f}"  # noqa: E731
    head = ["model", "Exec", "Exec (parsed)", "SuccR", "SafeR", "SSR"]
    cols = ["plain", "clmasp"] + (["safe"] if safe else [])
    rows = ["| " + " | ".join([head[0]] + [f"{h} {c}" for h in head[1:] for c in cols]
                              + ["inserted / plan", "ASP s/task median", "p90", "max"]) + " |"]
    rows.append("|" + "---|" * (1 + 5 * len(cols) + 4))
    all_asp: List[float] = []
    for i, m in enumerate(models):
        cells = [m]
        for metric in ("executable_rate", "exec_parsed", "success_rate", "safe_rate", "safe_success_rate"):
            for c in cols:
                label = runs[c][i]
                if metric == "exec_parsed":
                    st = stats[c][label]
                    cells.append(pct(st["parsed_exec"] / st["parsed"]) if st["parsed"] else "-")
                else:
                    cells.append(pct(summaries[c][label][metric]))
        st = stats["clmasp"][runs["clmasp"][i]]
        asp = sorted(st["asp"])
        all_asp += asp
        cells += [f"{st['inserted'] / max(1, len(asp)):.2f}", f"{statistics.median(asp):.3f}",
                  f"{asp[int(0.9 * (len(asp) - 1))]:.3f}", f"{asp[-1]:.3f}"]
        rows.append("| " + " | ".join(cells) + " |")
    all_asp.sort()
    rows.append(f"\nASP seconds per task over all {len(all_asp)} refined plans: median {statistics.median(all_asp):.3f}, "
                f"p90 {all_asp[int(0.9 * (len(all_asp) - 1))]:.3f}, max {all_asp[-1]:.3f}")
    if safe:
        forb = sum(stats["safe"][runs["safe"][i]]["forbidden"] for i in range(len(models)))
        rows.append(f"safe=true: {forb} candidate insertions forbidden by the detector's process rules")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agreement", action="store_true")
    ap.add_argument("--sets", nargs="*", default=list(SETS), choices=SETS)
    ap.add_argument("--refine", action="store_true")
    ap.add_argument("--safe", action="store_true", help="also clmasp with safe=true")
    ap.add_argument("--models", nargs="*", default=None)
    ap.add_argument("--out", default="runs/clmasp")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", help="write the agreement results here")
    args = ap.parse_args()
    if args.agreement:
        results = []
        for s in args.sets:
            r = agreement(s, args.models)
            results.append(r)
            print(f"{s}: {r['plans']} plans ({r['sim_failing_plans']} fail in the simulator), {r['steps_compared']} "
                  f"steps compared, {r['steps_agree']} agree ({100 * r['agreement']:.2f}%), same first failure in "
                  f"{r['same_first_failure']}; ASP median {r['asp_seconds_median']:.3f} s/script; {r['wall_seconds']} s")
            for k, c in r["disagreements"].items():
                print(f"   {c:4d}  {k}")
            for ex in r["examples"][:15]:
                print("        ", ex)
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1))
    if args.refine:
        print(refine_table(Path(args.out), args.safe, args.models, args.workers))


if __name__ == "__main__":
    main()
