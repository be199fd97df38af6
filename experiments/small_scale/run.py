#!/usr/bin/env python
"""Small-scale reproduction of the Safe-Align study: one command, every stage, results in --out.

    python experiments/small_scale/run.py                 # the full study (configs/full.yaml), ~2 h on 2 CPU cores
    python experiments/small_scale/run.py --smoke         # every stage at toy size, a few minutes
    python experiments/small_scale/run.py --seeds 0,1,2 --out DIR --jobs 2

Stages: data (compact-prompt SFT examples + preference pairs) -> tokenizer and random Llama -> base SFT from
scratch -> LoRA-SFT, DPO, SimPO, Safe-Align x seeds and the alpha sweep (each trained, then benchmarked on
activity-test, the 342 VirtualHome tasks and saferisks-test) -> tables, plots, summary.md, checks.json.
A rerun skips every unit whose inputs have not changed (an interrupted study resumes); --fresh starts over.
Exit status: 0, 1 when a check fails (a rate outside [0, 1], a loss that does not fall), 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", action="store_true", help="toy sizes (configs/smoke.yaml): checks every stage in minutes")
    ap.add_argument("--config", type=Path, help="a study config (default: configs/full.yaml, or smoke.yaml with --smoke)")
    ap.add_argument("--out", type=Path, help="results folder (default: experiments/small_scale/results[-smoke]/)")
    ap.add_argument("--seeds", help="alignment seeds, comma-separated (default: the config's, 0,1,2 for full)")
    ap.add_argument("--jobs", type=int, help="units trained+evaluated in parallel processes (default: the config's)")
    ap.add_argument("--fresh", action="store_true", help="delete <out>/work first (no resuming)")
    args = ap.parse_args(argv)

    from safebeal.errors import SafebealError
    from smallscale.settings import CONFIGS, load_settings
    from smallscale.stages import Study, log

    config = args.config or CONFIGS / ("smoke.yaml" if args.smoke else "full.yaml")
    out = args.out or HERE / ("results-smoke" if args.smoke else "results")
    try:
        settings = load_settings(config)
        if args.seeds:
            try:
                settings.seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
            except ValueError:
                raise SafebealError(f"--seeds must be integers separated by commas, got {args.seeds!r}") from None
            if not settings.seeds:
                raise SafebealError("--seeds is empty")
        if args.jobs:
            settings.jobs = args.jobs
        if args.fresh and (Path(out) / "work").exists():
            shutil.rmtree(Path(out) / "work")
        log(f"study {settings.name!r} ({config}) -> {out}")
        doc = Study(settings, out, smoke=args.smoke).run(settings.seeds)
    except SafebealError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    chk = doc["checks"]
    log(f"results: {out}/summary.md, table1.json, table2.json, checks.json, *.png")
    if not chk["ok"]:
        log(f"CHECKS FAILED: {chk['rates_in_unit_interval']['violations'][:5]} "
            f"losses not falling: {chk['losses_fall']['not_falling']}")
        return 1
    log("checks passed: every rate in [0, 1], every training loss falls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
