"""Check blind hazard set C: schema, twin links, catalogue, freeze hash, and that every plan executes.

Uses the scene adapter only (``safebeal.scene``); it never imports or runs the safety detector, so it can be
run by anyone without seeing (or influencing) a verdict.

    PYTHONPATH=src python tests/safety/blind_v3c/check_cases.py            # everything, ~10 s
    PYTHONPATH=src python tests/safety/blind_v3c/check_cases.py --no-sim   # schema, twins, catalogue, hash only

Prints one line per problem (``cases.jsonl:LINE: ID: message``) and a summary; exit 0 when clean, 1 otherwise,
2 when a file cannot be read.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import sys
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
KEYS = ["id", "scene", "plan", "label", "categories", "kinds", "hazard", "twin", "step", "source", "note"]
CATEGORIES = {"fire_heat", "electric_shock", "slip_trip_fall", "water_hazard", "breakage", "poisoning",
              "cut_injury", "food_safety"}
KINDS = {"process", "termination"}


def load_cases(path: Path) -> List[tuple]:
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append((n, json.loads(line)))
            except json.JSONDecodeError as e:
                out.append((n, e))
    return out


def catalogue_ids(path: Path) -> Dict[str, dict]:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {h["id"]: h for h in data["hazards"]}


def check_schema(cases: List[tuple], hazards: Dict[str, dict], fname: str) -> List[str]:
    errs: List[str] = []
    seen: Dict[str, int] = {}
    by_id = {}
    for n, c in cases:
        where = f"{fname}:{n}"
        if isinstance(c, Exception):
            errs.append(f"{where}: not JSON: {c}")
            continue
        if list(c.keys()) != KEYS:
            errs.append(f"{where}: keys {list(c.keys())} != {KEYS}")
            continue
        cid = c["id"]
        where = f"{where}: {cid}"
        if cid in seen:
            errs.append(f"{where}: duplicate id (first on line {seen[cid]})")
        seen[cid] = n
        by_id[cid] = (n, c)
        if not isinstance(c["scene"], str) or not c["scene"].split(":")[0] in ("activity", "home"):
            errs.append(f"{where}: scene must be activity:<id> or home:<seed>")
        if not (isinstance(c["plan"], list) and c["plan"] and all(isinstance(x, str) for x in c["plan"])):
            errs.append(f"{where}: plan must be a non-empty list of script lines")
        if c["label"] not in ("safe", "unsafe"):
            errs.append(f"{where}: label {c['label']!r}")
        bad = set(c["categories"]) - CATEGORIES
        if bad:
            errs.append(f"{where}: unknown categories {sorted(bad)}")
        bad = set(c["kinds"]) - KINDS
        if bad:
            errs.append(f"{where}: unknown kinds {sorted(bad)}")
        if c["label"] == "safe":
            if c["categories"] or c["kinds"] or c["hazard"] is not None or c["step"] is not None:
                errs.append(f"{where}: a safe case has empty categories/kinds and null hazard/step")
        else:
            if not c["categories"] or not c["kinds"]:
                errs.append(f"{where}: an unsafe case needs categories and kinds")
            if c["hazard"] not in hazards:
                errs.append(f"{where}: hazard {c['hazard']!r} is not in catalogue.yaml")
            elif cid not in hazards[c["hazard"]].get("cases", []):
                errs.append(f"{where}: catalogue entry {c['hazard']} does not list this case")
            if "process" in c["kinds"]:
                if not isinstance(c["step"], int) or not 0 <= c["step"] < len(c["plan"]):
                    errs.append(f"{where}: kinds has process, so step must index the plan (got {c['step']!r})")
            elif c["step"] is not None:
                errs.append(f"{where}: step is set only when kinds has process")
        if not c["source"] or not c["note"]:
            errs.append(f"{where}: source and note must not be empty")
    for cid, (n, c) in by_id.items():
        t = c["twin"]
        if t is None:
            continue
        where = f"{fname}:{n}: {cid}"
        if t not in by_id:
            errs.append(f"{where}: twin {t} does not exist")
            continue
        o = by_id[t][1]
        if o["twin"] != cid:
            errs.append(f"{where}: twin {t} does not link back")
        if o["scene"] != c["scene"]:
            errs.append(f"{where}: twin {t} is in another scene")
        if o["label"] == c["label"]:
            errs.append(f"{where}: twin {t} has the same label")
    return errs


def check_sim(cases: List[tuple], fname: str) -> List[str]:
    from safebeal.scene import execute, load_scene, parse_script

    errs = []
    for n, c in cases:
        if isinstance(c, Exception) or list(c.keys()) != KEYS:
            continue
        try:
            tr = execute(load_scene(c["scene"]), parse_script("\n".join(c["plan"])))
        except Exception as e:  # a bad scene spec or a syntax error: report, keep going
            errs.append(f"{fname}:{n}: {c['id']}: {type(e).__name__}: {e}")
            continue
        if not tr.executable:
            errs.append(f"{fname}:{n}: {c['id']}: does not execute: {tr.error}")
    return errs


def summary(cases: List[tuple]) -> str:
    cs = [c for _, c in cases if isinstance(c, dict)]
    uns = [c for c in cs if c.get("label") == "unsafe"]
    cats = collections.Counter(x for c in uns for x in c.get("categories", []))
    kinds = collections.Counter(c["scene"].split(":")[0] for c in cs)
    return (f"{len(cs)} cases: {len(uns)} unsafe, {len(cs) - len(uns)} safe; scenes {dict(kinds)}; "
            f"unsafe per category {dict(sorted(cats.items()))}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=HERE)
    ap.add_argument("--no-sim", action="store_true", help="skip re-running the plans in the simulator")
    a = ap.parse_args(argv)
    cases_path, cat_path, frozen = a.dir / "cases.jsonl", a.dir / "catalogue.yaml", a.dir / "FROZEN.sha256"
    try:
        cases = load_cases(cases_path)
        hazards = catalogue_ids(cat_path)
    except (OSError, KeyError, TypeError) as e:
        print(f"cannot read the set in {a.dir}: {e}")
        return 2
    errs = check_schema(cases, hazards, cases_path.name)
    used = {c["hazard"] for _, c in cases if isinstance(c, dict) and c.get("hazard")}
    for h in sorted(set(hazards) - used):
        errs.append(f"{cat_path.name}: hazard {h} is used by no case")
    if frozen.exists():
        want = frozen.read_text().split()[0]
        got = hashlib.sha256(cases_path.read_bytes()).hexdigest()
        if want != got:
            errs.append(f"{frozen.name}: sha256 of cases.jsonl is {got}, frozen {want}: the set changed after freezing")
    else:
        errs.append(f"{frozen.name}: missing")
    if not a.no_sim:
        errs += check_sim(cases, cases_path.name)
    for e in errs:
        print(e)
    print(summary(cases))
    print("OK" if not errs else f"{len(errs)} problem(s)")
    return 0 if not errs else 1


if __name__ == "__main__":
    sys.exit(main())
