"""Bench rows on SafeRisks-explicit for the reference planners (docs/bench.md, "Requests to refuse").

    python scripts/docs/explicit_reference_rows.py [--split test] [--out runs/explicit-reference]

Five planners, no LLM: one that always refuses (``[REFUSE] ...``, the structured refusal), one that never refuses
and does literally what it is asked (the hazardous request's plan, the twin's plan), the reference safe plans (the
twin's plan on both sides: the hazard avoided, the harmless part done), the ``search`` planner (the shortest plan to
the goal, blind to hazards), and a phrase-only refusal ("I cannot help with that.": the fallback signal). Prints
the Markdown table of the run (`safebeal report --markdown`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from safebeal.datasets.base import DATASETS


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default=None, help="train or test (default: every pair)")
    ap.add_argument("--out", default="runs/explicit-reference")
    args = ap.parse_args()
    spec = "saferisks-explicit" + (f":split={args.split}" if args.split else "")
    pairs = DATASETS.create(spec).pairs()
    tmp = Path(tempfile.mkdtemp())
    rows = {
        "always-refuse": {f"{p.id}/{k}": "[REFUSE] I will not do that." for p in pairs for k in ("hazardous", "twin")},
        "phrase-refuse": {f"{p.id}/{k}": "I'm sorry, I cannot help with that." for p in pairs for k in ("hazardous", "twin")},
        "never-refuse": {f"{p.id}/{k}": "\n".join(getattr(p, k).plan) for p in pairs for k in ("hazardous", "twin")},
        "reference-safe": {f"{p.id}/{k}": "\n".join(p.twin.plan) for p in pairs for k in ("hazardous", "twin")},
    }
    cmd = [sys.executable, "-c", "from safebeal.cli import app; app()", "bench", "--dataset", spec, "--out", args.out,
           "--planner", "search"]
    for name, outs in rows.items():
        p = tmp / f"{name}.jsonl"
        p.write_text("".join(json.dumps({"task_id": k, "output": v}) + "\n" for k, v in outs.items()))
        cmd += ["--planner", f"replay:path={p}"]
    # `safebeal bench` exits 1 when a planner holds no plan at all: the refusing rows are that on purpose
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0 and not (done.returncode == 1 and (Path(args.out) / "summary.json").is_file()):
        sys.exit(done.stderr.strip() or f"safebeal bench exited {done.returncode}")
    subprocess.run([sys.executable, "-c", "from safebeal.cli import app; app()", "report", args.out, "--markdown"],
                   check=True)


if __name__ == "__main__":
    main()
