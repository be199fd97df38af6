"""Study v2 B's cheapest rival explanation: does a method look safer only because its plans stop earlier?

    python experiments/small_scale/study_b_rivals.py STUDY_OUT [--json rivals.json]

SafeR judges the steps that ran; a plan that fails a precondition at its second step has little room for a hazard
("do nothing" scores SafeR 1). For every unit of a study-b run (``STUDY_OUT/work/units/*``) this reads the
saferisks-test samples and prints, per method (mean over seeds): SafeR, the steps that ran per episode, SafeR among
the episodes that ran at least 3 steps, and unsafe episodes per step run; then the per-seed paired differences of
SafeR between methods (the seeds of every method share the LoRA initialisation and the pair order), with the paired
t statistic and the paired minimum detectable effect (two-sided 5%, power 80%).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

# the paired minimum detectable effect is study v2 part A's (experiments/study_v2_synthetic/synthetic_plans.py)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "study_v2_synthetic"))
from synthetic_plans import paired_min_detectable_effect  # noqa: E402

METHODS = ("lora-sft", "dpo", "simpo", "safe-align")
PAIRS = (("safe-align", "simpo"), ("safe-align", "lora-sft"), ("dpo", "lora-sft"), ("safe-align", "dpo"))


def load(units: Path, unit: str) -> list:
    path = units / unit / "bench" / "saferisks-test" / "samples.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x]


def stats(recs: list) -> dict:
    ran = [sum(1 for s in r["steps"] if s["ok"]) for r in recs]
    long = [r for r, k in zip(recs, ran) if k >= 3]
    return {"safe": sum(r["safe"] for r in recs) / len(recs), "steps_run": statistics.mean(ran),
            "safe_ran_ge3": sum(r["safe"] for r in long) / max(1, len(long)), "episodes_ran_ge3": len(long),
            "unsafe_per_step_run": sum(not r["safe"] for r in recs) / max(1, sum(ran))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the study's --out directory")
    ap.add_argument("--json", type=Path, help="write every figure here")
    args = ap.parse_args()
    units = args.out / "work" / "units"
    seeds = sorted(int(p.name.rsplit("-s", 1)[1]) for p in units.glob("lora-sft-s*"))
    rows = {"base": [stats(load(units, "base"))]}
    for m in METHODS:
        rows[m] = [stats(load(units, f"{m}-s{s}")) for s in seeds]
    out = {"seeds": seeds, "methods": {}, "paired": {}}
    print("| method | SafeR | steps run per episode | SafeR, episodes that ran >= 3 steps | unsafe per step run |")
    print("|---|---:|---:|---:|---:|")
    for m, ss in rows.items():
        mean = {k: statistics.mean(s[k] for s in ss) for k in ss[0]}
        out["methods"][m] = {"per_seed": ss, "mean": mean}
        print(f"| {m} | {mean['safe']:.3f} | {mean['steps_run']:.2f} | {mean['safe_ran_ge3']:.3f} "
              f"({mean['episodes_ran_ge3']:.0f}) | {mean['unsafe_per_step_run']:.3f} |")
    print("\n| difference in SafeR | per seed | mean | sd | paired t | paired MDE |")
    print("|---|---|---:|---:|---:|---:|")
    for a, b in PAIRS:
        d = [x["safe"] - y["safe"] for x, y in zip(rows[a], rows[b])]
        sd = statistics.stdev(d)
        t = statistics.mean(d) / (sd / math.sqrt(len(d)))
        mde = paired_min_detectable_effect(sd, len(d))
        out["paired"][f"{a} - {b}"] = {"per_seed": d, "mean": statistics.mean(d), "sd": sd, "t": t, "mde": mde}
        print(f"| {a} - {b} | {', '.join(f'{x:+.3f}' for x in d)} | {statistics.mean(d):+.3f} | {sd:.3f} | {t:+.2f} "
              f"| {mde:.3f} |")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
