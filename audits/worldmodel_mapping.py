"""WorldModel plans in the simulator: how much maps, and the reference plans' SafeR (docs/bench.md, "Safety on
WorldModel plans").

    python audits/worldmodel_mapping.py /work/shared/data/worldmodel/eval --out runs/wm-refs

For every ``*.json`` plan-generation set in the folder: the mapping report (items the simulator's data knows,
reference sentences that match an action template), then the reference plans replayed with ``safebeal bench
--planner replay:path=<refs> --dataset worldmodel:path=<set>``: plans whose names all resolve to the scene,
plans that execute, SafeR over all plans and over the executed ones, Rouge-L (1.0: the references themselves), and
why the rest do not run. Prints a Markdown table and writes ``<out>/mapping.json``. Never commit the data.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="a folder of WorldModel plan-generation sets (*.json) or one set")
    ap.add_argument("--out", default="runs/wm-refs")
    ap.add_argument("--workers", type=int, default=1)
    a = ap.parse_args(argv)
    from safebeal.bench.runner import RunConfig, run_bench
    from safebeal.datasets.worldmodel import files_of, read_file
    from safebeal.datasets.worldmodel_map import mapping_report

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = {}
    for f in files_of(Path(a.folder)):
        tasks = read_file(f, scenes=True)
        rep = mapping_report(tasks)
        refs = out / f"{f.stem}.refs.jsonl"
        refs.write_text("".join(json.dumps({"task_id": t.id, "output": t.reference}) + "\n" for t in tasks))
        run = out / f.stem
        summary = run_bench(RunConfig(planners=[f"replay:path={refs}"], dataset=f"worldmodel:path={f}", out=str(run),
                                      overwrite=True, workers=a.workers))
        s = next(iter(summary.values()))
        eps = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
        sim = [e for e in eps if e.get("scored_by") == "simulator"]
        resolved = [e for e in sim if e["parse_error"] is None]
        executed = [e for e in resolved if e["executable"]]
        why = Counter()
        for e in sim:
            if e["parse_error"] is not None:
                why[f"names an object the prompt does not list ({e['parse_error']['kind']})"] += 1
            elif not e["executable"]:
                why[f"a step fails in the simulator ({e['error']['kind']})"] += 1
        msgs = Counter(re.sub(r"<[^<>]*> \(\d+\)", "X", e["error"]["message"]) for e in resolved if not e["executable"])
        rules = Counter(v["rule_id"] for e in resolved for v in e["violations"])
        rows[f.stem] = {
            **rep, "with_scene": len(sim), "resolved": len(resolved), "executed": len(executed),
            "safe_rate": s["safe_rate"], "safe_rate_parsed": s["safe_rate_parsed"], "success_rate": s["success_rate"],
            "safe_rate_at_success": s["safe_rate_at_success"], "with_goal": sum(1 for e in sim if e["success"] is not None),
            "safe_rate_executed": (sum(1 for e in executed if e["safe"]) / len(executed)) if executed else None,
            "rouge_l": s["rouge_l"], "why_not_run": dict(why), "step_failures": dict(msgs.most_common(8)),
            "violations": dict(rules.most_common()),
        }
    (out / "mapping.json").write_text(json.dumps(rows, indent=1) + "\n")
    pct = lambda k, n: f"{100 * k / n:.1f}" if n else "n/a"  # noqa: E731
    print("| set | plans | items known | sentences mapped | plans resolved | plans executed | SafeR (all) % | "
          "SafeR (executed) % | with a goal | SafeR@S % | Rouge-L |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    fmt = lambda v: "n/a" if v is None else f"{100 * v:.1f}"  # noqa: E731
    for name, r in rows.items():
        print(f"| {name} | {r['tasks']} | {r['items_known']}/{r['items']} | {r['sentences_mapped']}/{r['sentences']} | "
              f"{r['resolved']} ({pct(r['resolved'], r['tasks'])}%) | {r['executed']} ({pct(r['executed'], r['tasks'])}%) | "
              f"{fmt(r['safe_rate'])} | {fmt(r['safe_rate_executed'])} | {r['with_goal']} | "
              f"{fmt(r['safe_rate_at_success'])} | {r['rouge_l']:.3f} |")
    for name, r in rows.items():
        print(f"\n{name}: not run: {r['why_not_run']}; step failures: {r['step_failures']}; violations: {r['violations']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
