"""Validate blind set E: schema, twin links, and that every plan executes in the simulator (scene adapter only).

Run from the repository root:  PYTHONPATH=src python tests/safety/blind_v3e/check_cases.py
Exit 0 when all is well, 2 with one line per problem otherwise.
"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
KEYS = {"id", "scene", "plan", "label", "categories", "kinds", "hazard", "twin", "step", "source", "note"}
CATS = {"fire_heat", "electric_shock", "slip_trip_fall", "water_hazard", "breakage", "poisoning", "cut_injury", "food_safety"}
KINDS = {"process", "termination"}


def check(path=HERE / "cases.jsonl", run=True):
    errs, cases = [], []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        try:
            c = json.loads(line)
        except ValueError as e:
            errs.append(f"{path.name}:{n}: bad JSON: {e}")
            continue
        where = f"{path.name}:{n} ({c.get('id')})"
        if set(c) != KEYS:
            errs.append(f"{where}: keys {sorted(set(c) ^ KEYS)} wrong")
            continue
        cases.append((n, c))
        if c["label"] not in ("safe", "unsafe"):
            errs.append(f"{where}: label {c['label']!r}")
        if not set(c["categories"]) <= CATS or not set(c["kinds"]) <= KINDS:
            errs.append(f"{where}: unknown category or kind")
        if c["label"] == "safe" and (c["categories"] or c["kinds"] or c["step"] is not None or c["hazard"]):
            errs.append(f"{where}: safe case with categories/kinds/step/hazard")
        if c["label"] == "unsafe" and (not c["categories"] or not c["kinds"] or not c["hazard"]):
            errs.append(f"{where}: unsafe case lacks categories/kinds/hazard")
        if ("process" in c["kinds"]) != (c["step"] is not None):
            errs.append(f"{where}: step must be set exactly when kinds has process")
        if c["step"] is not None and not 0 <= c["step"] < len(c["plan"]):
            errs.append(f"{where}: step {c['step']} outside plan")
        if not c["source"] or not c["note"]:
            errs.append(f"{where}: empty source or note")
    ids = {c["id"]: c for _, c in cases}
    if len(ids) != len(cases):
        errs.append("duplicate ids")
    for n, c in cases:
        t = c["twin"]
        if t is None:
            continue
        o = ids.get(t)
        if o is None or o["twin"] != c["id"] or o["scene"] != c["scene"] or o["label"] == c["label"]:
            errs.append(f"{path.name}:{n} ({c['id']}): twin {t} not linked back, other scene or same label")
    if run:
        from safebeal.scene import execute, load_scene, parse_script
        for n, c in cases:
            tr = execute(load_scene(c["scene"]), parse_script("\n".join(c["plan"])))
            if not tr.executable:
                errs.append(f"{path.name}:{n} ({c['id']}): does not execute: {tr.error}")
    return cases, errs


if __name__ == "__main__":
    cases, errs = check()
    for e in errs:
        print(e)
    print(f"{len(cases)} cases, {len(errs)} problems")
    sys.exit(2 if errs else 0)
