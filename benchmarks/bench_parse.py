"""Time safebeal's plan parser on the 15 recorded models' 5,130 outputs against the upstream evaluator's
parsing step (strip a leading ```json, drop newlines, ' -> ", json.loads), interleaved, repeated; median.

    python benchmarks/bench_parse.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from safebeal.plans.parse import parse_plan
from safebeal.planners.planners import _recorded, recorded_models


def upstream_style(text: str):
    s = text[7:] if text.startswith("```json") else text
    s = s.strip().replace("\n", "").replace("'", '"')
    try:
        return json.loads(s)
    except Exception:
        return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    outputs = [t for m in recorded_models() for t in _recorded(m).values()]
    ours, theirs = [], []
    for _ in range(args.repeats):
        for fn, acc in ((parse_plan, ours), (upstream_style, theirs)):
            t0 = time.perf_counter()
            for t in outputs:
                fn(t)
            acc.append(time.perf_counter() - t0)
    mo, mt = statistics.median(ours), statistics.median(theirs)
    print(f"{len(outputs)} outputs, {args.repeats} interleaved repeats (median)")
    print(f"safebeal parse_plan : {mo * 1e3:8.1f} ms  ({mo / len(outputs) * 1e6:.1f} us/output)")
    print(f"upstream json.loads : {mt * 1e3:8.1f} ms  ({mt / len(outputs) * 1e6:.1f} us/output)")
    print(f"ratio ours/upstream : {mo / mt:.1f}x")


if __name__ == "__main__":
    main()
