#!/usr/bin/env python
"""Time of the from-scratch SFT with batches grouped by length vs the default random batches, same run.

    OMP_NUM_THREADS=1 python benchmarks/bench_grouping.py \
        --work experiments/small_scale/results/work [--rounds 3] [--steps 4]

Uses the study's own SFT data (``<work>/data/sft.jsonl``) and random model (``<work>/init``), so run it after the
study's data and model stages. Each round trains ``--steps`` optimizer steps both ways (the order alternates
between rounds), on the trainer's clock (``train_runtime``: the training loop, without loading and saving);
reports the median seconds per step of each and their ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
#: the small-scale study whose SFT stage this times (its ``smallscale`` package, its work folder)
STUDY = Path(__file__).resolve().parents[1] / "experiments" / "small_scale"
sys.path.insert(0, str(STUDY))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=STUDY / "results" / "work")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=16)
    args = ap.parse_args()

    from smallscale.stages import _quiet, train_run

    _quiet()
    times = {"random": [], "grouped": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            order = ["random", "grouped"] if r % 2 == 0 else ["grouped", "random"]
            for mode in order:
                opts = {"model": str(args.work / "init"), "data": str(args.work / "data" / "sft.jsonl"),
                        "out": str(Path(tmp) / f"{mode}{r}"), "lora": False, "lr": 1e-3, "max_steps": args.steps,
                        "batch_size": args.batch_size, "max_length": 384, "seed": r, "overwrite": True,
                        "progress": False, "device": "cpu", "group_by_length": mode == "grouped"}
                res = train_run("sft", opts, Path(tmp) / "log.out")
                times[mode].append(res["train_runtime"] / res["steps"])
                print(f"round {r} {mode}: {times[mode][-1]:.2f} s/step", flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"median s/step: random {med['random']:.2f}, grouped {med['grouped']:.2f}, "
          f"ratio random/grouped {med['random'] / med['grouped']:.2f} ({args.rounds} rounds x {args.steps} steps)")


if __name__ == "__main__":
    main()
