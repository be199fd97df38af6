"""Check blind hazard set D: schema, twin links, catalogue references, checksum, and that every plan executes.

Uses only the scene adapter (``safebeal.scene``); it never runs the safety detector.

    PYTHONPATH=src python tests/safety/blind_v3d/check_cases.py [--no-sim] [--no-freeze]

Exit 0 when everything holds, 2 with one line per problem (naming the file, line and case) otherwise.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases.jsonl"
CATALOGUE = HERE / "catalogue.yaml"
FROZEN = HERE / "FROZEN.sha256"

KEYS = ["id", "scene", "plan", "label", "categories", "kinds", "hazard", "twin", "step", "source", "note"]
CATEGORIES = {"fire_heat", "electric_shock", "slip_trip_fall", "water_hazard", "breakage", "poisoning",
              "cut_injury", "food_safety"}
KINDS = {"process", "termination"}


def load_cases(path: Path = CASES):
    """Return ``[(line_number, case)]``; raises ValueError naming file and line on bad JSON."""
    out = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            out.append((n, json.loads(raw)))
        except json.JSONDecodeError as e:
            raise ValueError(f"{path.name}:{n}: not JSON: {e.msg}") from None
    return out


def load_catalogue(path: Path = CATALOGUE):
    import yaml
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {h["id"]: h for h in data["hazards"]}


def schema_problems(cases, catalogue=None):
    """Every problem with the cases' fields, twins and catalogue references, one string each."""
    probs = []
    by_id = {}
    for n, c in cases:
        where = f"{CASES.name}:{n}: {c.get('id', '?')}"
        if not isinstance(c, dict) or list(c.keys()) != KEYS:
            probs.append(f"{where}: keys must be exactly {KEYS}")
            continue
        if c["id"] in by_id:
            probs.append(f"{where}: duplicate id")
        by_id[c["id"]] = (n, c)
        if not (isinstance(c["plan"], list) and c["plan"] and all(isinstance(s, str) for s in c["plan"])):
            probs.append(f"{where}: plan must be a non-empty list of script lines")
        if c["label"] not in ("safe", "unsafe"):
            probs.append(f"{where}: label {c['label']!r}")
        bad = set(c["categories"]) - CATEGORIES
        if bad:
            probs.append(f"{where}: unknown categories {sorted(bad)}")
        bad = set(c["kinds"]) - KINDS
        if bad:
            probs.append(f"{where}: unknown kinds {sorted(bad)}")
        if c["label"] == "safe":
            if c["categories"] or c["kinds"] or c["hazard"] is not None or c["step"] is not None:
                probs.append(f"{where}: a safe case has no categories, kinds, hazard or step")
        else:
            if not c["categories"] or not c["kinds"] or not c["hazard"]:
                probs.append(f"{where}: an unsafe case needs categories, kinds and hazard")
            if catalogue is not None and c["hazard"] not in catalogue:
                probs.append(f"{where}: hazard {c['hazard']!r} not in {CATALOGUE.name}")
        if "process" in c["kinds"]:
            if not isinstance(c["step"], int) or not 0 <= c["step"] < len(c["plan"]):
                probs.append(f"{where}: step must index the plan when kinds has process")
        elif c["step"] is not None:
            probs.append(f"{where}: step is set only when kinds has process")
        if not c["source"] or not c["note"]:
            probs.append(f"{where}: source and note are required")
    for cid, (n, c) in by_id.items():
        t = c["twin"]
        if t is None:
            continue
        where = f"{CASES.name}:{n}: {cid}"
        if t not in by_id:
            probs.append(f"{where}: twin {t} does not exist")
            continue
        other = by_id[t][1]
        if other["twin"] != cid:
            probs.append(f"{where}: twin {t} does not link back")
        if other["scene"] != c["scene"]:
            probs.append(f"{where}: twin {t} is in another scene")
        if other["label"] == c["label"]:
            probs.append(f"{where}: twin {t} has the same label")
    if catalogue is not None:
        for hid, h in catalogue.items():
            for cid in h.get("cases", []):
                if cid not in by_id:
                    probs.append(f"{CATALOGUE.name}: {hid}: case {cid} does not exist")
                elif by_id[cid][1]["hazard"] != hid:
                    probs.append(f"{CATALOGUE.name}: {hid}: case {cid} has hazard {by_id[cid][1]['hazard']}")
        used = {c["hazard"] for _, c in by_id.values() if c["hazard"]}
        for hid in used:
            listed = set(catalogue[hid].get("cases", [])) if hid in catalogue else set()
            missing = {cid for cid, (_, c) in by_id.items() if c["hazard"] == hid} - listed
            if missing:
                probs.append(f"{CATALOGUE.name}: {hid}: does not list {sorted(missing)}")
    return probs


def sim_problems(cases):
    """Run every plan in its scene with the scene adapter alone; one string per plan that does not execute."""
    from safebeal.scene import execute, parse_script
    probs = []
    for n, c in cases:
        try:
            tr = execute(c["scene"], parse_script("\n".join(c["plan"])))
        except Exception as e:  # a bad scene or script is a problem of this case, reported, not raised
            probs.append(f"{CASES.name}:{n}: {c['id']}: {type(e).__name__}: {e}")
            continue
        if not tr.executable:
            probs.append(f"{CASES.name}:{n}: {c['id']}: does not execute: {tr.error}")
    return probs


def freeze_problems():
    if not FROZEN.exists():
        return [f"{FROZEN.name}: missing"]
    want = FROZEN.read_text().split()[0]
    got = hashlib.sha256(CASES.read_bytes()).hexdigest()
    return [] if want == got else [f"{FROZEN.name}: cases.jsonl sha256 is {got}, frozen {want}"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-sim", action="store_true", help="skip re-running the plans")
    ap.add_argument("--no-freeze", action="store_true", help="skip the checksum check")
    args = ap.parse_args(argv)
    try:
        cases = load_cases()
        catalogue = load_catalogue()
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    probs = schema_problems(cases, catalogue)
    if not args.no_freeze:
        probs += freeze_problems()
    if not args.no_sim:
        probs += sim_problems(cases)
    for p in probs:
        print(p, file=sys.stderr)
    unsafe = sum(c["label"] == "unsafe" for _, c in cases)
    print(f"{len(cases)} cases ({unsafe} unsafe, {len(cases) - unsafe} safe): "
          f"{'OK' if not probs else f'{len(probs)} problem(s)'}")
    return 2 if probs else 0


if __name__ == "__main__":
    sys.exit(main())
