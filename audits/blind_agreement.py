"""Agreement of the safety detector with the blind golden set (tests/safety/blind/): the generalisation figure.

    python audits/blind_agreement.py                       # table of the figures
    python audits/blind_agreement.py --json out.json       # + every case's verdict
    python audits/blind_agreement.py --disagreements       # list the cases the detector gets wrong
    python audits/blind_agreement.py --fixes               # with the reviewed label fixes (label_fixes.yaml)
    python audits/blind_agreement.py --set tests/safety/blind_v3a   # another frozen set in the same format

The set was written by an evaluator who never read the rules, and frozen (FROZEN.sha256) before the detector
ran on it; this script refuses to run on a set whose checksum differs. Figures:

- verdict agreement: the detector's safe/unsafe verdict equals the label, over all cases;
- unsafe flagged (recall): unsafe cases the detector calls unsafe;
- category recall: over unsafe cases, the labelled categories the detector reports (micro-averaged);
- false alarms: safe cases the detector calls unsafe.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[1]
BLIND = ROOT / "tests" / "safety" / "blind"


def frozen_ok(folder: Path = BLIND) -> bool:
    want = (folder / "FROZEN.sha256").read_text().split()[0]
    have = hashlib.sha256((folder / "cases.jsonl").read_bytes()).hexdigest()
    return want == have


def load_cases(folder: Path = BLIND, fixes: bool = False) -> List[Dict[str, Any]]:
    """The frozen cases; with ``fixes``, the reviewed labels of ``label_fixes.yaml`` replace theirs."""
    cases = [json.loads(line) for line in (folder / "cases.jsonl").read_text().splitlines() if line.strip()]
    if fixes:
        import yaml

        by_id = {c["id"]: c for c in cases}
        for f in yaml.safe_load((folder / "label_fixes.yaml").read_text())["fixes"]:
            c = by_id[f["id"]]  # a fix for a case that does not exist is an error
            c.update(label=f["label"], categories=f["categories"], kinds=f["kinds"], fixed=f["reason"])
    return cases


def judge(cases: List[Dict[str, Any]], strict: bool = False) -> List[Dict[str, Any]]:
    from safebeal.safety import SafetyDetector
    from safebeal.scene import execute, load_scene, parse_script

    det = SafetyDetector(strict=strict, unknown_class="neutral")
    out = []
    for c in cases:
        traj = execute(load_scene(c["scene"]), parse_script("\n".join(c["plan"])))
        v = det.check(traj)
        out.append({"id": c["id"], "label": c["label"], "categories": sorted(c.get("categories") or []),
                    "executable": traj.executable, "safe": v.safe, "got_categories": sorted(v.categories()),
                    "rules": sorted({x.rule_id for x in v.violations}), "hazard": c.get("hazard"),
                    "note": c.get("note", "")})
    return out


def figures(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    unsafe = [r for r in rows if r["label"] == "unsafe"]
    safe = [r for r in rows if r["label"] == "safe"]
    agree = sum(1 for r in rows if (r["label"] == "safe") == r["safe"])
    flagged = sum(1 for r in unsafe if not r["safe"])
    cat_total = sum(len(r["categories"]) for r in unsafe)
    cat_hit = sum(len(set(r["categories"]) & set(r["got_categories"])) for r in unsafe)
    false_alarms = sum(1 for r in safe if not r["safe"])
    per_cat: Dict[str, List[int]] = {}
    for r in unsafe:
        for c in r["categories"]:
            hit, n = per_cat.get(c, [0, 0])
            per_cat[c] = [hit + (c in r["got_categories"]), n + 1]
    return {
        "cases": len(rows), "unsafe": len(unsafe), "safe": len(safe),
        "verdict_agreement": agree / len(rows) if rows else None,
        "unsafe_flagged": flagged / len(unsafe) if unsafe else None,
        "category_recall": cat_hit / cat_total if cat_total else None,
        "false_alarm_rate": false_alarms / len(safe) if safe else None,
        "category_recall_by_category": {c: {"hit": h, "n": n, "recall": h / n} for c, (h, n) in sorted(per_cat.items())},
        "not_executable": sum(1 for r in rows if not r["executable"]),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write the figures and every case's verdict here")
    ap.add_argument("--disagreements", action="store_true", help="print every case the detector gets wrong")
    ap.add_argument("--strict", action="store_true", help="strict attribution (every hazard at the end)")
    ap.add_argument("--fixes", action="store_true", help="apply the reviewed label fixes (label_fixes.yaml)")
    ap.add_argument("--set", dest="folder", type=Path, default=BLIND,
                    help="the set's folder (cases.jsonl and FROZEN.sha256); default tests/safety/blind")
    args = ap.parse_args(argv)
    folder = args.folder
    for name in ("cases.jsonl", "FROZEN.sha256") + (("label_fixes.yaml",) if args.fixes else ()):
        if not (folder / name).is_file():
            print(f"error: --set {folder}: no {name} there", file=sys.stderr)
            return 2
    if not frozen_ok(folder):
        print(f"error: {folder / 'cases.jsonl'} does not match FROZEN.sha256: the blind set was edited", file=sys.stderr)
        return 2
    rows = judge(load_cases(folder, fixes=args.fixes), strict=args.strict)
    f = figures(rows)
    print(f"blind set {folder.name}{' with label fixes' if args.fixes else ''}: {f['cases']} cases ({f['unsafe']} unsafe, {f['safe']} safe), "
          f"sha256 {(folder / 'FROZEN.sha256').read_text().split()[0][:16]}")
    pct = lambda x: "n/a" if x is None else f"{x:.1%}"  # noqa: E731 (a set of safe plans only has no recall)
    print(f"verdict agreement {pct(f['verdict_agreement'])}   unsafe flagged {pct(f['unsafe_flagged'])}   "
          f"category recall {pct(f['category_recall'])}   false alarms {pct(f['false_alarm_rate'])}   "
          f"not executable {f['not_executable']}")
    for c, d in f["category_recall_by_category"].items():
        print(f"  {c:16s} {d['hit']:3d}/{d['n']:3d}  {d['recall']:.1%}")
    if args.disagreements:
        for r in rows:
            if (r["label"] == "safe") != r["safe"] or (r["label"] == "unsafe" and not set(r["categories"]) <= set(r["got_categories"])):
                print(f"{r['id']}: label {r['label']} {r['categories']}  got {'safe' if r['safe'] else 'unsafe'} "
                      f"{r['got_categories']} {r['rules']}  [{r['hazard']}] {r['note']}")
    if args.json:
        args.json.write_text(json.dumps({"figures": f, "cases": rows}, indent=1))
    miss = Counter(r["hazard"] for r in rows if r["label"] == "unsafe" and r["safe"])
    if miss:
        print("missed unsafe cases by hazard:", ", ".join(f"{k} {v}" for k, v in miss.most_common(12)))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    raise SystemExit(main())
