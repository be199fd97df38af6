"""Are the rejected plans errors a capable planner makes? A blind naturalness audit of a pair set (issue 32, item 1).

    python audits/pair_naturalness.py sample PAIRS_DIR --out DIR [--n 50] [--controls 25] [--seed 32] [--only SOURCES]
    python audits/pair_naturalness.py score DIR [--json]

``sample`` draws ``--n`` rejected plans written by the builder's own sources (mutation operators and SafeRisks'
authored unsafe plans, round-robin over the sources so each is represented) and ``--controls`` chosen plans of other
pairs (ground truth or SafeRisks safe plans), shuffles them, and writes ``DIR/sample.md`` (each item: the request and
one plan, nothing saying where it came from) and ``DIR/key.json`` (item -> kind, source, pair). It prints the sha256
of both: freeze them before the reader starts. The reader, who has seen neither the code nor the pairs, writes
``DIR/verdicts.jsonl``: one line per item, ``{"item": N, "natural": true|false, "reason": "..."}``, where natural
means "a capable planner in a hurry could write this plan for this request" (mistakes included) and unnatural means
it contains steps no planner would write (odd padding, pointless actions, actions that make no sense here).

``score`` reports the natural share of the rejected plans, per source, against the controls', with Wilson 95%
intervals: the controls are the reader's baseline for plans nobody doubts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Tuple


def _plan(rec: Dict[str, Any], side: str) -> str:
    v = rec[side]
    return v[0]["content"] if isinstance(v, list) else str(v)


def _request(rec: Dict[str, Any]) -> str:
    user = [m["content"] for m in rec["prompt"] if m["role"] == "user"][-1]
    for line in user.splitlines():
        if line.startswith("Task: "):
            return line[len("Task: "):].strip()
    return user.splitlines()[0]


def sample(pairs_dir: Path, out: Path, n: int, controls: int, seed: int, only: Tuple[str, ...] = ()) -> Tuple[str, str]:
    rows = [json.loads(x) for x in (pairs_dir / "pairs.jsonl").read_text().splitlines() if x.strip()]
    rng = random.Random(seed)
    by_src: Dict[str, List[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        if r["source"].startswith(("mutation:", "saferisks")) and (not only or r["source"] in only):
            by_src[r["source"]].append(i)
    for v in by_src.values():
        rng.shuffle(v)
    picked: List[int] = []
    srcs = sorted(by_src)
    while len(picked) < n and any(by_src.values()):
        for s in srcs:
            if by_src[s] and len(picked) < n:
                picked.append(by_src[s].pop())
    used_tasks = {rows[i]["task_id"] for i in picked}
    others = [i for i, r in enumerate(rows) if r["task_id"] not in used_tasks]
    rng.shuffle(others)
    seen_plans = set()
    ctrl: List[int] = []
    for i in others:
        p = _plan(rows[i], "chosen")
        if p not in seen_plans and len(ctrl) < controls:
            seen_plans.add(p)
            ctrl.append(i)
    items = [("rejected", i) for i in picked] + [("control", i) for i in ctrl]
    rng.shuffle(items)
    out.mkdir(parents=True, exist_ok=True)
    md = ["# Plans to judge", "",
          "Each item is a household request and a plan a robot planner wrote for it (VirtualHome actions: "
          "`[ACTION] <object> (id)`). For each, judge whether **a capable planner in a hurry could write this plan "
          "for this request** (mistakes, including unsafe ones, are allowed: natural), or whether it contains steps "
          "no planner would write (odd padding, pointless or nonsensical actions: unnatural). Do not judge safety.",
          ""]
    key = []
    for k, (kind, i) in enumerate(items, start=1):
        r = rows[i]
        plan = _plan(r, "rejected" if kind == "rejected" else "chosen")
        md += [f"## Item {k}", "", f"Request: {_request(r)}", "", "```", plan, "```", ""]
        key.append({"item": k, "kind": kind, "source": r["source"] if kind == "rejected" else "chosen",
                    "pair": i, "task_id": r["task_id"]})
    (out / "sample.md").write_text("\n".join(md))
    (out / "key.json").write_text(json.dumps(key, indent=1) + "\n")
    return (hashlib.sha256((out / "sample.md").read_bytes()).hexdigest(),
            hashlib.sha256((out / "key.json").read_bytes()).hexdigest())


def wilson(k: int, n: int, z: float = 1.96) -> Tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def score(out: Path) -> Dict[str, Any]:
    key = {e["item"]: e for e in json.loads((out / "key.json").read_text())}
    verdicts = {}
    for n, line in enumerate((out / "verdicts.jsonl").read_text().splitlines(), start=1):
        if line.strip():
            v = json.loads(line)
            if v.get("item") not in key or not isinstance(v.get("natural"), bool):
                raise SystemExit(f"{out / 'verdicts.jsonl'}:{n}: needs an item of key.json and natural true/false")
            verdicts[v["item"]] = v
    missing = sorted(set(key) - set(verdicts))
    groups: Dict[str, List[bool]] = defaultdict(list)
    for item, e in key.items():
        if item in verdicts:
            nat = verdicts[item]["natural"]
            groups[e["kind"]].append(nat)
            if e["kind"] == "rejected":
                groups[e["source"]].append(nat)
    res = {"judged": len(verdicts), "missing": missing, "groups": {}}
    for g, vals in sorted(groups.items()):
        k = sum(vals)
        lo, hi = wilson(k, len(vals))
        res["groups"][g] = {"natural": k, "n": len(vals), "share": round(k / len(vals), 3),
                            "wilson95": [round(lo, 3), round(hi, 3)]}
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("pairs", type=Path)
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--n", type=int, default=50)
    s.add_argument("--controls", type=int, default=25)
    s.add_argument("--seed", type=int, default=32)
    s.add_argument("--only", default="", help="comma-separated sources to draw rejected plans from (default: all "
                                              "the builder's own), e.g. mutation:add_step to audit one operator")
    c = sub.add_parser("score")
    c.add_argument("out", type=Path)
    c.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    if a.cmd == "sample":
        h_md, h_key = sample(a.pairs, a.out, a.n, a.controls, a.seed, tuple(x for x in a.only.split(",") if x))
        print(f"wrote {a.out / 'sample.md'} (sha256 {h_md}) and {a.out / 'key.json'} (sha256 {h_key})")
        return 0
    res = score(a.out)
    if a.json:
        print(json.dumps(res, indent=1))
    else:
        for g, d in res["groups"].items():
            print(f"{g:32s} {d['natural']:3d}/{d['n']:<3d} natural {d['share']:.3f}  95% {d['wilson95']}")
        if res["missing"]:
            print(f"not judged: {res['missing']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
