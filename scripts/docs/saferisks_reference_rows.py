"""Bench rows on a SafeRisks split for the reference plans and the hazard-blind baselines (docs/saferisks.md).

    python scripts/docs/saferisks_reference_rows.py [--dataset saferisks-test] [--out runs/saferisks-reference]
    python scripts/docs/saferisks_reference_rows.py --dataset saferisks-test:path=v3/saferisks.jsonl.gz  # a v3 build

Five planners, all replayed (no LLM): the reference safe plans, the first reference unsafe plan of each entry, the
``search`` planner's shortest plans (from the search audit beside the data file, computed if missing), the generic
rule (the first unsafe plan with everything it touched switched off, closed and unplugged,
``generation.generic_rule``) and a do-nothing plan (an empty output). Prints the Markdown table of the run (`safebeal report --markdown`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from safebeal.datasets.base import DATASETS
from safebeal.generation.audit import read_audit, search_audit
from safebeal.generation.generic_rule import generic_rule_results


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="saferisks-test")
    ap.add_argument("--out", default="runs/saferisks-reference")
    args = ap.parse_args()
    ds = DATASETS.create(args.dataset)
    entries = ds.entries()
    # the search audit cached beside the file the dataset reads (its config's path; `saferisks build --audit`)
    audit = search_audit(entries, workers=2, cached=read_audit(Path(ds.config()["path"])))
    tmp = Path(tempfile.mkdtemp())
    rows = {
        "reference-safe": {e.id: "\n".join(e.safe_plan) for e in entries},
        "reference-unsafe": {e.id: "\n".join(e.unsafe_plans[0].plan) for e in entries},
        "search": {e.id: "\n".join(audit[e.id]["plan"] or []) for e in entries},
        "generic-rule": {k: "\n".join(r["plan"]) for k, r in generic_rule_results(entries, workers=2).items()},
        "do-nothing": {e.id: "" for e in entries},
    }
    cmd = [sys.executable, "-c", "from safebeal.cli import app; app()", "bench", "--dataset", args.dataset,
           "--out", args.out]
    for name, outs in rows.items():
        p = tmp / f"{name}.jsonl"
        p.write_text("".join(json.dumps({"task_id": k, "output": v}) + "\n" for k, v in outs.items()))
        cmd += ["--planner", f"replay:path={p}"]
    # `safebeal bench` exits 1 when a planner holds no plan at all: the do-nothing row is that on purpose
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0 and not (done.returncode == 1 and "do-nothing" in done.stderr
                                     and (Path(args.out) / "summary.json").is_file()):
        sys.exit(done.stderr.strip() or f"safebeal bench exited {done.returncode}")
    subprocess.run([sys.executable, "-c", "from safebeal.cli import app; app()", "report", args.out, "--markdown"],
                   check=True)


if __name__ == "__main__":
    main()
