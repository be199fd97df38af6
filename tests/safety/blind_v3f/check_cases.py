"""Check blind set F: schema, twin links, steps, catalogue ids, and that every plan executes in its scene.

Uses the scene adapter only (safebeal.scene); it never runs the safety detector.
Run from the repository root:  PYTHONPATH=src python tests/safety/blind_v3f/check_cases.py
Exit 0 when every check passes; otherwise one line per problem (file:line: id: problem) and exit 2.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KEYS = ["id", "scene", "plan", "label", "categories", "kinds", "hazard", "twin", "step", "source", "note"]
CATEGORIES = {"fire_heat", "electric_shock", "slip_trip_fall", "water_hazard", "breakage", "poisoning",
              "cut_injury", "food_safety"}
KINDS = {"process", "termination"}


def schema_problems(rows):
    """Yield (line, id, problem) for schema and link problems; rows are (line, dict)."""
    ids = {}
    for ln, r in rows:
        rid = r.get("id")
        if list(r.keys()) != KEYS:
            yield ln, rid, f"keys are {list(r.keys())}, expected {KEYS}"
            continue
        if rid in ids:
            yield ln, rid, f"duplicate id (also line {ids[rid]})"
        ids[rid] = ln
        if not isinstance(r["plan"], list) or not r["plan"] or not all(isinstance(x, str) for x in r["plan"]):
            yield ln, rid, "plan must be a non-empty list of script lines"
        if r["label"] not in ("safe", "unsafe"):
            yield ln, rid, f"label {r['label']!r}"
        if not set(r["categories"]) <= CATEGORIES or not set(r["kinds"]) <= KINDS:
            yield ln, rid, "unknown category or kind"
        if r["label"] == "safe" and (r["categories"] or r["kinds"] or r["hazard"] or r["step"] is not None):
            yield ln, rid, "a safe case has categories, kinds, hazard or step"
        if r["label"] == "unsafe" and not (r["categories"] and r["kinds"] and r["hazard"]):
            yield ln, rid, "an unsafe case needs categories, kinds and hazard"
        has_process = "process" in r["kinds"]
        if has_process != (r["step"] is not None):
            yield ln, rid, "step must be set exactly when kinds has 'process'"
        if r["step"] is not None and not (isinstance(r["step"], int) and 0 <= r["step"] < len(r["plan"])):
            yield ln, rid, f"step {r['step']!r} outside the plan"
        if not r["source"] or not r["note"]:
            yield ln, rid, "source and note must be non-empty"
    by_id = {r["id"]: r for _, r in rows if "id" in r}
    for ln, r in rows:
        t = r.get("twin")
        if t is None:
            continue
        o = by_id.get(t)
        if o is None:
            yield ln, r["id"], f"twin {t} does not exist"
        elif o.get("twin") != r["id"]:
            yield ln, r["id"], f"twin {t} does not link back"
        elif o["scene"] != r["scene"]:
            yield ln, r["id"], f"twin {t} is in another scene"
        elif {o["label"], r["label"]} != {"safe", "unsafe"}:
            yield ln, r["id"], f"twin {t} must have the opposite label"


def catalogue_problems(rows, path):
    import yaml
    cat = yaml.safe_load(path.read_text())
    hazards = {h["id"]: h for h in cat["hazards"]}
    for ln, r in rows:
        if r["hazard"] and r["hazard"] not in hazards:
            yield ln, r["id"], f"hazard {r['hazard']} not in {path.name}"
        elif r["hazard"] and r["id"] not in hazards[r["hazard"]]["cases"]:
            yield ln, r["id"], f"{path.name} does not list this case under {r['hazard']}"


def execution_problems(rows):
    from safebeal.scene import execute, load_scene, parse_script
    for ln, r in rows:
        tr = execute(load_scene(r["scene"]), parse_script("\n".join(r["plan"])))
        if not tr.executable:
            yield ln, r["id"], f"does not execute: {tr.error}"


def main(argv=None) -> int:
    path = HERE / "cases.jsonl"
    rows = []
    for ln, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                rows.append((ln, json.loads(line)))
            except json.JSONDecodeError as e:
                print(f"{path.name}:{ln}: not JSON: {e}")
                return 2
    problems = list(schema_problems(rows))
    problems += list(catalogue_problems(rows, HERE / "catalogue.yaml"))
    frozen = (HERE / "FROZEN.sha256")
    if frozen.exists():
        want = frozen.read_text().split()[0]
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if want != got:
            problems.append((0, "-", f"cases.jsonl sha256 {got} differs from FROZEN.sha256 {want}"))
    if not problems:
        problems += list(execution_problems(rows))
    for ln, rid, msg in problems:
        print(f"{path.name}:{ln}: {rid}: {msg}")
    if problems:
        return 2
    n_unsafe = sum(r["label"] == "unsafe" for _, r in rows)
    print(f"ok: {len(rows)} cases ({n_unsafe} unsafe, {len(rows) - n_unsafe} safe), all execute")
    return 0


if __name__ == "__main__":
    sys.exit(main())
